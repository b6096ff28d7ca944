#!/usr/bin/env bash
# Installs what raspc needs (when missing), builds it, and runs the main demo: the (aab)* story,
# a hand-set transformer beside the one raspc compiles from a four-line RASP program.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh raspc  # the demo needs the command line only, not the tests or the Python module
./build/raspc demo aab
