# The sampler's CPU with 7 jobs (7 x resnet50, ImageNet 64 px, batch 128, synthetic data), naive
# then MPS, in a scratch campaign; each run's meta.json has telemetry.samples and
# telemetry.sampler_cpu_seconds.
#   RUNNER=colloc-runner PLAN=plan.json bash benchmarks/2026-12-02-h200-sampler-paced/probe.sh SHA
# (plan.json: `cargo run -q -p colloc-plan --example plan_json -- h200 > plan.json`)
set -u
SHA=$1; t0=$(date +%s); D=${DIR:-/tmp/probe-campaign}
rm -rf $D
${RUNNER:-colloc-runner} run --plan ${PLAN:-plan.json} --out $D --gpu 0 --preload --progress plain \
  --no-host-baselines --source-commit $SHA --source-dirty false \
  --only e33-resnet50-imagenet64-x7-naive@syn.r1 e33-resnet50-imagenet64-x7-mps@syn.r1 > $D.log 2>&1
echo "runner rc $?"; grep "telemetry:\|: ok\|failed" $D.log
python3 - "$D" <<'P'
import json, glob, sys
for m in sorted(glob.glob(sys.argv[1] + '/runs/*/meta.json')):
    j = json.load(open(m)); t = j['telemetry']
    n, cpu = t['samples'], t['sampler_cpu_seconds']
    print(f"{j['run_id']} {j['status']}: {n} samples, sampler CPU {cpu:.2f} s, {1000 * cpu / n:.2f} ms a sample")
P
echo "total $(( $(date +%s) - t0 )) s"
