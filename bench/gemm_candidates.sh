#!/usr/bin/env bash
# The GEMM candidates (bench/gemm_candidates.cpp) on the products raspc runs, one thread each:
# raspc's own kernel, Eigen, OpenBLAS, BLIS, oneDNN and libxsmm, in GFLOP/s.
#
#   bench/gemm_candidates.sh [BUILD] [SECONDS]         # BUILD default build, SECONDS a figure default 0.5
#   ISA=avx2 bench/gemm_candidates.sh build-avx2        # the AVX2 row on an AVX-512 machine: every
#       library capped to AVX2 (build BUILD with CMAKE_CXX_FLAGS=-mno-avx512f so Eigen is too)
#
# The libraries are Debian's; a missing one is said and skipped:
#   apt-get install libopenblas0-pthread libblis4-openmp libdnnl2 libxsmm-dev   (then rebuild for libxsmm)
set -euo pipefail
build=${1:-build}
seconds=${2:-0.5}
[ -x "$build/gemm_candidates" ] || { echo "gemm_candidates.sh: $build/gemm_candidates not found (cmake --build $build --target gemm_candidates)" >&2; exit 1; }
isa=$(grep -qw avx512f /proc/cpuinfo && echo AVX-512 || { grep -qw avx2 /proc/cpuinfo && echo AVX2 || echo "neither AVX2 nor AVX-512"; })
case "${ISA:-}" in
  "") ;;
  avx2)
    # BLIS_ARCH_TYPE is an index into BLIS 0.9's arch_t (3: haswell), not a name.
    export RASPC_MAX_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell LIBXSMM_TARGET=hsw BLIS_ARCH_TYPE=3
    isa="AVX2 (capped on a machine with $isa: RASPC_MAX_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell LIBXSMM_TARGET=hsw BLIS_ARCH_TYPE=3)" ;;
  *) echo "gemm_candidates.sh: ISA is '$ISA'; the only cap is avx2 (unset: what the machine has)" >&2; exit 1 ;;
esac
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $isa, $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "build: $(grep -m1 '^CMAKE_CXX_FLAGS:' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2-) $(grep -m1 '^CMAKE_CXX_FLAGS_RELEASE' "$build/CMakeCache.txt" 2>/dev/null | cut -d= -f2-) $(grep -m1 '^RASPC_NATIVE' "$build/CMakeCache.txt" 2>/dev/null)"
"$build/gemm_candidates" "$seconds"
