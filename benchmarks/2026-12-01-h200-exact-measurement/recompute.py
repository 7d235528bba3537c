#!/usr/bin/env python3
"""Independent check of a protocol-2 campaign against its tables, from the raw traces only
(each run's meta.json and its jobs' event logs). Standard library; shares no code with
crates/analysis.

    python3 recompute.py CAMPAIGN_DIR TABLES_DIR

TABLES_DIR holds the CSV tables `cargo xtask reproduce --campaign … --out …` wrote
(homogeneous.csv, mixes.csv, baselines.csv). Per ok run and job:

  * the measured interval is the workload's common window [release_mono, window_end_mono]
    of meta.json, and the job's iteration records reach from before its end to past it;
  * throughput = images credited to the window / its length; an iteration covers
    (previous end, its end], the first one from the release; one straddling an edge is
    credited pro rata in time;
  * 95% interval by batch means: k = min(10, N // 5) equal parts of the window (N: the
    iterations ending in it; none when k < 4), each part's throughput credited the same way,
    half-width = t(0.975, k-1) * sd / sqrt(k), relative to the mean;
  * the baseline of a job: the median throughput of the `ok` runs of its model alone
    (same model, dataset, batch, data source; `exclusive`, else one job `naive`) on the same
    GPU (UUID); STP = sum of throughput / baseline, ANTT = mean of baseline / throughput,
    fairness = lowest normalised throughput / highest.

Then every value is printed at the tables' precision and compared with the table's cell
(one repetition per workload here, so a workload's median is its run's value). Prints one
line per checked cell that disagrees, and a summary; exits 1 on any disagreement.
"""
import csv
import json
import math
import os
import statistics
import sys

T975 = {3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def load_run(run_dir):
    with open(os.path.join(run_dir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    jobs = []
    for j in range(len(meta["jobs"])):
        ends, images = [], []
        with open(os.path.join(run_dir, f"job-{j}.events.jsonl"), encoding="utf-8") as f:
            for line in f:
                e = json.loads(line)
                if e["event"] == "iterations":
                    ends += [e["base_mono"] + u / 1e6 for u in e["end_us"]]
                    images += e["images"]
        jobs.append((ends, images))
    return meta, jobs


def credited(ends, images, t0, lo, hi):
    """Images of iterations (prev end, end] inside [lo, hi]; the first starts at t0."""
    total, prev = 0.0, t0
    for end, img in zip(ends, images):
        a, b = max(prev, lo), min(end, hi)
        if end > prev and b > a:
            total += img * (b - a) / (end - prev)
        prev = end
    return total


def interval(ends, images, t0, t1):
    n = sum(1 for e in ends if t0 <= e <= t1)
    k = min(10, n // 5)
    if k < 4:
        return None
    parts = [(t0 + (t1 - t0) * i / k, t1 if i == k - 1 else t0 + (t1 - t0) * (i + 1) / k) for i in range(k)]
    rates = [credited(ends, images, t0, lo, hi) / (hi - lo) for lo, hi in parts]
    mean = sum(rates) / k
    sd = math.sqrt(sum((r - mean) ** 2 for r in rates) / (k - 1))
    return T975[k - 1] * sd / math.sqrt(k) / mean


def mode_label(w):
    mode, n = w["mode"], len(w["jobs"])
    if mode == "exclusive":
        return "alone"
    if mode == "mps":
        return "MPS"
    if mode == "naive":
        return "naive"
    if mode == "mps-limited":
        cls = w["jobs"][0]["mps_limits"]["stands_in_for"].split(".")[0]
        return f"MPS-limited {cls}" + (f"×{n}" if n > 1 else "")
    return mode


def key(job, w):
    return (job["model"], job["dataset"], job["batch_size"], w["data"])


def main(campaign, tables):
    runs_dir = os.path.join(campaign, "runs")
    runs = []
    worst_edge = 0.0
    for name in sorted(d for d in os.listdir(runs_dir) if not d.startswith(".")):
        meta, jobs = load_run(os.path.join(runs_dir, name))
        if meta["status"] != "ok":
            continue
        t0, t1 = meta["release_mono"], meta["window_end_mono"]
        w = meta["workload"]
        per_job = []
        for j, (ends, images) in enumerate(jobs):
            assert ends and ends[0] > t0 and ends[-1] >= t1, (name, j, "the records do not cover the window")
            tp = credited(ends, images, t0, t0, t1) / (t1 - t0)
            per_job.append({"tp": tp, "ci": interval(ends, images, t0, t1), "key": key(w["jobs"][j], w)})
        runs.append({"name": name, "meta": meta, "w": w, "uuid": meta["gpu"]["uuid"], "jobs": per_job})

    # Baselines per (key, host), and pooled.
    base_runs = {}
    for mode in ("exclusive", "naive"):
        for r in runs:
            w = r["w"]
            if w["mode"] == mode and len(w["jobs"]) == 1:
                k = r["jobs"][0]["key"]
                if base_runs.get(k, (mode, []))[0] == mode:
                    base_runs.setdefault(k, (mode, []))[1].append(r)
    per_host = {}
    for k, (_, rs) in base_runs.items():
        for r in rs:
            per_host.setdefault((k, r["uuid"]), []).append(r["jobs"][0]["tp"])
    per_host = {k: statistics.median(v) for k, v in per_host.items()}
    pooled = {k: statistics.median(r["jobs"][0]["tp"] for r in rs) for k, (_, rs) in base_runs.items()}

    cells = {}  # (table, row key, column) -> our printed value
    cross = 0
    for r in runs:
        w = r["w"]
        norm = []
        for j in r["jobs"]:
            b = per_host.get((j["key"], r["uuid"]))
            if b is None:
                b, cross = pooled[j["key"]], cross + 1
            norm.append(j["tp"] / b)
        agg = sum(j["tp"] for j in r["jobs"])
        cis = [j["ci"] for j in r["jobs"] if j["ci"] is not None]
        ci = f"{100 * statistics.median(cis):.1f}" if cis else ""
        stp = sum(norm)
        antt = sum(1 / x for x in norm) / len(norm)
        fair = min(norm) / max(norm)
        if w["form"]["kind"] == "mix":
            row = (w["label"], w["data"])
            cells[("mixes", row, "MPS (×) median")] = f"{stp:.2f}"
            cells[("mixes", row, "MPS 95% CI half-width (%) median")] = ci
        else:
            j0 = w["jobs"][0]
            row = (str(w["experiment"]), j0["model"], w["data"], str(len(w["jobs"])), mode_label(w))
            cells[("homogeneous", row, "Aggregate throughput (img/s) median")] = f"{agg:.0f}"
            cells[("homogeneous", row, "95% CI half-width (%) median")] = ci
            cells[("homogeneous", row, "STP (×) median")] = f"{stp:.2f}"
            cells[("homogeneous", row, "ANTT (×) median")] = f"{antt:.2f}"
            cells[("homogeneous", row, "Fairness (×) median")] = f"{fair:.2f}"
    for k, (mode, rs) in base_runs.items():
        row = (k[0], k[1], str(k[2]), k[3])
        cells[("baselines", row, "Throughput (img/s) median")] = f"{pooled[k]:.0f}"
        cis = [r["jobs"][0]["ci"] for r in rs if r["jobs"][0]["ci"] is not None]
        cells[("baselines", row, "95% CI half-width (%) median")] = f"{100 * statistics.median(cis):.1f}" if cis else ""

    def table(name, keyf):
        with open(os.path.join(tables, f"{name}.csv"), encoding="utf-8", newline="") as f:
            return {keyf(row): row for row in csv.DictReader(f)}

    printed = {
        "homogeneous": table("homogeneous", lambda r: (r["Exp."], r["Model"], r["Data"], r["Jobs"], r["Mode"])),
        "mixes": table("mixes", lambda r: (r["Mix"], r["Data"])),
        "baselines": table("baselines", lambda r: (r["Model"], r["Dataset"], r["Batch"], r["Data"])),
    }
    bad = 0
    for (t, row, col), ours in sorted(cells.items()):
        cell = printed[t].get(row, {}).get(col)
        if cell is None:
            print(f"{t} {row} {col}: not in the table (ours {ours})")
            bad += 1
        elif cell.rstrip("†").strip() != ours:
            print(f"{t} {row} {col}: table {cell!r}, recomputed {ours!r}")
            bad += 1
    print(f"{len(runs)} ok runs, {sum(len(r['jobs']) for r in runs)} jobs; {len(cells)} table cells checked, "
          f"{bad} disagree; {cross} job(s) divided by another host's baseline; "
          f"hosts: {sorted({r['uuid'] for r in runs})}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
