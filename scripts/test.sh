#!/usr/bin/env bash
# Builds raspc (installing missing packages first) and runs the default test suite.
# Long sweeps and the peer checks are opt-in: ctest --test-dir build -L long (or -L interop)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure -LE 'long|interop|fuzz'
