#!/bin/sh
# Compiled against trained, for the programs of issue 5, with one set of training settings:
#
#   bench/compare_all.sh [RASPC] [OUT_DIR]
#
# RASPC defaults to build/raspc, OUT_DIR to bench/compare. Writes OUT_DIR/<program>.{md,json,svg,curves.svg}
# and OUT_DIR/README.md (every table, with the command and settings); progress goes to stderr.
# Vocabulary and causal mode come from each program's header. About 8 minutes on two shared cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
raspc=$(realpath "${1:-$here/../build/raspc}")
out=$(realpath -m "${2:-$here/compare}")
# From the repository root, so messages and reports name programs/NAME.rasp.
cd "$here/.."
settings="--max-len 8 --train-len 1-6 --steps 1500 --batch 32 --lr 5e-3 --weight-decay 0.1 --eval-every 100 --held-out 128 --seed 1 --stop-at-perfect"
mkdir -p "$out"
index="$out/README.md.tmp"
{
  echo "# Compiled against trained: raspc compare"
  echo
  echo "Produced by \`bench/compare_all.sh\` on $(date -u +%Y-%m-%d) ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
  echo "Every program was run as"
  echo
  echo "    raspc compare programs/NAME.rasp $settings -o bench/compare/NAME"
  echo
  echo "Vocabulary and mode come from each program's header; the compiled arm is compile_program's model"
  echo "(LayerNorm, GELU). Held-out inputs come from a fixed seed and are never trained on; the accuracy"
  echo "at the training lengths is token / sequence accuracy; \"to 99%\" / \"to 100%\" are the first"
  echo "held-out evaluations (every 100 steps) reaching that token accuracy, with training time."
  echo
} > "$index"
for name in hist reverse sort double_hist most_freq dyck1 aab; do
  echo "== $name" >&2
  # shellcheck disable=SC2086
  "$raspc" compare "programs/$name.rasp" $settings -o "$out/$name" > /dev/null
  cat "$out/$name.md" >> "$index"
  echo >> "$index"
done
mv "$index" "$out/README.md"
