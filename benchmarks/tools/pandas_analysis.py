#!/usr/bin/env python3
"""The aggregates of a protocol-2 campaign computed with pandas, as a user of the authors'
ecosystem would: `pd.read_csv` of every run's telemetry and process samples, the jobs' event
logs read line by line, numpy for the per-iteration crediting. It shares no code with
crates/analysis; `cargo xtask bench` times it beside our verify + analyse and checks that both
give the same numbers.

    python3 benchmarks/tools/pandas_analysis.py CAMPAIGN_DIR OUT.json

Per ok run, over the common window [release_mono, window_end_mono] of its meta.json:

  * each job's throughput: the images of its iterations credited to the window (an iteration
    covers (previous end, its end], the first from the release; one straddling an edge is
    credited pro rata in time) over the window up to its last iteration's end;
  * the aggregate throughput (their sum) and the aggregate ratio (STP: the sum of each job's
    throughput over the median throughput of its model alone, `exclusive` or else one job
    `naive`, on the same GPU);
  * of the whole-GPU telemetry rows inside the window: mean power, GPU utilisation and SM
    activity, peak memory used, and the energy (the counter's rise over the rows' span,
    scaled to the window);
  * each job's mean CPU use (in cores) from its process rows inside the window.

Then per workload the medians over its runs. Writes OUT.json ({"runs": {run_id: {...}},
"workloads": {id: {...}}}) and prints one line: `runs=N peak_kb=K seconds=S`.
"""
import json
import os
import resource
import sys
import time

import numpy as np
import pandas as pd


def credited(ends, images, t0, t1):
    """Images credited to [t0, t1] and the end of the measured interval, or None."""
    if len(ends) == 0 or ends[-1] <= t0 or t1 <= t0:
        return None
    starts = np.concatenate(([t0], ends[:-1]))
    a = np.maximum(starts, t0)
    b = np.minimum(ends, t1)
    length = ends - starts
    share = np.where(
        length > 0,
        np.clip((b - a) / np.where(length > 0, length, 1.0), 0.0, 1.0),
        ((ends > t0) & (ends <= t1)).astype(float),
    )
    # Iterations after the first that reaches t1 are not counted.
    reach = np.nonzero(ends >= t1)[0]
    if len(reach):
        share[reach[0] + 1:] = 0.0
    return float(np.sum(images * share)), min(t1, float(ends[-1]))


def job_iterations(path):
    ends, images = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if '"iterations"' not in line:
                continue
            e = json.loads(line)
            if e.get("event") != "iterations":
                continue
            n = min(len(e["end_us"]), len(e["images"]), len(e["data_wait_us"]))
            ends.append(e["base_mono"] + np.asarray(e["end_us"][:n], dtype=float) * 1e-6)
            images.append(np.asarray(e["images"][:n], dtype=float))
    if not ends:
        return np.empty(0), np.empty(0)
    return np.concatenate(ends), np.concatenate(images)


def run_values(run_dir, meta):
    t0, t1 = meta["release_mono"], meta["window_end_mono"]
    jobs = []
    for j in range(len(meta["jobs"])):
        ends, images = job_iterations(os.path.join(run_dir, f"job-{j}.events.jsonl"))
        c = credited(ends, images, t0, t1)
        jobs.append({"throughput": None if c is None else c[0] / (c[1] - t0)})

    tel = pd.read_csv(os.path.join(run_dir, "telemetry.csv.gz"))
    tel = tel[(tel["mono"] >= t0) & (tel["mono"] <= t1)]
    gpu = tel[(tel["instance"] < 0) | tel["instance"].isna()].sort_values("mono")
    # A row with some GPM metrics missing counts for none of them (as the analysis does).
    gpm = [c for c in ("sm_activity_pct", "sm_occupancy_pct", "tensor_activity_pct", "dram_bw_util_pct")
           if c in gpu.columns]
    if gpm:
        missing = gpu[gpm].isna()
        # A GPM column the file lacks is missing in every row.
        some_missing = missing.any(axis=1) | (len(gpm) < 4)
        gpu = gpu.copy()
        gpu.loc[some_missing & ~missing.all(axis=1), gpm] = np.nan
    out = {"jobs": jobs}
    for m in ("power_w", "gpu_util_pct", "sm_activity_pct"):
        v = gpu[m].mean()
        out[m] = None if pd.isna(v) else float(v)
    out["mem_used_bytes_max"] = None if gpu.empty else float(gpu["mem_used_bytes"].max())
    e = gpu[gpu["energy_j"].notna()]
    if len(e) >= 2 and e["mono"].iloc[-1] > e["mono"].iloc[0]:
        rise = e["energy_j"].iloc[-1] - e["energy_j"].iloc[0]
        out["energy_j"] = float(rise / (e["mono"].iloc[-1] - e["mono"].iloc[0]) * (t1 - t0))

    procs = pd.read_csv(os.path.join(run_dir, "processes.csv.gz"))
    procs = procs[(procs["mono"] >= t0) & (procs["mono"] <= t1)]
    cpu = procs.groupby("job")["cpu_pct"].mean()
    for j, job in enumerate(jobs):
        job["cpu_cores"] = float(cpu[j]) / 100.0 if j in cpu.index else None
    return out


def baseline_key(job, workload):
    return (job["model"], job["dataset"], job["batch_size"], workload["data"])


def main(campaign, out_path):
    start = time.monotonic()
    runs_dir = os.path.join(campaign, "runs")
    runs = {}
    for name in sorted(d for d in os.listdir(runs_dir) if not d.startswith(".")):
        run_dir = os.path.join(runs_dir, name)
        with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        if meta["status"] != "ok":
            continue
        v = run_values(run_dir, meta)
        v["_meta"] = meta
        runs[meta["run_id"]] = v

    # Baselines: per (model, dataset, batch, data) and GPU, the median over the runs alone.
    alone = {}
    for mode in ("exclusive", "naive"):
        for r in runs.values():
            w = r["_meta"]["workload"]
            if w["mode"] == mode and len(w["jobs"]) == 1 and r["jobs"][0]["throughput"] is not None:
                k = baseline_key(w["jobs"][0], w)
                if alone.get(k, (mode, []))[0] == mode:
                    alone.setdefault(k, (mode, []))[1].append(r)
    base = pd.DataFrame(
        [
            {"key": k, "uuid": r["_meta"]["gpu"]["uuid"], "tp": r["jobs"][0]["throughput"]}
            for k, (_, rs) in alone.items()
            for r in rs
        ]
    )
    per_host = base.groupby(["key", "uuid"])["tp"].median().to_dict() if len(base) else {}

    workload_of = {}
    for r in runs.values():
        meta = r.pop("_meta")
        w = meta["workload"]
        tps = [j["throughput"] for j in r["jobs"]]
        r["aggregate_throughput"] = sum(tps) if all(t is not None for t in tps) else None
        ratios = []
        for job, tp in zip(w["jobs"], tps):
            b = per_host.get((baseline_key(job, w), meta["gpu"]["uuid"]))
            ratios.append(None if b is None or tp is None else tp / b)
        r["aggregate_ratio"] = sum(ratios) if ratios and all(x is not None for x in ratios) else None
        workload_of[meta["run_id"]] = meta["workload_id"]

    frame = pd.DataFrame(
        [
            {"workload": workload_of[rid], "tp": r["aggregate_throughput"], "stp": r["aggregate_ratio"]}
            for rid, r in runs.items()
        ]
    )
    workloads = {}
    if len(frame):
        for wid, g in frame.groupby("workload"):
            tp, stp = g["tp"].dropna(), g["stp"].dropna()
            workloads[wid] = {
                "aggregate_throughput": float(tp.median()) if len(tp) else None,
                "aggregate_ratio": float(stp.median()) if len(stp) else None,
            }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"runs": runs, "workloads": workloads}, f, sort_keys=True)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"runs={len(runs)} peak_kb={peak_kb} seconds={time.monotonic() - start:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
