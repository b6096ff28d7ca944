#!/usr/bin/env bash
# raspc's runtime and trainer benches and PyTorch on the same workloads (bench/torch_peer.py), in
# one run, and the ratios: only figures from the same run on the same machine compare. The run is
# ROUNDS rounds (default 3), each raspc's benches then PyTorch's, and each figure is its median
# over them (measured once, a second a figure, PyTorch's batched forward read 167k to 213k tokens/s
# in three runs within three minutes); the rounds alternate, so a clock that moves reaches both sides.
#
#   bench/peers.sh [BUILD]       # BUILD: the build folder (default build), with runtime_bench and train_bench
#   PYTHON=/path/to/python bench/peers.sh build-dev    # a Python with torch (default: .interop-venv's)
#   SECONDS_PER_FIGURE=2 STEPS=300 bench/peers.sh      # longer measurements (defaults 1 and 200)
#   ROUNDS=5 bench/peers.sh                            # more rounds (default 3)
#   ISA=avx2 bench/peers.sh build-avx2                 # the AVX2 row on an AVX-512 machine: raspc's
#       kernels capped (RASPC_MAX_ISA; build BUILD with CMAKE_CXX_FLAGS=-mno-avx512f for the rest of
#       its code) and PyTorch's too (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
python=${PYTHON:-$root/.interop-venv/bin/python}
seconds=${SECONDS_PER_FIGURE:-1}
steps=${STEPS:-200}
rounds=${ROUNDS:-3}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "peers.sh: ROUNDS is '$rounds'; it must be a whole number of at least 1" >&2; exit 1; }
for bench in runtime_bench train_bench; do
  [ -x "$build/$bench" ] || { echo "peers.sh: $build/$bench not found (cmake --build $build --target $bench)" >&2; exit 1; }
done
"$python" -c 'import torch' 2>/dev/null || { echo "peers.sh: $python has no torch (scripts/setup-interop.sh makes a venv with it, or set PYTHON)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
isa=$(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || { grep -qw avx2 /proc/cpuinfo && echo AVX2 || echo "neither AVX2 nor AVX-512"; })
case "${ISA:-}" in
  "") ;;
  avx2)
    export RASPC_MAX_ISA=avx2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
    isa="AVX2 (capped on a machine with $isa: RASPC_MAX_ISA=avx2; torch ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2)" ;;
  *) echo "peers.sh: ISA is '$ISA'; the only cap is avx2 (unset: what the machine has)" >&2; exit 1 ;;
esac
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $isa, $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "threads: 1 for every figure of both (train_bench's last line: every core), torch.set_num_threads(1); build: $(grep -m1 '^CMAKE_CXX_FLAGS:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2-) $(grep -m1 '^CMAKE_CXX_FLAGS_RELEASE' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2-) $(grep -m1 '^RASPC_NATIVE' "$build/CMakeCache.txt" 2>/dev/null)"
echo "compiler: $(${CXX:-c++} --version | head -1); $("$python" --version)"
for round in $(seq 1 "$rounds"); do
  echo
  echo "round $round of $rounds"
  "$build/runtime_bench" "$seconds" | tee "$out/runtime_$round.txt"
  "$build/train_bench" "$steps" | tee "$out/train_$round.txt"
  "$python" "$root/bench/torch_peer.py" --seconds "$seconds" --steps "$steps" --json-out "$out/torch_$round.json"
done
echo
"$python" "$root/bench/torch_peer.py" --summarize "$out" --rounds "$rounds"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
