#!/usr/bin/env bash
# Regenerates the cost figures: bench/cost.md, bench/cost.json, bench/plots/*.svg and the
# generated section of bench/RESULTS.md. Run from the repository root after building:
#   ./scripts/setup.sh && bench/cost.sh
# Extra arguments go to `raspc bench` (for example --max-len 5,8,16 or --device cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
./build/raspc bench --out-dir bench --update-results bench/RESULTS.md "$@"
