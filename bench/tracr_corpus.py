"""raspc beside Tracr's own compiler on the Tracr corpus of issue 32
(tests/python/interop/tracr_corpus.py: every program of Tracr's lib.py and our own, built the way
Tracr-based benchmarks build them).

    RASPC_INTEROP_VENV/bin/python bench/tracr_corpus.py BUILD/python > table.md
    ... bench/tracr_corpus.py BUILD/python --only palindrome,median     (some entries only)
    ... bench/tracr_corpus.py BUILD/python --no-tracr                   (raspc's side only)

Everything runs in this one process, in corpus order, with `rasp.RASPExpr._ids` reset before each
build, as the benchmarks do. Each entry is built afresh for each compiler (both annotate the
expressions they see). For each: raspc's layers, heads (the widest layer), residual width,
parameters, time and result, beside Tracr's layers, heads, residual width, parameters, time and
accuracy. Both models are scored on the same inputs, those of the acceptance test (up to
tracr_corpus.CHECKED_INPUTS where Tracr's own rasp.evaluate is defined, every input where there
are fewer): accuracy counts whole sequences (every position, BOS excluded, numbers within 1e-3,
relative above 1).

raspc's result: "right" (a model, right on every input), "wrong" (a model handed out that is
wrong somewhere), "refused" (raspc.CompileError: the reason's first line; where raspc's own
checks refused a model, its accuracy is that of the model they caught, compiled again with
verify=False), "error" (another exception). raspc's time: conversion plus its compiler, then in
brackets its two checks (the verification against its interpreter and the comparison with
Tracr's evaluator). Tracr's time includes its jax tracing.
"""

import argparse
import os
import signal
import sys
import time

# Ahead of this script's own folder: the corpus module has this script's name.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python", "interop"))

TRACR_TIMEOUT_S = 600  # Tracr's compile of one program


def first_line(text, width=110):
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= width else line[:width - 3] + "..."


def accuracy(decode_batch, pairs):
    """(share of inputs whose whole output equals Tracr's evaluator's, the first input where it
    does not: (input, Tracr's evaluator, the model)), run in batches of one length."""
    from tracr_corpus import same
    if not pairs:
        return float("nan"), None
    by_length = {}
    for tokens, expected in pairs:
        by_length.setdefault(len(tokens), []).append((tokens, expected))
    right, first = 0, None
    for batch in by_length.values():
        outputs = decode_batch([t for t, _ in batch])
        for got, (tokens, expected) in zip(outputs, batch):
            if isinstance(got, list) and len(got) == len(expected) and all(map(same, got, expected)):
                right += 1
            elif first is None:
                first = (tokens, expected, got)
    return right / len(pairs), first


def raspc_figures(entry, pairs):
    import raspc
    import raspc.tracr
    from tracr_corpus import build_fresh
    program = build_fresh(entry)
    figures = {}
    try:
        start = time.perf_counter()
        raspc.tracr.from_tracr(program, entry.vocab, entry.max_seq_len, causal=entry.causal)
        conversion = time.perf_counter() - start
        start = time.perf_counter()
        compiled = raspc.tracr.compile_rasp_to_model(program, entry.vocab, entry.max_seq_len, causal=entry.causal,
                                                     compiler_bos="BOS")
        total = time.perf_counter() - start
    except raspc.CompileError as error:
        figures = {"result": "refused", "reason": first_line(error), "full_reason": str(error)}
        if error.line is not None:
            return figures
        # raspc's own checks refused the model: score the one they caught.
        try:
            compiled = raspc.tracr.compile_rasp_to_model(program, entry.vocab, entry.max_seq_len,
                                                         causal=entry.causal, compiler_bos="BOS", verify=False)
        except Exception:
            return figures
        conversion = total = None
    except Exception as error:  # not a located refusal: a bare KeyError, ValueError, ...
        return {"result": "error", "reason": f"{type(error).__name__}: {first_line(error)}"}
    report = compiled.model.report
    figures.update(layers=report["layers"], heads=report["heads"], width=report["n_embd"],
                   params=report["parameters"])
    if total is not None:
        compile_s = conversion + report["compile_ms"] / 1000
        figures.update(seconds=compile_s, checks=max(0.0, total - compile_s))

    def decode_batch(batch):
        outputs = []
        for tokens in batch:
            try:
                outputs.append(compiled.apply(["BOS"] + tokens).decoded[1:])
            except Exception as error:
                outputs.append(f"{type(error).__name__}: {error}")
        return outputs

    figures["accuracy"], figures["first_wrong"] = accuracy(decode_batch, pairs)
    if "result" not in figures:
        figures["result"] = "right" if figures["accuracy"] == 1 else "wrong"
    return figures


class _Timeout(Exception):
    pass


def tracr_figures(entry, pairs):
    import jax.numpy as jnp
    import numpy as np
    from tracr.compiler import compiling
    from tracr_corpus import build_fresh
    program = build_fresh(entry)

    def alarm(signum, frame):
        raise _Timeout()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TRACR_TIMEOUT_S)
    start = time.perf_counter()
    try:
        model = compiling.compile_rasp_to_model(program, entry.vocab, entry.max_seq_len, causal=entry.causal,
                                                compiler_bos="BOS")
    except _Timeout:
        return {"result": "refused", "reason": f"still compiling after {TRACR_TIMEOUT_S} s"}
    except Exception as error:  # Tracr refuses: NotImplementedError, ValueError, KeyError, ...
        return {"result": "refused", "reason": f"{type(error).__name__}: {first_line(error, 90)}"}
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - start
    params = sum(np.size(v) for module in model.params.values() for v in module.values())
    width = model.params["token_embed"]["embeddings"].shape[1]

    def decode_batch(batch):
        try:
            ids = jnp.array([model.input_encoder.encode(["BOS"] + t) for t in batch])
            out = model.forward(model.params, ids).unembedded_output.tolist()
        except Exception as error:  # an input its encoder cannot encode, ...
            return [f"{type(error).__name__}: {error}"] * len(batch)
        decoder = model.output_encoder.decode if model.output_encoder else (lambda x: x)
        return [decoder(row)[1:] for row in out]

    acc, first = accuracy(decode_batch, pairs)
    return {"result": "compiled", "layers": model.model_config.num_layers, "heads": model.model_config.num_heads,
            "width": width, "params": params, "seconds": seconds, "accuracy": acc, "first_wrong": first}


def cell(figures, key, fmt):
    value = figures.get(key) if figures else None
    return "" if value is None else fmt.format(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package_parent", help="the folder holding the raspc package (BUILD/python)")
    parser.add_argument("--only", default="", help="comma-separated entry names")
    parser.add_argument("--no-tracr", action="store_true", help="raspc's side only")
    args = parser.parse_args()
    sys.path.insert(1, args.package_parent)
    import tracr_corpus
    from tracr_corpus import build_fresh, checked_inputs

    only = set(args.only.split(",")) if args.only else None
    print("| program | category | max_seq_len | vocab | raspc result | layers raspc / Tracr | heads raspc / Tracr "
          "| residual raspc / Tracr | parameters raspc / Tracr | compile s raspc (+checks) / Tracr "
          "| accuracy raspc / Tracr |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for entry in tracr_corpus.ENTRIES:
        if only is not None and entry.name not in only:
            continue
        pairs, _ = checked_inputs(entry, build_fresh(entry))
        ours = raspc_figures(entry, pairs)
        theirs = tracr_figures(entry, pairs) if not args.no_tracr else None
        rows.append((entry, ours, theirs))
        result = "refused by its checks" if ours["result"] == "refused" and "accuracy" in ours else ours["result"]
        checks = f" (+{ours['checks']:.2f})" if "checks" in ours else ""
        tracr_layers = (theirs["result"] if theirs and theirs["result"] != "compiled" else cell(theirs, "layers", "{}"))
        print(f"| {entry.name}{' (causal)' if entry.causal else ''} | {entry.category} | {entry.max_seq_len} "
              f"| {len(entry.vocab)} | {result} "
              f"| {cell(ours, 'layers', '{}')} / {tracr_layers} "
              f"| {cell(ours, 'heads', '{}')} / {cell(theirs, 'heads', '{}')} "
              f"| {cell(ours, 'width', '{}')} / {cell(theirs, 'width', '{}')} "
              f"| {cell(ours, 'params', '{:,}')} / {cell(theirs, 'params', '{:,}')} "
              f"| {cell(ours, 'seconds', '{:.2f}')}{checks} / {cell(theirs, 'seconds', '{:.2f}')} "
              f"| {cell(ours, 'accuracy', '{:.2%}')} / {cell(theirs, 'accuracy', '{:.2%}')} |", flush=True)

    print("\nRefusals and errors:\n")
    for entry, ours, theirs in rows:
        if ours["result"] in ("refused", "error"):
            print(f"- {entry.name}, raspc: {ours['reason']}")
        if theirs and theirs["result"] == "refused":
            print(f"- {entry.name}, Tracr: {theirs['reason']}")

    print("\nraspc's wrong answers (the first input where a model raspc made is not Tracr's evaluator):\n")
    for entry, ours, _ in rows:
        if ours.get("first_wrong"):
            tokens, expected, got = ours["first_wrong"]
            print(f"- {entry.name} ({ours['result']}): {tokens!r}: Tracr's evaluator {expected!r}, raspc {got!r}")

    n = len(rows)
    ours_by = {}
    for _, ours, _ in rows:
        ours_by[ours["result"]] = ours_by.get(ours["result"], 0) + 1
    handed_out = ours_by.get("right", 0) + ours_by.get("wrong", 0)
    print(f"\nTotals over {n} programs:\n")
    print(f"- raspc: {handed_out} compiled (models handed out), {ours_by.get('right', 0)} right on every input, "
          f"{ours_by.get('wrong', 0)} wrong; {ours_by.get('refused', 0)} refused "
          f"({sum(1 for _, o, _ in rows if o['result'] == 'refused' and 'accuracy' in o)} of them by its own checks, "
          f"which caught a wrong model); {ours_by.get('error', 0)} other errors; 0 crashed (the run finished)")
    if not args.no_tracr:
        compiled = [t for _, _, t in rows if t["result"] == "compiled"]
        perfect = sum(1 for t in compiled if t["accuracy"] == 1)
        mean = sum(t["accuracy"] for t in compiled) / len(compiled) if compiled else float("nan")
        print(f"- Tracr: {len(compiled)} compiled, {perfect} right on every input, {len(compiled) - perfect} wrong "
              f"on some (mean accuracy {mean:.2%}); {n - len(compiled)} refused")
        both = [(o, t) for _, o, t in rows if t["result"] == "compiled" and o["result"] in ("right", "wrong")]
        if both:
            fewer = sum(1 for o, t in both if o["layers"] < t["layers"])
            same = sum(1 for o, t in both if o["layers"] == t["layers"])
            print(f"- compiled by both: {len(both)}; raspc has fewer layers in {fewer}, as many in {same}, "
                  f"more in {len(both) - fewer - same}; a narrower residual in "
                  f"{sum(1 for o, t in both if o['width'] < t['width'])}; fewer parameters in "
                  f"{sum(1 for o, t in both if o['params'] < t['params'])}")


if __name__ == "__main__":
    main()
