"""How far a split width's parts read from their levels: the float32 errors the projection bounds.

A stable sort's target w1 + w2 is read along one line through its two parts' scratch values,
w/(w+Z) with Z = 4n^2 (docs/long-contexts.md, "A stable sort's blocks"; compiler/project_reads.cpp
keeps a half-gap of five times the error it expects there). This compiles a program at each max
length n given, runs it on inputs of the program's symbols drawn each with weights of its own (so
that keys tie and differ), and prints the largest distance of a part's read from its level, that
distance over 4u(1-u) at the largest u (e, the figure the compiler's bound is written in), the
line's half-gap between consecutive sums, and how many times the error fits into it.

    PYTHONPATH=BUILD/python python bench/split_width_errors.py PROGRAM [--causal]
        [--no-layernorm] [--inputs K] N...

PROGRAM is a name of programs/ (most_freq, sort); K inputs per length (default 400). Needs numpy
(the interop venv of scripts/setup-interop.sh has it) and the raspc Python module.
"""
import argparse
from pathlib import Path

import numpy as np

import raspc

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


def half_gap(n, z):
    """Half the distance along u1 + u2 between the highest pair summing to t = n-1 and the lowest
    summing to t + 1 (the extremes are at equal parts and at one part 0)."""
    t = n - 1
    return (z - t * t / 2 - t / 2) / ((t + 1 + z) * (t / 2 + z)) / 2


def measure(program, n, causal, layer_norm, inputs):
    model = raspc.compile(program, max_len=n, verify=False, causal=causal, layer_norm=layer_norm)
    labels = model.residual_labels
    parts = [d for d, label in enumerate(labels) if label.endswith(("_1.scratch", "_2.scratch"))]
    if len(parts) != 2:
        raise SystemExit(f"{program.filename} at max length {n}: no split width's parts found")
    # The parts' head is in the block that writes them; the stage after its attention holds them.
    stage = next(s for s in range(1, 2 * model.config["n_layer"] + 1, 2)
                 if model.forward(list(program.vocab)[:1] * 2).residual[s][:, parts].any())
    symbols = [str(v) for v in program.vocab]
    z = 4.0 * n * n
    rng = np.random.default_rng(1)
    largest = 0.0
    for b in range(inputs):
        weight = rng.integers(0, 8, len(symbols)).astype(float)
        weight[b % len(symbols)] += 1
        tokens = list(rng.choice(symbols, size=n, p=weight / weight.sum()))
        u = model.forward(tokens).residual[stage][1:, parts].astype(np.float64)
        w = np.round(z * u / (1 - u))
        largest = max(largest, float(np.abs(u - w / (w + z)).max()))
    top = n / (n + z)
    return largest, largest / (4 * top * (1 - top)), half_gap(n, z)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("lengths", type=int, nargs="+")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--no-layernorm", action="store_true")
    parser.add_argument("--inputs", type=int, default=400)
    args = parser.parse_args()
    program = raspc.Program.from_file(PROGRAMS / f"{args.program}.rasp")
    print("max length | largest error | e | half-gap | half-gap / error")
    for n in args.lengths:
        largest, e, gap = measure(program, n, args.causal, not args.no_layernorm, args.inputs)
        print(f"{n} | {largest:.3g} | {e:.3g} | {gap:.3g} | {gap / largest:.1f}", flush=True)


if __name__ == "__main__":
    main()
