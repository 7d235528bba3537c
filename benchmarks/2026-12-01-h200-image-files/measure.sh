#!/usr/bin/env bash
# Generates cuts of the three stand-in image sets with workloads/datagen.py, timing the
# generation and a full verification, and measures their decode cost on this host
# (`datagen.py cost`: one core, and the paper's 4 loader workers).
#
#   benchmarks/2026-12-01-h200-image-files/measure.sh CACHE OUT [CIFAR10 IMAGENET64 IMAGENET]
#
# CACHE: where the sets are written (relative paths stay relative in the output); OUT: where
# each set's dataset.json and decode-cost.json are copied; then the fractions of each set
# (default 0.05 0.05 0.05). PYTHON picks the interpreter (default python3).
set -o pipefail
cache=${1:?CACHE}; out=${2:?OUT}
fractions=("${3:-0.05}" "${4:-0.05}" "${5:-0.05}")
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
datagen="$here/../../workloads/datagen.py"
mkdir -p "$out"
elapsed() { awk "BEGIN { printf \"%.2f\", $2 - $1 }"; }
date -u
echo "cores: $(nproc)"; uptime
"$py" "$here/../calibrate.py" --json "$out/calibrate.json" || exit 1
i=0
for name in cifar10 imagenet64 imagenet; do
  fraction=${fractions[$i]}; i=$((i + 1))
  t0=$EPOCHREALTIME
  dir=$("$py" "$datagen" generate --out "$cache" --name "$name" --fraction "$fraction") || exit 1
  t1=$EPOCHREALTIME
  echo "generate $name --fraction $fraction: $(elapsed "$t0" "$t1") s -> $dir ($(du -sh "$dir" | cut -f1))"
  t0=$EPOCHREALTIME
  "$py" "$datagen" verify "$dir" --full || exit 1
  t1=$EPOCHREALTIME
  echo "verify --full $name: $(elapsed "$t0" "$t1") s"
  "$py" "$datagen" cost "$dir" > /dev/null || exit 1
  cp "$dir/dataset.json" "$out/$name-dataset.json"
  cp "$dir/decode-cost.json" "$out/$name-decode-cost.json"
done
date -u
