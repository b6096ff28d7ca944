"""How far a split width's parts read from their levels: the float32 errors the projection bounds.

A stable sort's target w1 + w2 is read along one line through its two parts' scratch values,
w/(w+Z) with Z = 4n^2 (docs/long-contexts.md, "A stable sort's blocks"; compiler/project_reads.cpp
keeps a half-gap of five times the error it expects there). This compiles a program at each max
length n given, runs it on inputs of the program's symbols drawn each with weights of its own (so
that keys tie and differ), and prints the largest distance of a part's read from its level, that
distance over 4u(1-u) at the largest u (e, the figure the compiler's bound is written in), the
line's half-gap between consecutive sums, and how many times the error fits into it.

    PYTHONPATH=BUILD/python python bench/split_width_errors.py PROGRAM [--causal]
        [--no-layernorm] [--inputs K] [--seed S] [--sources] N...

PROGRAM is a name of programs/ (most_freq, sort); K inputs per length (default 400), drawn from seed
S (default 1: the worst case differs between seeds, so a bound wants several). With --sources it
also recomputes the reads in numpy from the model's weights and prints e for: the whole forward in
float64 (the construction's own error); the parts' block in float64 over the float32 stream before
it (what the earlier blocks' rounding leaves); and that block in float32 over the float64 stream
(its own rounding). Needs numpy
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


def block_weights(weights, layer, dtype):
    """Block `layer`'s tensors in dtype, and the prefix of their names."""
    h = f"transformer.h.{layer}."
    return {k: v.astype(dtype) for k, v in weights.items() if k.startswith(h)}, h


def normalise(x, weights, name, dtype, config):
    """LayerNorm `name` where the model has LayerNorm, else x itself."""
    if not config["layer_norm"]:
        return x
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + dtype(1e-5)) * weights[name + ".weight"] + weights[name + ".bias"]


def attention_block(x, weights, layer, config, causal, dtype):
    """x plus block `layer`'s attention, in dtype: (T, C) -> (T, C)."""
    w, h = block_weights(weights, layer, dtype)
    x = x.astype(dtype)
    qkv = normalise(x, w, h + "ln_1", dtype, config) @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
    T, C = x.shape
    n_head = config["n_head"]
    d = C // n_head
    out = np.zeros((T, C), dtype)
    for i in range(n_head):
        q, k, v = (qkv[:, j * C + i * d:j * C + (i + 1) * d] for j in range(3))
        score = q @ k.T / dtype(np.sqrt(d))
        if causal:
            score = np.where(np.tril(np.ones((T, T), bool)), score, -np.inf)
        score = np.exp(score - score.max(-1, keepdims=True))
        out[:, i * d:(i + 1) * d] = score / score.sum(-1, keepdims=True) @ v
    return x + out @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]


def mlp_block(x, weights, layer, config, dtype):
    w, h = block_weights(weights, layer, dtype)
    z = normalise(x, w, h + "ln_2", dtype, config) @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"]
    g = 0.5 * z * (1 + np.tanh(dtype(np.sqrt(2 / np.pi)) * (z + dtype(0.044715) * z ** 3)))
    return x + g @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]


def stream_before(model, weights, ids, stage, causal, dtype):
    """The residual stream before the attention that makes `stage`, computed in dtype."""
    x = (weights["transformer.wte.weight"][ids] + weights["transformer.wpe.weight"][:len(ids)]).astype(dtype)
    for layer in range(stage // 2):
        x = mlp_block(attention_block(x, weights, layer, model.config, causal, dtype), weights, layer, model.config,
                      dtype)
    return x


def measure(program, n, causal, layer_norm, inputs, seed, sources):
    """e (a part's largest read error over 4u(1-u) at the largest u) for the float32 model and,
    with `sources`, for the numpy recomputations; and the line's half-gap over the largest error."""
    model = raspc.compile(program, max_len=n, verify=False, causal=causal, layer_norm=layer_norm)
    labels = model.residual_labels
    parts = [d for d, label in enumerate(labels) if label.endswith(("_1.scratch", "_2.scratch"))]
    if len(parts) != 2:
        raise SystemExit(f"{program.filename} at max length {n}: no split width's parts found")
    # The parts' head is in the block that writes them; the stage after its attention holds them.
    stage = next(s for s in range(1, 2 * model.config["n_layer"] + 1, 2)
                 if model.forward(list(program.vocab)[:1] * 2).residual[s][:, parts].any())
    weights = {k: np.asarray(v) for k, v in model.weights.items()} if sources else {}
    config, layer = model.config, stage // 2
    symbols = [str(v) for v in program.vocab]
    z = 4.0 * n * n
    rng = np.random.default_rng(seed)
    largest = {}

    def record(name, u):
        w = np.round(z * u / (1 - u))
        largest[name] = max(largest.get(name, 0.0), float(np.abs(u - w / (w + z)).max()))

    for b in range(inputs):
        weight = rng.integers(0, 8, len(symbols)).astype(float)
        weight[b % len(symbols)] += 1
        tokens = list(rng.choice(symbols, size=n, p=weight / weight.sum()))
        result = model.forward(tokens)
        record("float32", result.residual[stage][1:, parts].astype(np.float64))
        if not sources:
            continue
        ids = [model.vocab.index(t) for t in result.tokens]
        exact = stream_before(model, weights, ids, stage, causal, np.float64)
        record("float64", attention_block(exact, weights, layer, config, causal, np.float64)[1:, parts])
        record("head in float64", attention_block(result.residual[stage - 1].astype(np.float64), weights, layer,
                                                  config, causal, np.float64)[1:, parts])
        record("head in float32", attention_block(exact.astype(np.float32), weights, layer, config, causal,
                                                  np.float32)[1:, parts].astype(np.float64))
    top = n / (n + z)
    return {name: e / (4 * top * (1 - top)) for name, e in largest.items()}, half_gap(n, z) / largest["float32"], \
        largest["float32"], half_gap(n, z)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("lengths", type=int, nargs="+")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--no-layernorm", action="store_true")
    parser.add_argument("--inputs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sources", action="store_true")
    args = parser.parse_args()
    program = raspc.Program.from_file(PROGRAMS / f"{args.program}.rasp")
    extra = " | e, float64 | e, head in float64 | e, head in float32" if args.sources else ""
    print("max length | largest error | e | half-gap | half-gap / error" + extra)
    for n in args.lengths:
        e, ratio, error, gap = measure(program, n, args.causal, not args.no_layernorm, args.inputs, args.seed,
                                       args.sources)
        row = f"{n} | {error:.3g} | {e['float32']:.3g} | {gap:.3g} | {ratio:.1f}"
        if args.sources:
            row += "".join(f" | {e[name]:.3g}" for name in ("float64", "head in float64", "head in float32"))
        print(row, flush=True)


if __name__ == "__main__":
    main()
