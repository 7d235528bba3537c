# Median images/s of the sampled windows in each campaign dir ovh-<hz>-<i> under the given folder.
import glob, json, sys, statistics
rows = {}
for d in sorted(glob.glob(sys.argv[1] + "/ovh-*")):
    hz = d.rsplit("/", 1)[1].split("-")[1]
    for ev in glob.glob(d + "/runs/*/job-0.events.jsonl"):
        s = [json.loads(l) for l in open(ev) if '"sample"' in l]
        ips = sum(e["images"] for e in s) / sum(e["seconds"] for e in s)
        rows.setdefault(hz, []).append(ips)
        print(d, hz, round(ips, 1))
for hz, v in rows.items():
    print(f"telemetry {hz} Hz: median {statistics.median(v):.1f} img/s over {len(v)} runs {['%.1f' % x for x in v]}")
if "10" in rows and "0" in rows:
    print(f"ratio 10 Hz / off: {statistics.median(rows['10']) / statistics.median(rows['0']):.4f}")
