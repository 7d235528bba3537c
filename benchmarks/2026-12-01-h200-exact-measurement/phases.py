#!/usr/bin/env python3
"""Where each run's GPU time went, from the `phases` the runner records in meta.json
(protocol-2 runs of runner versions that record them). Standard library only.

    python3 phases.py CAMPAIGN_DIR [CAMPAIGN_DIR ...]

Per run: the runner's marks on its monotonic clock (mode set-up, to every job ready,
barrier, window, exit after the stop, teardown), the run's total and the time outside its
window; then the median and range per column, and the median of the jobs' own set-up and
warm-up from their `ready` events.
"""
import glob
import json
import os
import statistics
import sys

COLUMNS = ["mode_setup_seconds", "to_ready_seconds", "barrier_seconds", "window_seconds", "exit_seconds",
           "teardown_seconds", "total_seconds", "outside_window_seconds"]


def main(dirs):
    rows = []
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "runs", "*", "meta.json"))):
            with open(path, encoding="utf-8") as f:
                m = json.load(f)
            if m["status"] == "ok" and m.get("phases"):
                rows.append((m["run_id"], m["phases"]))
    head = ["run"] + [c.replace("_seconds", "") for c in COLUMNS] + ["setup/job", "warmup/job"]
    print("| " + " | ".join(head) + " |")
    print("|---" + "|---:" * (len(head) - 1) + "|")
    for run, p in rows:
        jobs = [j for j in p["jobs"] if j]
        cells = [f"{p[c]:.2f}" if p[c] is not None else "—" for c in COLUMNS]
        cells += [f"{statistics.median(j['setup_seconds'] for j in jobs):.2f}",
                  f"{statistics.median(j['warmup_seconds'] for j in jobs):.2f}"]
        print(f"| {run} | " + " | ".join(cells) + " |")
    summary = []
    for c in COLUMNS:
        v = [p[c] for _, p in rows if p[c] is not None]
        summary.append(f"{statistics.median(v):.2f} ({min(v):.2f}–{max(v):.2f})")
    jobs = [j for _, p in rows for j in p["jobs"] if j]
    summary += [f"{statistics.median(j['setup_seconds'] for j in jobs):.2f}",
                f"{statistics.median(j['warmup_seconds'] for j in jobs):.2f}"]
    print(f"| median (range) over {len(rows)} runs | " + " | ".join(summary) + " |")
    outside = sorted(p["outside_window_seconds"] for _, p in rows)
    print(f"\nGPU time outside the window: median {statistics.median(outside):.2f} s over {len(rows)} runs "
          f"(quartiles {outside[len(outside) // 4]:.2f} / {outside[(3 * len(outside)) // 4]:.2f} s); "
          f"preloaded: {sorted({p['preloaded'] for _, p in rows})}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
