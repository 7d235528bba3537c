#!/usr/bin/env python3
"""Independent check of protocol-2 runs: from the raw traces only (meta.json and the jobs'
event logs), each job's throughput over the common window [release_mono, window_end_mono],
the iterations straddling an edge credited pro rata (the first iteration spans release ->
its end), compared with the analysis' results (runs_json output) and with the shipped
protocol-1 aggregates.

    python3 recompute.py CAMPAIGN_DIR ANALYSIS.json SHIPPED.json

Standard library only; written apart from crates/analysis (it shares no code with it).
"""
import json
import os
import sys


def job_iterations(path):
    ends, images = [], []
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            if e["event"] == "iterations":
                ends += [e["base_mono"] + u / 1e6 for u in e["end_us"]]
                images += e["images"]
    return ends, images


def credited(ends, images, t0, t1):
    total, prev = 0.0, t0
    for end, img in zip(ends, images):
        lo, hi = max(prev, t0), min(end, t1)
        if end > prev and hi > lo:
            total += img * (hi - lo) / (end - prev)
        prev = end
    return total


def main(campaign, analysis_path, shipped_path):
    analysis = {r["run_id"]: r for r in json.load(open(analysis_path))}
    shipped = {r["workload_id"]: r for r in json.load(open(shipped_path)) if r["status"] == "ok"}
    rows, worst_tp, worst_iv = [], 0.0, 0.0
    runs = os.path.join(campaign, "runs")
    for run in sorted(d for d in os.listdir(runs) if not d.startswith(".")):
        meta = json.load(open(os.path.join(runs, run, "meta.json")))
        if meta["status"] != "ok":
            continue
        t0, t1 = meta["release_mono"], meta["window_end_mono"]
        a = analysis[run]
        agg = 0.0
        for j in range(len(meta["jobs"])):
            ends, images = job_iterations(os.path.join(runs, run, f"job-{j}.events.jsonl"))
            assert ends[0] > t0 and ends[-1] >= t1, (run, j, "records do not cover the window")
            tp = credited(ends, images, t0, t1) / (t1 - t0)
            aj = a["jobs"][j]
            frm, to = aj["measured_over"]
            worst_iv = max(worst_iv, abs(frm - t0), abs(to - t1))
            worst_tp = max(worst_tp, abs(aj["throughput"] / tp - 1))
            agg += tp
        v1 = shipped.get(meta["workload_id"])
        v1_agg = v1["aggregate_throughput"] if v1 else None
        rows.append((meta["workload_id"], len(meta["jobs"]), t1 - t0, agg, a["aggregate_throughput"], v1_agg))
    print("| workload | jobs | window s | v2 aggregate img/s (recomputed) | v2 (analysis) | v1 shipped | v2/v1 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for w, n, secs, agg, an, v1 in rows:
        ratio = f"{agg / v1:.3f}" if v1 else "-"
        v1s = f"{v1:.1f}" if v1 else "-"
        print(f"| {w} | {n} | {secs:.3f} | {agg:.1f} | {an:.1f} | {v1s} | {ratio} |")
    print(f"\nlargest |measured interval - common window| edge: {worst_iv * 1e3:.6f} ms")
    print(f"largest relative difference, analysis vs recomputation, per job: {worst_tp:.2e}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
