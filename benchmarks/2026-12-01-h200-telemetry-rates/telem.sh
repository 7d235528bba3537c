# Telemetry cost on this host: one resnet50 job with the sampler off, 1, 10 and 100 Hz,
# alternated (ROUNDS rounds), then 7 resnet26 jobs at 10 and 100 Hz (the sampler's CPU time),
# then the authors' telemetry processes for 7 jobs. Traces go to /tmp/telem (and into $OUT/telem.tar.gz when OUT is set).
#   RUNNER=colloc-runner PLAN=plan.json bash benchmarks/2026-12-01-h200-telemetry-rates/telem.sh SHA DIRTY ROUNDS
set -u
SHA=$1; DIRTY=$2; ROUNDS=$3
t0=$(date +%s); D=/tmp/telem; rm -rf $D; mkdir -p $D
nvidia-smi --query-gpu=index,name,uuid,driver_version,mig.mode.current --format=csv > $D/gpu.txt 2>&1
R() { if [ $(( $(date +%s) - t0 )) -gt ${STOP:-380} ]; then echo "$1 not run: time"; return; fi
  ${RUNNER:-colloc-runner} run --plan ${PLAN:-plan.json} --out $D/$1 --gpu 0 --preload --progress plain \
  --source-commit $SHA --source-dirty $DIRTY --telemetry-hz $2 --only "$3" > $D/$1.log 2>&1
  echo "$1 rc $? $(grep -o 'sampler CPU [0-9.]* s ([0-9.]*% of one core)' $D/$1.log | head -1) $(( $(date +%s) - t0 )) s"; }
for i in $(seq 1 $ROUNDS); do for hz in 0 1 10 100; do
  R ovh-$hz-$i $hz 'e33-resnet50-imagenet64-x1-exclusive@syn.r1'
done; done
for hz in 10 100; do R x7-$hz $hz 'e33-resnet26-cifar10-x7-naive@syn.r1'; done
python3 benchmarks/2026-12-01-h200-telemetry-rates/authors.py 30 | tee $D/authors.txt
if [ -n "${OUT:-}" ]; then tar czf $OUT/telem.tar.gz -C /tmp telem; fi
echo "total $(( $(date +%s) - t0 )) s"
