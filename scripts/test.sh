#!/usr/bin/env bash
# Builds raspc (installing missing packages first) and runs the default test suite.
# Long sweeps are opt-in: ctest --test-dir build -L long
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build -j"$(nproc)" --output-on-failure -LE long
