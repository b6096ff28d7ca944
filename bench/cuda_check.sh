#!/usr/bin/env bash
# The CUDA check in one command, for a machine with an NVIDIA GPU and the CUDA toolkit:
# configures and builds raspc with CUDA (only the two targets it needs), runs the CPU/CUDA parity
# test (tests/cuda) and the throughput bench (bench/cuda_bench.cpp), and prints the bench's table
# last. Well under 10 minutes on an H200 with 16 cores, build included.
#
#   bench/cuda_check.sh                 build in build-cuda-check/, GPU architecture 90 (H100/H200)
#   CUDA_ARCH=80 JOBS=8 bench/cuda_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-cuda-check}
arch=${CUDA_ARCH:-90}
jobs=${JOBS:-16}
export PATH="$PATH:/usr/local/cuda/bin"

start=$(date +%s)
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRASPC_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  > "$build/configure.log"
if ! grep -q "raspc: CUDA backend ON" "$build/configure.log"; then
  echo "cuda_check: CMake found no CUDA compiler (nvcc); install the CUDA toolkit or put nvcc on PATH" >&2
  exit 1
fi
cmake --build "$build" -j"$jobs" --target test_cuda cuda_bench
echo "cuda_check: built in $(( $(date +%s) - start )) s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

set +e
"$build/test_cuda"
status=$?
set -e
if [ "$status" -eq 77 ]; then
  echo "cuda_check: test_cuda skipped itself: no usable GPU" >&2
  exit 1
elif [ "$status" -ne 0 ]; then
  echo "cuda_check: the CPU/CUDA parity test FAILED (exit $status)" >&2
  exit "$status"
fi
echo "cuda_check: parity test passed after $(( $(date +%s) - start )) s; benchmarking ($(date -u +%Y-%m-%d))"

"$build/cuda_bench"
