# The real subset of `cargo xtask smoke --gpu` on this host, with the runner of this tree
# (the host has no cargo); traces to /tmp/smoke (and $OUT/smoke.tar.gz when OUT is set) for `compare`.
#   RUNNER=colloc-runner PLAN=plan.json bash benchmarks/2026-12-01-h200-smoke/smoke.sh SHA DIRTY
set -u
SHA=$1; DIRTY=$2
t0=$(date +%s)
rm -rf /tmp/smoke && mkdir -p /tmp/smoke
timeout -s INT 300 ${RUNNER:-colloc-runner} run --plan ${PLAN:-plan.json} --out /tmp/smoke/gpu-h200-quick --gpu 0 --preload \
  --progress plain --source-commit $SHA --source-dirty $DIRTY \
  --only 'e33-resnet26-cifar10-x1-exclusive@syn.r1' 'e33-resnet26-cifar10-x7-naive@syn.r1' 'e33-resnet26-cifar10-x7-mps@syn.r1' 'e33-resnet26-cifar10-x1-mpslim7g@syn.r1' 'e33-resnet26-cifar10-x1-mig7g@syn.r1' \
  > /tmp/smoke/runner.log 2>&1
echo "smoke runner rc $?"; grep -v "img/s\|job [0-9]* \(ready\|done\)" /tmp/smoke/runner.log | tail -12
(cd /tmp/smoke/gpu-h200-quick && sha256sum -c SHA256SUMS > /tmp/smoke/sums.txt 2>&1; echo "smoke sha256sum rc $?")
if [ -n "${OUT:-}" ]; then tar czf $OUT/smoke.tar.gz -C /tmp smoke; fi
echo "smoke total $(( $(date +%s) - t0 )) s"
