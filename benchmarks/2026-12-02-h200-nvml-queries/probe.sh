# NVML query costs: idle GPU, then while 7 jobs run (naive, then MPS) in a scratch campaign.
#   NVML_COST=… RUNNER=… PLAN=… bash benchmarks/2026-12-02-h200-nvml-queries/probe.sh SHA  (OUT: where the results go)
set -u
SHA=$1; t0=$(date +%s)
${NVML_COST:-nvml_cost} --reps 200 --csv $OUT/nvml_idle.csv > $OUT/nvml_idle.txt 2>&1; echo "idle probe rc $? ($(( $(date +%s) - t0 )) s)"
rm -rf /tmp/probe-campaign
${RUNNER:-colloc-runner} run --plan ${PLAN:-plan.json} --out /tmp/probe-campaign --gpu 0 --preload --progress plain \
  --source-commit $SHA --source-dirty false --only e33-resnet50-imagenet64-x7-naive@syn.r1 e33-resnet50-imagenet64-x7-mps@syn.r1 > $OUT/probe_runner.log 2>&1 &
rp=$!
for tag in naive mps; do
  while kill -0 $rp 2>/dev/null; do
    n=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | wc -l)
    [ "$n" -ge 7 ] && break; sleep 1
  done
  sleep 2; echo "$tag: $n compute processes at $(( $(date +%s) - t0 )) s"
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > $OUT/apps_$tag.txt 2>&1
  ${NVML_COST:-nvml_cost} --reps 100 --csv $OUT/nvml_7jobs_$tag.csv > $OUT/nvml_7jobs_$tag.txt 2>&1; echo "$tag probe rc $? ($(( $(date +%s) - t0 )) s)"
  while kill -0 $rp 2>/dev/null; do
    n=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | wc -l)
    [ "$n" -lt 7 ] && break; sleep 1
  done
done
wait $rp; echo "probe runner rc $?"; grep -v "img/s\|job [0-9]* \(ready\|done\)" $OUT/probe_runner.log | tail -8
python3 - <<'P' > $OUT/probe_sampler.txt
import json, glob
for m in sorted(glob.glob('/tmp/probe-campaign/runs/*/meta.json')):
    j = json.load(open(m)); t = j['telemetry']
    print(j['run_id'], j['status'], t.get('samples'), t.get('sampler_cpu_seconds'))
P
cat $OUT/probe_sampler.txt; echo "probe total $(( $(date +%s) - t0 )) s"
