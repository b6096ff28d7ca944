#!/usr/bin/env bash
# The growth table of bench/RESULTS.md ("Long contexts"): parameters and FLOPs per token of every
# program of programs/ at maximum lengths 16, 64, 256 and 1,024 (--no-verify: the sizes, not the
# verification; a program's header decides --causal). Usage: bench/long_contexts.sh [RASPC] [SECONDS]
# with RASPC the binary to measure (default build/raspc) and SECONDS the limit on one compile.
set -u
raspc=${1:-build/raspc}
limit=${2:-120}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| program | 16 | 64 | 256 | 1,024 |"
echo "|---|---|---|---|---|"
for file in "$here"/programs/*.rasp; do
  name=$(basename "$file" .rasp)
  causal=()
  grep -q '^# causal: yes' "$file" && causal=(--causal)
  row="| $name"
  for n in 16 64 256 1024; do
    out=$(timeout "$limit" "$raspc" compile "$file" "${causal[@]}" --max-len "$n" --no-verify \
          -o "$work/model.safetensors" 2>&1)
    status=$?
    if [ $status -eq 0 ]; then
      cell=$(echo "$out" | sed -n 's/^parameters: \([0-9,]*\); FLOPs per token: \([0-9,]*\).*/\1 \/ \2/p')
    elif [ $status -eq 124 ]; then
      cell="over ${limit} s"
    elif echo "$out" | grep -q "combinations at --max-len"; then
      cell="refused (combinations)"  # "this s-op's value set cannot be enumerated: its inputs ... take more than"
    elif echo "$out" | grep -q "more than --max-parameters"; then
      cell="refused (budget)"
    elif echo "$out" | grep -q "float32"; then
      cell="refused (float32)"
    else
      cell="refused ($(echo "$out" | grep -m1 'error:' | sed 's/.*error: //' | cut -c1-40)...)"
    fi
    row="$row | $cell"
  done
  echo "$row |"
done
