#!/usr/bin/env python3
"""Where a run's GPU time goes, from a campaign's shipped traces: per `ok` run, the time
from the run's start to the first job's spawn, to every job's `ready`, the measurement
window, and the time after the window to the run's end. Standard library only.

    python3 benchmarks/2026-12-01-h200-iteration-timing/phase-times.py [CAMPAIGN_DIR]

CAMPAIGN_DIR defaults to data/h200-quick of this repository. Boundaries (all on the host of
the run; wall seconds unless said otherwise):

  t_start    meta.json `started_at` (RFC 3339, ms): the runner's wall clock when it began
             the run, before the trace directory, the job files and the mode (MPS daemon)
  t_spawn    min over jobs of meta.json `jobs[].started_wall`: the first job process spawned
  t_hello    max over jobs of the `hello` event's `wall`: the last interpreter to start
  t_ready    max over jobs of the `ready` event's `wall`: every job built and warmed up
  t_release  meta.json `release_mono` (the runner's CLOCK_MONOTONIC when it wrote `release`
             to the jobs), on the wall clock through the wall - mono offset of the jobs'
             own events (the same host clock: Python's time.monotonic is CLOCK_MONOTONIC)
  t_wend     max over jobs of the `window_end` event's `wall`: the last job's window closed
  t_exit     max over jobs of meta.json `jobs[].ended_wall`: the last job reaped
  t_end      meta.json `ended_at` (RFC 3339, ms): written after the telemetry sampler and
             the mode's teardown (MPS quit) stopped

Phases (columns of the tables):
  mode+spawn       t_spawn - t_start (trace directory, job files, MPS daemon start)
  interp           t_hello - t_spawn (the last interpreter up to its first event)
  to-ready         t_ready - t_start: everything before the barrier
  setup/job        median over the run's jobs of `ready.setup_seconds` (from `hello` to the
                   start of warm-up: imports, model build, data preparation)
  import+init/job  median over jobs of `versions` wall - `hello` wall: PyTorch and timm
                   imported and the first CUDA queries made (device name, cuDNN version)
  warmup/job       median over jobs of `ready.warmup_seconds` (warm-up iterations, synchronised)
  barrier          t_release - t_ready (the runner's 20 ms poll)
  window           t_wend - t_release
  exit             t_exit - t_wend (memory and end events, interpreter and CUDA exit, reaping)
  teardown         t_end - t_exit (telemetry stop, MPS quit, meta.json)
  after            t_end - t_wend = exit + teardown
  total            t_end - t_start
  outside          total - window: the run's GPU time outside its measurement window
Between runs: gap = next run's t_start - this run's t_end (the runner's bookkeeping).
"""

import datetime
import glob
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def rfc3339(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def events(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run_phases(run_dir):
    with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    start, end = rfc3339(meta["started_at"]), rfc3339(meta["ended_at"])
    if meta["status"] != "ok":
        return meta, start, end, None
    logs = [events(os.path.join(run_dir, f"job-{j['index']}.events.jsonl")) for j in meta["jobs"]]

    def last(name):
        return max(e["wall"] for log in logs for e in log if e["event"] == name)

    offsets = [e["wall"] - e["mono"] for log in logs for e in log]
    release = meta["release_mono"] + statistics.median(offsets)
    spawn = min(j["started_wall"] for j in meta["jobs"])
    exit_ = max(j["ended_wall"] for j in meta["jobs"])
    ready, wend = last("ready"), last("window_end")
    readies = [e for log in logs for e in log if e["event"] == "ready"]
    imports = []
    for log in logs:
        first = {}
        for e in log:
            first.setdefault(e["event"], e)
        imports.append(first["versions"]["wall"] - first["hello"]["wall"])
    window = wend - release
    p = {
        "mode+spawn": spawn - start,
        "interp": last("hello") - spawn,
        "to-ready": ready - start,
        "setup/job": statistics.median(e["setup_seconds"] for e in readies),
        "import+init/job": statistics.median(imports),
        "warmup/job": statistics.median(e["warmup_seconds"] for e in readies),
        "barrier": release - ready,
        "window": window,
        "exit": exit_ - wend,
        "teardown": end - exit_,
        "after": end - wend,
        "total": end - start,
        "outside": (end - start) - window,
        "offset-spread": max(offsets) - min(offsets),
    }
    return meta, start, end, p


COLUMNS = ["mode+spawn", "interp", "to-ready", "setup/job", "import+init/job", "warmup/job", "barrier", "window",
           "exit", "teardown", "after", "total", "outside"]


def fmt(values):
    values = sorted(values)
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.2f}"
    return f"{med:.2f} ({values[0]:.2f}–{values[-1]:.2f})"


def table(title, groups):
    print(f"\n## {title}\n")
    print("| group | runs | " + " | ".join(COLUMNS) + " |")
    print("|---|---:|" + "---:|" * len(COLUMNS))
    for key in sorted(groups, key=lambda k: (str(type(k)), k)):
        rows = groups[key]
        print(f"| {key} | {len(rows)} | " + " | ".join(fmt([r[c] for r in rows]) for c in COLUMNS) + " |")


def main(argv):
    campaign = argv[1] if len(argv) > 1 else os.path.join(REPO, "data", "h200-quick")
    runs = []
    for meta_path in sorted(glob.glob(os.path.join(campaign, "runs", "*", "meta.json"))):
        runs.append(run_phases(os.path.dirname(meta_path)))
    if not runs:
        print(f"no runs under {campaign}", file=sys.stderr)
        return 1
    ok = [(m, p) for m, _, _, p in runs if p is not None]
    print(f"# Phase times of campaign {os.path.basename(os.path.normpath(campaign))}")
    print(f"\n{len(runs)} runs, {len(ok)} ok (the others ran no job to the window and are left out). "
          "Seconds: median (min–max). Boundaries: see this script's docstring.")
    print("Largest spread of a run's wall - mono offsets over its events: "
          f"{max(p['offset-spread'] for _, p in ok) * 1e3:.2f} ms.")
    by_mode, by_jobs, by_data, both = {}, {}, {}, {}
    for m, p in ok:
        n = len(m["jobs"])
        data = "generated" if m["workload_id"].endswith("@gen") else m["workload"]["data"]
        by_mode.setdefault(m["mode"], []).append(p)
        by_jobs.setdefault(n, []).append(p)
        by_data.setdefault(data, []).append(p)
        both.setdefault(f"{m['mode']} ×{n}", []).append(p)
    table("Per mode", by_mode)
    table("Per job count", by_jobs)
    table("Per data source", by_data)
    table("Per mode and job count", both)
    table("All ok runs", {"all": [p for _, p in ok]})

    outside = sorted(p["outside"] for _, p in ok)
    window = sum(p["window"] for _, p in ok)
    total = sum(p["total"] for _, p in ok)
    timed = sorted(runs, key=lambda r: r[1])
    gaps = [b[1] - a[2] for a, b in zip(timed, timed[1:])]
    # Longer gaps (20 s and more here) fall between invocations of the runner, not inside one.
    inner = [g for g in gaps if g < 1]
    print("\n## Summary\n")
    print(f"- GPU time outside the window per ok run: median {statistics.median(outside):.2f} s "
          f"(range {outside[0]:.2f}–{outside[-1]:.2f} s, quartiles "
          f"{statistics.quantiles(outside, n=4)[0]:.2f}/{statistics.quantiles(outside, n=4)[2]:.2f} s).")
    print(f"- Summed over the {len(ok)} ok runs: {total:.0f} s of runs, {window:.0f} s in windows "
          f"({100 * window / total:.1f}%), {total - window:.0f} s outside.")
    longer = sorted(g for g in gaps if g >= 1)
    print(f"- Between consecutive runs (next t_start - t_end, any status): {len(inner)} gaps under 1 s, "
          f"median {statistics.median(inner):.3f} s, max {max(inner):.3f} s, sum {sum(inner):.2f} s; "
          f"{len(longer)} longer gaps ({longer[0]:.0f}–{longer[-1]:.0f} s), between invocations of the "
          "runner, are left out.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
