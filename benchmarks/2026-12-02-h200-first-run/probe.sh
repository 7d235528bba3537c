#!/usr/bin/env bash
# Does the first run after the data set is written train slower? Four runs alone, back to back.
set -u
start=$(date +%s)
nvidia-smi --query-gpu=uuid --format=csv,noheader | tee "$OUT/probe.txt"
python3 workloads/datagen.py generate --out .cache/datasets --name cifar10 --fraction 1 2>&1 | tail -1
echo "datagen $(( $(date +%s) - start )) s" | tee -a "$OUT/probe.txt"
common=(--plan .measure/plan-epochs.json --out /tmp/probe --gpu 0 --preload --source-commit 2f99aa2d72d2a0eb446ea99a0aab6a81eb7c5bb6 --source-dirty false --progress plain --no-host-baselines --only e33-resnet26-cifar10-x1-exclusive@gen)
.measure/colloc-runner run "${common[@]}" --time-budget 70 2>&1 | grep -E "ok \(|stopped" | tee -a "$OUT/probe.txt"
.measure/colloc-runner run "${common[@]}" --force --time-budget 60 2>&1 | grep -E "ok \(|stopped" | tee -a "$OUT/probe.txt"
python3 - <<'PY' | tee -a "$OUT/probe.txt"
import json,glob
for d in sorted(glob.glob('/tmp/probe/runs/*'), key=lambda d: json.load(open(d+'/meta.json'))['started_at']):
    m=json.load(open(d+'/meta.json'))
    ev=[json.loads(l) for l in open(d+'/job-0.events.jsonl')]
    we=[e for e in ev if e['event']=='window_end'][0]; rd=[e for e in ev if e['event']=='ready'][0]
    print(d.split('/')[-1], m['started_at'], 'img/s %.0f' % (we['images']/we['seconds']), 'warm-up %.1f s' % rd['warmup_seconds'])
PY
tar czf "$OUT/probe.tar.gz" -C /tmp probe
