"""Throughput of the training job with the runner's sampler off, at 1, 10 and 100 Hz, and the
sampler's own CPU time, from the campaign folders of this directory.

Each `ovh-<hz>-<round>/` holds one run of 1 x resnet50 (batch 128, synthetic data); its
throughput is the images of the iterations that ended inside the run's measurement window
(meta.json: release_mono .. window_end_mono) over the time from the release to the last such
end. `x7-<hz>/` holds 7 x resnet26 under naive collocation at that rate. The sampler's CPU
time per run is meta.json telemetry.sampler_cpu_seconds over the sampling time.

    python3 rates.py DIR
"""
import glob, json, os, statistics, sys

def runs(campaign):
    for meta_path in sorted(glob.glob(os.path.join(campaign, "runs", "*", "meta.json"))):
        yield os.path.dirname(meta_path), json.load(open(meta_path))

def job_throughput(run_dir, job, start, end):
    images, last = 0, None
    for line in open(os.path.join(run_dir, f"job-{job}.events.jsonl")):
        e = json.loads(line)
        if e.get("event") != "iterations":
            continue
        for end_us, n in zip(e["end_us"], e["images"]):
            t = e["base_mono"] + end_us / 1e6
            if start < t <= end:
                images += n
                last = t
    return images / (last - start)

def figures(campaign, workload):
    # The runner may have added this host's baseline of the workload (an exclusive run).
    (run_dir, meta), = [r for r in runs(campaign) if workload in r[1]["workload_id"]]
    assert meta["status"] == "ok", (campaign, meta["status"])
    start, end = meta["release_mono"], meta["window_end_mono"]
    jobs = len(meta["jobs"])
    ips = sum(job_throughput(run_dir, j, start, end) for j in range(jobs))
    t = meta["telemetry"]
    return ips, t, jobs

def main(root):
    by_rate = {}
    for d in sorted(glob.glob(os.path.join(root, "ovh-*"))):
        if not os.path.isdir(d):
            continue
        hz = float(os.path.basename(d).split("-")[1])
        ips, t, _ = figures(d, "resnet50")
        by_rate.setdefault(hz, []).append(ips)
        per = f", {1e3 * t['sampler_cpu_seconds'] / t['samples']:.1f} ms CPU per sample" if t["samples"] else ""
        print(f"{os.path.basename(d):<12} {hz:>5g} Hz  {ips:8.1f} img/s  {t['samples']:>5} samples, sampler CPU {t['sampler_cpu_seconds']:.3f} s{per}")
    off = statistics.median(by_rate[0.0])
    print()
    print("| sampler | images/s of the runs | median | ratio to off |")
    print("|---|---|---:|---:|")
    for hz in sorted(by_rate):
        v = by_rate[hz]
        name = "off" if hz == 0 else f"{hz:g} Hz"
        print(f"| {name} | {', '.join(f'{x:.1f}' for x in v)} | {statistics.median(v):.1f} | {statistics.median(v) / off:.4f} |")
    for d in sorted(glob.glob(os.path.join(root, "x7-*"))):
        if os.path.isdir(d):
            ips, t, jobs = figures(d, "x7-naive")
            secs = t["samples"] / t["rate_hz"]
            print(f"{os.path.basename(d)}: {jobs} x resnet26 naive, {ips:.1f} img/s in all, {t['samples']} samples at {t['rate_hz']:g} Hz, "
                  f"sampler CPU {t['sampler_cpu_seconds']:.2f} s = {1e3 * t['sampler_cpu_seconds'] / t['samples']:.1f} ms per sample")

main(sys.argv[1])
