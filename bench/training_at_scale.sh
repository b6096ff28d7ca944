#!/bin/bash
# The figures of bench/RESULTS.md, "Training at scale: datasets and the Hugging Face path":
#
#   bench/training_at_scale.sh [RASPC] [VENV]
#
# 1. `raspc dataset` throughput (inputs labelled and written per second, 1 thread and every core)
#    on four programs at lengths 1-16, against `raspc eval`, one process per input (the way to label
#    inputs before `raspc dataset`), on 200 inputs.
# 2. steps per second of examples/train_hf.py (transformers' Trainer on the CPU) against `raspc
#    train` on the same shapes, batch and steps, one thread each (OMP_NUM_THREADS=1 for torch,
#    --threads 1 for raspc): hist's compiled shape at max length 8, and the comparison's
#    "comfortable" shape (2 layers, 4 heads, n_embd 64, MLP 256). Needs VENV (default
#    .interop-venv, scripts/setup-interop.sh); without it part 2 is skipped, saying so.
# RASPC defaults to build/raspc. From the repository root. Prints Markdown tables.
set -euo pipefail
raspc=$(realpath "${1:-build/raspc}")
venv=${2:-.interop-venv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cores=$(nproc)
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }

echo "| program | lengths | training inputs | threads | seconds | inputs/s | raspc eval, one process an input: inputs/s | ratio |"
echo "|---|---|---|---|---|---|---|---|"
for name in hist sort most_freq dyck2; do
  program=programs/$name.rasp
  # raspc eval on 200 inputs of length 8 from the program's vocabulary, one process each.
  "$raspc" dataset "$program" --lengths 8 --n 200 --held-out 0 -o "$work/eval_inputs" >/dev/null 2>&1
  python3 -c "
import json, sys
for line in open(sys.argv[1]):
    print('[' + ','.join(json.loads(line)['input']) + ']')" "$work/eval_inputs/train-00000-of-00001.jsonl" > "$work/inputs.txt"
  start=$(date +%s.%N)
  while read -r input; do "$raspc" eval "$program" --input "$input" >/dev/null 2>&1 || true; done < "$work/inputs.txt"
  end=$(date +%s.%N)
  eval_rate=$(python3 -c "import sys; print(round(200 / float(sys.argv[1])))" "$(seconds "$start" "$end")")
  for threads in 1 "$cores"; do
    start=$(date +%s.%N)
    "$raspc" dataset "$program" --lengths 1-16 --n 1000000 --threads "$threads" -o "$work/data" >/dev/null 2>&1
    end=$(date +%s.%N)
    elapsed=$(seconds "$start" "$end")
    rows=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['counts']; print(c['train'] + c['test'])" "$work/data/raspc_dataset.json")
    rate=$(python3 -c "import sys; print(round(int(sys.argv[1]) / float(sys.argv[2])))" "$rows" "$elapsed")
    echo "| $name | 1-16 | 1,000,000 | $threads | $elapsed | $rate | $eval_rate | $(python3 -c "print(f'{$rate / $eval_rate:.0f}x')") |"
  done
done

if [ ! -x "$venv/bin/python" ]; then
  echo
  echo "(no venv at $venv: the Hugging Face training figures are skipped; scripts/setup-interop.sh makes it)"
  exit 0
fi
echo
echo "| shape | steps x batch | raspc train steps/s (1 thread) | train_hf.py steps/s (Trainer, torch 1 thread) | raspc / HF |"
echo "|---|---|---|---|---|"
"$raspc" dataset programs/hist.rasp --lengths 1-8 --n 100000 -o "$work/hist" >/dev/null 2>&1
"$raspc" compile programs/hist.rasp --max-len 8 --samples 100 -o "$work/hist.safetensors" >/dev/null 2>&1
shape=$(python3 -c "
import json, subprocess, sys
c = json.loads(subprocess.run([sys.argv[1], 'inspect', sys.argv[2], '--json'], capture_output=True, text=True).stdout)['config']
print(c['n_layer'], c['n_head'], c['n_embd'], c['n_inner'])" "$raspc" "$work/hist.safetensors")
read -r layers heads d_model mlp <<< "$shape"
steps=1000
for spec in "compiled:$layers:$heads:$d_model:$mlp" "comfortable:2:4:64:256"; do
  IFS=: read -r label l h d m <<< "$spec"
  raspc_rate=$("$raspc" train programs/hist.rasp --max-len 8 --layers "$l" --heads "$h" --d-model "$d" --mlp "$m" \
                 --steps "$steps" --batch 32 --eval-every "$steps" --threads 1 -o "$work/raspc.safetensors" 2>/dev/null |
               sed -n 's/.* in [0-9.]* s (\([0-9.]*\) steps\/s).*/\1/p')
  hf_rate=$(OMP_NUM_THREADS=1 HF_HOME="$work/hf-home" HF_DATASETS_CACHE="$work/hf-datasets" HF_HUB_OFFLINE=1 \
              "$venv/bin/python" examples/train_hf.py "$work/hist" --layers "$l" --heads "$h" --d-model "$d" --mlp "$m" \
              --steps "$steps" --batch 32 --logging-steps "$steps" -o "$work/hf" 2>/dev/null |
            sed -n 's/.* in [0-9.]* s (\([0-9.]*\) steps\/s).*/\1/p')
  ratio=$(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.1f}x')" "$raspc_rate" "$hf_rate")
  echo "| hist, $label ($l layer(s), $h head(s), n_embd $d, MLP $m) | $steps x 32 | $raspc_rate | $hf_rate | $ratio |"
done
