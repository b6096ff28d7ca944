#!/bin/bash
# The circuit and the interventions of every program of programs/, in both modes, at one maximum
# length (bench/RESULTS.md, "Ground truth: circuits and interventions"):
#
#   bench/verify_interventions.sh [RASPC] [MAX_LEN] [PAIRS]
#
# compiles each program (RASPC defaults to build/raspc, MAX_LEN to 8, PAIRS to 200), prints its
# circuit's size (`raspc circuit --json`) and runs `raspc verify-interventions --pairs PAIRS`: one
# Markdown row per program and mode, with the wall time of the check. Exits 1 when any
# intervention disagrees. From the repository root.
set -euo pipefail
raspc=$(realpath "${1:-build/raspc}")
max_len=${2:-8}
pairs=${3:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| program | mode | nodes in the circuit | edges | s-ops patched | interchange agreement | ablations outside the circuit that changed an output | nodes inside that changed none | seconds |"
echo "|---|---|---|---|---|---|---|---|---|"
status=0
for program in programs/*.rasp; do
  name=$(basename "$program" .rasp)
  for mode in bidirectional causal; do
    flag=""; [ "$mode" = causal ] && flag="--causal"
    model="$work/$name.$mode.safetensors"
    "$raspc" compile "$program" --max-len "$max_len" $flag -o "$model" >/dev/null 2>&1
    "$raspc" circuit "$model" --json > "$work/circuit.json"
    start=$(date +%s.%N)
    "$raspc" verify-interventions "$model" --pairs "$pairs" --json > "$work/report.json" || status=1
    end=$(date +%s.%N)
    python3 - "$work/circuit.json" "$work/report.json" "$name" "$mode" "$start" "$end" <<'PY'
import json, sys
circuit, report = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
name, mode, start, end = sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
parts = [n for n in circuit["nodes"] if n["kind"] in ("head", "mlp")]
inside = sum(n["in_circuit"] for n in parts)
edges = sum(e["in_circuit"] for e in circuit["edges"])
agreed = sum(c["agreed"] for c in report["interchanges"])
total = sum(c["pairs"] for c in report["interchanges"])
outside = [a for a in report["ablations"] if not a["in_circuit"]]
changed_outside = sum(a["changed"] for a in outside)
silent = [a["node"] for a in report["ablations"] if a["in_circuit"] and a["changed"] == 0]
percent = "100%" if agreed == total else f"{100 * agreed / total:.2f}%"
print(f"| {name} | {mode} | {inside} of {len(parts)} | {edges} | {len(report['interchanges'])} | "
      f"{agreed} of {total} ({percent}) | {changed_outside} (of {len(outside)} nodes x {report['pairs']}) | "
      f"{', '.join(silent) or '-'} | {end - start:.1f} |")
PY
  done
done
exit $status
