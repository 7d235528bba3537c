#!/usr/bin/env python3
"""The table of fuzz runs from libFuzzer's logs (standard library): per log under logs/,
the target, seconds asked, executions, executions per second, coverage (edges) and
features at the start and at the end, inputs added, peak RSS and crashes.
Usage: python3 benchmarks/2026-12-01-fuzz/figures.py [LOG...]"""

import pathlib
import re
import sys


def figures(path):
    text = path.read_text(errors="replace")
    stat = dict(re.findall(r"^stat::(\w+):\s+(\d+)", text, re.M))
    inited = re.search(r"INITED cov: (\d+) ft: (\d+) corp: (\d+)", text)
    done = re.findall(r"^#(\d+)\s+(?:DONE|pulse|NEW|REDUCE)\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", text, re.M)
    secs = re.search(r"-max_total_time=(\d+)", text)
    crashes = len(re.findall(r"^(==\d+== ERROR|thread '.*' panicked|.*deadly signal)", text, re.M))
    last = done[-1] if done else ("?", "?", "?", "?", "?")
    return {
        "run": path.stem,
        "seconds": secs.group(1) if secs else "?",
        "execs": stat.get("number_of_executed_units", last[0]),
        "exec/s": stat.get("average_exec_per_sec", "?"),
        "cov start": inited.group(1) if inited else "?",
        "cov end": last[1],
        "ft start": inited.group(2) if inited else "?",
        "ft end": last[2],
        "corpus": f"{inited.group(3) if inited else '?'} → {last[3]} ({last[4]})",
        "rss MB": stat.get("peak_rss_mb", "?"),
        "crashes": crashes,
    }


def main():
    here = pathlib.Path(__file__).parent
    logs = [pathlib.Path(p) for p in sys.argv[1:]] or sorted(p for p in (here / "logs").glob("*.log") if not p.name.startswith("merge-"))
    rows = [figures(p) for p in logs]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "|".join("---" if k == "run" else "---:" for k in keys) + "|")
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
