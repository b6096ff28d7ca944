#!/usr/bin/env bash
# Seconds `raspc compile` takes on every program of programs/ at one maximum length (almost all
# of it verification: compiling itself takes milliseconds), wall clock and CPU, for one raspc or
# two back to back (before and after a change, so both see the same load).
#
#   bench/verify_times.sh RASPC [MAX_LEN] [RASPC_BEFORE]     # MAX_LEN defaults to 16
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
after=$1
max_len=${2:-16}
before=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# wall and CPU seconds of one compile, and its verification line
measure() {
  /usr/bin/time -f "%e %U %S" -o "$out/time" "$1" compile "$2" --max-len "$max_len" -o "$out/model.safetensors" \
    > "$out/log" 2>&1 || true
  read -r wall user sys < <(tail -1 "$out/time")
  echo "$wall $(echo "$user + $sys" | bc)"
}
echo "max length $max_len; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$before" ]; then
  printf "%-16s %15s %15s %8s  %s\n" program "before wall cpu" "after wall cpu" speedup "verification (after)"
else
  printf "%-16s %15s  %s\n" program "wall cpu" verification
fi
for path in "$root"/programs/*.rasp; do
  name=$(basename "$path" .rasp)
  if [ -n "$before" ]; then
    b=$(measure "$before" "$path")
    a=$(measure "$after" "$path")
    printf "%-16s %7.2f %7.2f %7.2f %7.2f %7.1fx  %s\n" "$name" $b $a "$(echo "${b%% *} / ${a%% *}" | bc -l)" \
      "$(grep -m1 '^verification:' "$out/log" || tail -1 "$out/log")"
  else
    a=$(measure "$after" "$path")
    printf "%-16s %7.2f %7.2f  %s\n" "$name" $a "$(grep -m1 '^verification:' "$out/log" || tail -1 "$out/log")"
  fi
done
