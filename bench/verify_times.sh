#!/usr/bin/env bash
# Seconds `raspc compile` takes on every program of programs/ at one maximum length (almost all
# of it verification: compiling itself takes milliseconds), wall clock and CPU, for one raspc or
# two back to back (before and after a change, so both see the same load).
#
#   bench/verify_times.sh RASPC [MAX_LEN] [RASPC_BEFORE]     # MAX_LEN defaults to 16
#   bench/verify_times.sh RASPC [MAX_LEN] threads            # one thread (before) against every core (after)
#   THREADS=1 bench/verify_times.sh RASPC                     # the verification's threads (default 0: every core)
#   REPEAT=3 bench/verify_times.sh RASPC 16 threads           # each compile 3 times, the least wall and CPU
#       (a shared machine's other load only ever adds time)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
after=$1
max_len=${2:-16}
before=${3:-}
threads=${THREADS:-0}
repeat=${REPEAT:-1}
before_threads=$threads
if [ "$before" = threads ]; then
  before=$after
  before_threads=1
  threads=0
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# wall and CPU seconds of a compile (the least of REPEAT runs, each), and its verification line
measure() {
  local best_wall="" best_cpu="" run wall user sys cpu
  for ((run = 0; run < repeat; run++)); do
    /usr/bin/time -f "%e %U %S" -o "$out/time" "$1" compile "$2" --max-len "$max_len" --threads "$3" \
      -o "$out/model.safetensors" > "$out/log" 2>&1 || true
    read -r wall user sys < <(tail -1 "$out/time")
    cpu=$(echo "$user + $sys" | bc)
    if [ -z "$best_wall" ] || [ "$(echo "$wall < $best_wall" | bc)" = 1 ]; then best_wall=$wall; fi
    if [ -z "$best_cpu" ] || [ "$(echo "$cpu < $best_cpu" | bc)" = 1 ]; then best_cpu=$cpu; fi
  done
  echo "$best_wall $best_cpu"
}
isa=$(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || { grep -qw avx2 /proc/cpuinfo && echo AVX2 || echo "neither AVX2 nor AVX-512"; })
describe_threads() { [ "$1" = 0 ] && echo "every core ($(nproc))" || echo "$1"; }
echo "max length $max_len; $(lscpu | sed -n 's/^Model name: *//p' | head -1), $isa, $(nproc) cores; verification threads: $(describe_threads "$threads")$([ -n "$before" ] && echo " (before: $(describe_threads "$before_threads"))"); the least of $repeat run(s) each; load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$before" ]; then
  printf "%-16s %15s %15s %8s  %s\n" program "before wall cpu" "after wall cpu" speedup "verification (after)"
else
  printf "%-16s %15s  %s\n" program "wall cpu" verification
fi
for path in "$root"/programs/*.rasp; do
  name=$(basename "$path" .rasp)
  if [ -n "$before" ]; then
    b=$(measure "$before" "$path" "$before_threads")
    a=$(measure "$after" "$path" "$threads")
    printf "%-16s %7.2f %7.2f %7.2f %7.2f %7.1fx  %s\n" "$name" $b $a "$(echo "${b%% *} / ${a%% *}" | bc -l)" \
      "$(grep -m1 '^verification:' "$out/log" || tail -1 "$out/log")"
  else
    a=$(measure "$after" "$path" "$threads")
    printf "%-16s %7.2f %7.2f  %s\n" "$name" $a "$(grep -m1 '^verification:' "$out/log" || tail -1 "$out/log")"
  fi
done
