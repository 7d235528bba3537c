#!/usr/bin/env bash
# The same 24 simulated runs (resnet26 alone, batch 128, the quick protocol at time scale
# 0.05: about 1.1 s each) on 1 GPU, on 4 simulated GPUs of one host, and through a real
# single-node Slurm (4 GPUs as GRES, 4 tasks at once). Run from the repository root, as
# root (the Slurm harness starts munged, slurmctld and slurmd); prints one line per way.
set -euo pipefail
cargo build -q --release -p colloc-runner
runner=target/release/colloc-runner
work=$(mktemp -d)
cargo run -q -p colloc-plan --example plan_json -- sim-smoke > "$work/sim-smoke.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
p = json.load(open(f"{w}/sim-smoke.json"))
base = next(x for x in p["workloads"] if x["id"] == "e33-resnet26-cifar10-x1-exclusive@syn")
ws = []
for i in range(24):
    x = json.loads(json.dumps(base)); x["id"] = f"e33-w{i:02d}-x1-exclusive@syn"; x["repetitions"] = 1; ws.append(x)
p["workloads"] = ws; p["campaign"] = "scale-out"
json.dump(p, open(f"{w}/plan.json", "w"))
PY
bash crates/runner/tests/slurm/install.sh >/dev/null
bash crates/runner/tests/slurm/up.sh "$work/slurm" >/dev/null
export SLURM_CONF="$work/slurm/slurm.conf"
trap 'bash crates/runner/tests/slurm/down.sh "$work/slurm" >/dev/null; rm -rf "$work"' EXIT
for rep in 1 2; do
  for how in "--gpu 0" "--gpus 0,1,2,3" "--executor slurm --max-parallel 4"; do
    rm -rf "$work/campaign"
    t0=$(date +%s.%N)
    $runner run --plan "$work/plan.json" --out "$work/campaign" --simulate --time-scale 0.05 \
      --progress quiet --no-host-baselines $how > "$work/log" 2>&1
    t1=$(date +%s.%N)
    (cd "$work/campaign" && sha256sum --quiet -c SHA256SUMS)
    printf '%-36s %6.2f s  %s\n' "$how" "$(echo "$t1 - $t0" | bc)" "$(grep -o '[0-9]* made now: [0-9]* ok' "$work/log")"
  done
done
