#!/usr/bin/env bash
# Builds raspc (installing missing packages first) and runs the default test suite, which includes
# one replay of each fuzz target's seed corpus (label corpus).
# RASPC_SANITIZE=1 then builds the same suite with AddressSanitizer and UndefinedBehaviorSanitizer
# in build-asan and runs it again, halting on the first report. It is opt-in because that second
# build takes longer on 2 cores than CI's 15 minutes leave (bench/RESULTS.md, "Reliability").
# Opt-in: ctest --test-dir build -L long (the long sweeps), -L interop (the exports in the peers'
# runtimes, after scripts/setup-interop.sh), ctest --test-dir build -L fuzz
# (libFuzzer for RASPC_FUZZ_SECONDS per target; needs clang++-14).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure -LE 'long|interop|fuzz'
if [[ "${RASPC_SANITIZE:-0}" == 1 ]]; then
  # Only what the suite runs is built (no CUDA, Python module, benchmarks or libFuzzer builds), at
  # -O1 with line tables only: the sanitizers' checks need no more.
  sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
    -DRASPC_CUDA=OFF -DRASPC_NATIVE=OFF \
    -DCMAKE_CXX_FLAGS="$sanitizers" -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" >/dev/null
  mapfile -t targets < <(cmake --build build-asan --target help |
                         sed -n 's/^\.\.\. \(raspc\|test_[a-z]*\|replay_[a-z_]*\)$/\1/p' | grep -vx test_cuda)
  cmake --build build-asan -j"$(nproc)" --target "${targets[@]}"
  # detect_leaks=0: the interned strings and the CLI11 app live until exit by design. A 64 MB
  # stack: AddressSanitizer's frames are several times larger, and the evaluator's depth limit
  # (language/evaluate_internal.hpp) is sized for an 8 MB stack without it.
  (
    ulimit -s 65536
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:abort_on_error=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      ctest --test-dir build-asan -j"$(nproc)" --output-on-failure -LE 'long|interop|fuzz|cuda|python'
  )
fi
