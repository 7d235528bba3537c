#!/usr/bin/env python3
"""The aggregates of a protocol-2 campaign computed with polars' lazy API: the same per-run and
per-workload values as `benchmarks/tools/pandas_analysis.py` (its docstring says what they are).
Every ok run's event logs are scanned with `scan_ndjson` and its gzip-compressed telemetry and
process samples with `scan_csv`; the crediting of iterations to the window, the window's
telemetry and CPU sums, the same-host baselines and the medians are one lazy query each,
collected together. The `meta.json` files (one pretty-printed JSON document each, which
polars does not scan) are read with the json module. It shares no code with crates/analysis
nor with the other scripts; `cargo xtask bench` times it beside our verify + analyse and
checks that every engine gives the same numbers.

    python3 benchmarks/tools/polars_analysis.py CAMPAIGN_DIR OUT.json

Writes OUT.json ({"runs": {run_id: {...}}, "workloads": {id: {...}}}, the pandas script's
shape) and prints one line: `runs=N peak_kb=K seconds=S`. polars uses every core it is given.
"""
import gzip
import json
import os
import resource
import sys
import time

import polars as pl

GPM = ("sm_activity_pct", "sm_occupancy_pct", "tensor_activity_pct", "dram_bw_util_pct")


def load_runs(campaign):
    """The ok runs (one row each) and their jobs (one row per job, with its workload's job)."""
    runs_dir = os.path.join(campaign, "runs")
    runs, jobs = [], []
    for name in sorted(d for d in os.listdir(runs_dir) if not d.startswith(".")):
        run_dir = os.path.join(runs_dir, name)
        with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        if meta["status"] != "ok":
            continue
        w = meta["workload"]
        runs.append(
            {
                "dir": run_dir,
                "run_id": meta["run_id"],
                "workload_id": meta["workload_id"],
                "t0": meta["release_mono"],
                "t1": meta["window_end_mono"],
                "uuid": meta["gpu"]["uuid"],
                "mode": w["mode"],
                "wdata": w["data"],
                "wjobs": len(w["jobs"]),
                "njobs": len(meta["jobs"]),
            }
        )
        for j in range(len(meta["jobs"])):
            wj = w["jobs"][j] if j < len(w["jobs"]) else {}
            jobs.append(
                {
                    "dir": run_dir,
                    "job": j,
                    "f": os.path.join(run_dir, f"job-{j}.events.jsonl"),
                    "model": wj.get("model"),
                    "dataset": wj.get("dataset"),
                    "batch_size": wj.get("batch_size"),
                    "zipped": bool(wj),
                }
            )
    run_schema = {
        "dir": pl.String, "run_id": pl.String, "workload_id": pl.String, "t0": pl.Float64,
        "t1": pl.Float64, "uuid": pl.String, "mode": pl.String, "wdata": pl.String, "wjobs": pl.Int64,
        "njobs": pl.Int64,
    }
    job_schema = {
        "dir": pl.String, "job": pl.Int64, "f": pl.String, "model": pl.String, "dataset": pl.String,
        "batch_size": pl.Int64, "zipped": pl.Boolean,
    }
    return pl.DataFrame(runs, schema=run_schema).lazy(), pl.DataFrame(jobs, schema=job_schema).lazy()


def job_throughputs(runs, jobs, files):
    """Per job (dir, job): `tp`, its images credited to the window over the window's length.

    An iteration covers (previous end, its end], the first from the release; one straddling
    an edge counts pro rata in time; iterations after the first that reaches the window's end
    count for nothing. Iterations are ordered by their step (`first_step` + index), the order
    of the log. `images` is read as text and decoded: `window_end` events have a number there.
    """
    schema = {
        "event": pl.String, "first_step": pl.Int64, "base_mono": pl.Float64, "end_us": pl.List(pl.Float64),
        "images": pl.String, "data_wait_us": pl.List(pl.Float64),
    }
    n = pl.min_horizontal(pl.col("end_us").list.len(), pl.col("images").list.len(), pl.col("data_wait_us").list.len())
    it = (
        pl.scan_ndjson(files, schema=schema, include_file_paths="f")
        .filter(pl.col("event") == "iterations")
        .with_columns(pl.col("images").str.json_decode(pl.List(pl.Float64)))
        .with_columns(
            pl.col("end_us").list.head(n),
            pl.col("images").list.head(n),
            pl.int_ranges(pl.col("first_step"), pl.col("first_step") + n).alias("step"),
        )
        .explode(["end_us", "images", "step"])
        .join(jobs.select("f", "dir"), on="f")
        .join(runs.select("dir", "t0", "t1"), on="dir")
        .select("f", "t0", "t1", "step", (pl.col("base_mono") + pl.col("end_us") * 1e-6).alias("e"), pl.col("images"))
    )
    e, t0, t1, step = pl.col("e"), pl.col("t0"), pl.col("t1"), pl.col("step")
    start = e.shift(1).over("f", order_by="step").fill_null(t0)
    reach = pl.when(e >= t1).then(step).min().over("f")
    length = e - start
    share = (
        pl.when(reach.is_not_null() & (step > reach))
        .then(0.0)
        .when(length > 0)
        .then(((pl.min_horizontal(e, t1) - pl.max_horizontal(start, t0)) / length).clip(0.0, 1.0))
        .otherwise(((e > t0) & (e <= t1)).cast(pl.Float64))
    )
    per_job = it.group_by("f").agg(
        t0.first(),
        t1.first(),
        (pl.col("images") * share).sum().alias("credited"),
        e.sort_by(step).last().alias("last"),
    )
    last = pl.col("last")
    tp = (
        pl.when(last.is_null() | (last <= t0) | (t1 <= t0))
        .then(None)
        .otherwise(pl.col("credited") / (pl.min_horizontal(t1, last) - t0))
    )
    return jobs.join(per_job, on="f", how="left").select("dir", "job", tp.alias("tp"))


def header(path):
    """The column names of a gzip-compressed CSV file (its first line)."""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        return f.readline().rstrip("\r\n").split(",")


def csv_scan(files, types):
    """The rows of every CSV file in `files`: its path `f` and the columns of `types`, null
    where a file lacks one; one `scan_csv` per distinct header."""
    by_header = {}
    for f in files:
        by_header.setdefault(tuple(header(f)), []).append(f)
    parts = []
    for cols, group in by_header.items():
        present = {c: t for c, t in types.items() if c in cols}
        lf = pl.scan_csv(group, include_file_paths="f", schema_overrides=present)
        pick = [pl.col(c) if c in cols else pl.lit(None, t).alias(c) for c, t in types.items()]
        parts.append(lf.select("f", *pick))
    return pl.concat(parts, how="vertical")


def telemetry(runs, dirs):
    """Per run (dir): of the whole-GPU rows in the window, the means, peak memory and energy.

    A row with some GPM metrics missing counts for none of them; a GPM column a file lacks is
    missing in every row of it.
    """
    numeric = ("mono", "instance", "power_w", "energy_j", "gpu_util_pct", "mem_used_bytes") + GPM
    tel = csv_scan([os.path.join(d, "telemetry.csv.gz") for d in dirs], {c: pl.Float64 for c in numeric})
    gpm_ok = pl.all_horizontal(*[pl.col(c).is_not_null() for c in GPM])
    mono, energy = pl.col("mono"), pl.col("energy_j")
    rows = (
        tel.with_columns(pl.col("f").str.replace(r"/telemetry\.csv\.gz$", "").alias("dir"))
        .join(runs.select("dir", "t0", "t1"), on="dir")
        .filter((mono >= pl.col("t0")) & (mono <= pl.col("t1")))
        .filter((pl.col("instance") < 0) | pl.col("instance").is_null())
        .with_columns(pl.when(gpm_ok).then(pl.col("sm_activity_pct")).alias("sm_activity_pct"))
    )
    means = rows.group_by("dir").agg(
        pl.col("power_w").mean(),
        pl.col("gpu_util_pct").mean(),
        pl.col("sm_activity_pct").mean(),
        pl.col("mem_used_bytes").max().alias("mem_used_bytes_max"),
    )
    counter = (
        rows.filter(energy.is_not_null())
        .group_by("dir")
        .agg(
            pl.len().alias("n"),
            mono.min().alias("m0"),
            mono.max().alias("m1"),
            energy.sort_by(mono).first().alias("e0"),
            energy.sort_by(mono).last().alias("e1"),
            pl.col("t0").first(),
            pl.col("t1").first(),
        )
        .select(
            "dir",
            pl.when((pl.col("n") >= 2) & (pl.col("m1") > pl.col("m0")))
            .then((pl.col("e1") - pl.col("e0")) / (pl.col("m1") - pl.col("m0")) * (pl.col("t1") - pl.col("t0")))
            .alias("energy_j"),
        )
    )
    return means.join(counter, on="dir", how="left")


def processes(runs, dirs):
    """Per job (dir, job): `cpu_cores`, its mean CPU use in the window, in cores."""
    types = {"mono": pl.Float64, "job": pl.Int64, "cpu_pct": pl.Float64}
    procs = csv_scan([os.path.join(d, "processes.csv.gz") for d in dirs], types)
    return (
        procs.with_columns(pl.col("f").str.replace(r"/processes\.csv\.gz$", "").alias("dir"))
        .join(runs.select("dir", "t0", "t1"), on="dir")
        .filter((pl.col("mono") >= pl.col("t0")) & (pl.col("mono") <= pl.col("t1")) & pl.col("job").is_not_null())
        .group_by("dir", "job")
        .agg((pl.col("cpu_pct").mean() / 100.0).alias("cpu_cores"))
    )


def aggregates(runs, jobs):
    """Per run the aggregate throughput and ratio (STP); per workload their medians.

    A job's baseline is the median throughput, on the same GPU, of the runs of its model
    (model, dataset, batch, data) alone: `exclusive` runs where there are any for the model,
    else one-job `naive` runs.
    """
    key = ["model", "dataset", "batch_size", "wdata"]
    with_run = jobs.join(runs.select("dir", "uuid", "mode", "wdata", "wjobs"), on="dir")
    alone = with_run.filter(
        (pl.col("job") == 0)
        & pl.col("mode").is_in(["exclusive", "naive"])
        & (pl.col("wjobs") == 1)
        & pl.col("tp").is_not_null()
    )
    chosen = alone.group_by(key).agg(
        pl.when((pl.col("mode") == "exclusive").any())
        .then(pl.lit("exclusive"))
        .otherwise(pl.lit("naive"))
        .alias("mode")
    )
    base = alone.join(chosen, on=[*key, "mode"]).group_by([*key, "uuid"]).agg(pl.col("tp").median().alias("base"))
    per_job = with_run.join(base, on=[*key, "uuid"], how="left")
    per_job = per_job.with_columns((pl.col("tp") / pl.col("base")).alias("ratio"))
    zipped = pl.col("zipped")
    run_agg = per_job.group_by("dir").agg(
        pl.when(pl.col("tp").is_null().any()).then(None).otherwise(pl.col("tp").sum()).alias("aggregate_throughput"),
        pl.when(zipped.any() & ~(zipped & pl.col("ratio").is_null()).any())
        .then(pl.col("ratio").filter(zipped).sum())
        .alias("aggregate_ratio"),
    )
    run_agg = (
        runs.select("dir", "run_id", "workload_id", "njobs")
        .join(run_agg, on="dir", how="left")
        .with_columns(
            # A run without jobs: the sum of no throughputs is 0, and there is no ratio.
            pl.when(pl.col("njobs") == 0)
            .then(0.0)
            .otherwise(pl.col("aggregate_throughput"))
            .alias("aggregate_throughput")
        )
    )
    workload_agg = run_agg.group_by("workload_id").agg(
        pl.col("aggregate_throughput").median(), pl.col("aggregate_ratio").median()
    )
    return run_agg, workload_agg


def as_json(job_rows, gpu, run_agg, workload_agg):
    """The pandas script's JSON shape, from the collected frames."""
    jobs = {}
    for r in job_rows.sort("dir", "job").iter_rows(named=True):
        jobs.setdefault(r["dir"], []).append({"throughput": r["tp"], "cpu_cores": r["cpu_cores"]})
    gpu = {r["dir"]: r for r in gpu.iter_rows(named=True)}
    runs = {}
    for r in run_agg.iter_rows(named=True):
        g = gpu.get(r["dir"], {})
        v = {
            "jobs": jobs.get(r["dir"], []),
            "aggregate_throughput": r["aggregate_throughput"],
            "aggregate_ratio": r["aggregate_ratio"],
        }
        for m in ("power_w", "gpu_util_pct", "sm_activity_pct", "mem_used_bytes_max"):
            v[m] = g.get(m)
        if g.get("energy_j") is not None:
            v["energy_j"] = g["energy_j"]
        runs[r["run_id"]] = v
    workloads = {
        r["workload_id"]: {"aggregate_throughput": r["aggregate_throughput"], "aggregate_ratio": r["aggregate_ratio"]}
        for r in workload_agg.iter_rows(named=True)
    }
    return {"runs": runs, "workloads": workloads}


def main(campaign, out_path):
    start = time.monotonic()
    runs, jobs = load_runs(campaign)
    dirs = runs.select("dir").collect()["dir"].to_list()
    files = jobs.select("f").collect()["f"].to_list()
    if dirs:
        if files:
            tp = job_throughputs(runs, jobs, files)
        else:
            tp = jobs.select("dir", "job", pl.lit(None, pl.Float64).alias("tp"))
        job_rows = jobs.join(tp, on=["dir", "job"], how="left")
        job_rows = job_rows.join(processes(runs, dirs), on=["dir", "job"], how="left")
        job_rows, gpu = pl.collect_all([job_rows, telemetry(runs, dirs)])
        run_agg, workload_agg = pl.collect_all(aggregates(runs, job_rows.lazy()))
        out = as_json(job_rows, gpu, run_agg, workload_agg)
    else:
        out = {"runs": {}, "workloads": {}}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, sort_keys=True)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"runs={len(out['runs'])} peak_kb={peak_kb} seconds={time.monotonic() - start:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
