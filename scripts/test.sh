#!/usr/bin/env bash
# Builds raspc (installing missing packages first) and runs the default test suite, which includes
# one replay of each fuzz target's seed corpus (label corpus).
# Opt-in: ctest --test-dir build -L long (the long sweeps), -L interop (the exports in the peers'
# runtimes, after scripts/setup-interop.sh), ctest --test-dir build -L fuzz
# (libFuzzer for RASPC_FUZZ_SECONDS per target; needs clang++-14).
# RASPC_SANITIZE=1 then builds the default suite again with AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan and runs it with halt_on_error. It is opt-in because
# that second build takes longer on 2 cores than CI's 15 minutes leave (bench/RESULTS.md,
# "Reliability").
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure -LE 'long|interop|fuzz'
if [[ "${RASPC_SANITIZE:-0}" == 1 ]]; then
  sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRASPC_CUDA=OFF \
    -DCMAKE_CXX_FLAGS="$sanitizers" -DCMAKE_EXE_LINKER_FLAGS="$sanitizers"
  cmake --build build-asan -j"$(nproc)"
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
