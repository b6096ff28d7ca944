"""raspc beside Tracr's own compiler on Tracr's library programs (the same program objects).

    RASPC_INTEROP_VENV/bin/python bench/tracr_compare.py BUILD/python [MAX_SEQ_LEN ...] > table.md
    ... bench/tracr_compare.py BUILD/python --only make_sort,shift_by_1 16   (some programs only)

For each program of tests/python/interop/tracr_cases.py and each max_seq_len (default 10 16):
layers, heads per layer, residual width, parameters and compile time of each compiler, and the
accuracy of each compiled model against Tracr's own rasp.evaluate on the same inputs (every
input up to length 5, then 1,000 random ones of each longer length; inputs where the evaluator
itself raises are left out). Accuracy counts whole sequences: every position (BOS excluded) must
match, numbers within 1e-3 (relative above 1). raspc's compile time is the compiler's own
(conversion included); its verification (samples=1000) is shown apart. Tracr's model is run in
batches of equal length through its own forward, as its apply does one at a time.
"""

import os
import sys
import time

sys.path.insert(1, sys.argv[1])
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python", "interop"))

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from tracr.compiler import compiling  # noqa: E402
from tracr.rasp import rasp  # noqa: E402

import raspc.tracr  # noqa: E402
from tracr_cases import CASES, inputs, same  # noqa: E402


def accuracy(decode_batch, program, tokens_list):
    by_length = {}
    for tokens in tokens_list:
        by_length.setdefault(len(tokens), []).append(tokens)
    right = total = 0
    for batch in by_length.values():
        expected = []
        kept = []
        for tokens in batch:
            try:
                expected.append(rasp.evaluate(program, tokens))
                kept.append(tokens)
            except (ValueError, TypeError):
                pass
        if not kept:
            continue
        for got, want in zip(decode_batch(kept), expected):
            total += 1
            right += all(same(g, w) for g, w in zip(got, want))
    return right / total if total else float("nan")


def tracr_figures(program, vocab, max_seq_len, tokens_list):
    start = time.perf_counter()
    try:
        model = compiling.compile_rasp_to_model(program, vocab, max_seq_len, compiler_bos="BOS")
    except Exception as error:  # Tracr refuses: NotImplementedError, ValueError, ...
        return {"refused": f"{type(error).__name__}: {str(error).splitlines()[0][:80]}"}
    seconds = time.perf_counter() - start
    params = sum(np.size(v) for module in model.params.values() for v in module.values())
    width = model.params["token_embed"]["embeddings"].shape[1]

    def decode_batch(batch):
        ids = jnp.array([model.input_encoder.encode(["BOS"] + t) for t in batch])
        out = model.forward(model.params, ids).unembedded_output.tolist()
        decoder = model.output_encoder.decode if model.output_encoder else (lambda x: x)
        return [decoder(row)[1:] for row in out]

    return {"layers": model.model_config.num_layers, "heads": model.model_config.num_heads, "width": width,
            "params": params, "seconds": seconds, "accuracy": accuracy(decode_batch, program, tokens_list)}


def raspc_figures(program, vocab, max_seq_len, tokens_list):
    start = time.perf_counter()
    try:
        compiled = raspc.tracr.compile_rasp_to_model(program, vocab, max_seq_len, compiler_bos="BOS",
                                                     samples=1000)
    except raspc.CompileError as error:
        return {"refused": str(error).splitlines()[0][:100]}
    seconds = time.perf_counter() - start
    report = compiled.model.report
    verify = report["verify_ms"] / 1000

    def decode_batch(batch):
        return [compiled.apply(["BOS"] + t).decoded[1:] for t in batch]

    return {"layers": report["layers"], "heads": report["heads"], "width": report["n_embd"],
            "params": report["parameters"], "seconds": seconds - verify, "verify": verify,
            "accuracy": accuracy(decode_batch, program, tokens_list)}


def cell(figures, key, fmt):
    if "refused" in figures:
        return "refused" if key == "layers" else ""
    return fmt.format(figures[key])


def main():
    args = sys.argv[2:]
    only = None
    if args[:1] == ["--only"]:
        only, args = set(args[1].split(",")), args[2:]
    lengths = [int(n) for n in args] or [10, 16]
    print("| program | max_seq_len | layers raspc / Tracr | heads raspc / Tracr | residual raspc / Tracr "
          "| parameters raspc / Tracr | compile s raspc (+verify) / Tracr | accuracy raspc / Tracr |")
    print("|---|---|---|---|---|---|---|---|")
    refusals = []
    for name in sorted(CASES):
        if only is not None and name not in only:
            continue
        build, vocab = CASES[name]
        for n in lengths:
            tokens_list = list(inputs(vocab, n))
            # Fresh program objects for each compiler: both annotate the expressions they see.
            ours = raspc_figures(build(n), vocab, n, tokens_list)
            theirs = tracr_figures(build(n), vocab, n, tokens_list)
            for who, figures in (("raspc", ours), ("Tracr", theirs)):
                if "refused" in figures:
                    refusals.append(f"- {name} at {n}, {who}: {figures['refused']}")
            verify = f" (+{ours['verify']:.2f})" if "verify" in ours else ""
            print(f"| {name} | {n} | {cell(ours, 'layers', '{}')} / {cell(theirs, 'layers', '{}')} "
                  f"| {cell(ours, 'heads', '{}')} / {cell(theirs, 'heads', '{}')} "
                  f"| {cell(ours, 'width', '{}')} / {cell(theirs, 'width', '{}')} "
                  f"| {cell(ours, 'params', '{:,}')} / {cell(theirs, 'params', '{:,}')} "
                  f"| {cell(ours, 'seconds', '{:.2f}')}{verify} / {cell(theirs, 'seconds', '{:.2f}')} "
                  f"| {cell(ours, 'accuracy', '{:.2%}')} / {cell(theirs, 'accuracy', '{:.2%}')} |", flush=True)
    if refusals:
        print("\nRefusals:\n" + "\n".join(refusals))


if __name__ == "__main__":
    main()
