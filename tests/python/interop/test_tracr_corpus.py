"""Issue 32's acceptance test: the Tracr corpus (tracr_corpus.py: every program of Tracr's lib.py
and our own, written in Tracr's API) built the way Tracr-based benchmarks build it, all in one
Python process, in order, with `rasp.RASPExpr._ids = itertools.count(1)` before each build, and
compiled by raspc.tracr.compile_rasp_to_model:

  - no crash (a SIGSEGV, an abort, a hang);
  - no wrong answer: on 500 inputs each (every input where there are fewer; the issue asks for 200) where Tracr's
    own rasp.evaluate is defined, model.apply(["BOS"] + x).decoded[1:] is rasp.evaluate(program, x)
    (numbers within 1e-3, relative above 1, as tracr_cases.same), and so is raspc's interpreter
    on the converted program;
  - no refusal but those the corpus marks as expected, with their reason (the aim is none); a
    refusal is a raspc.CompileError located in the converted listing (`tracr:NAME:LINE:1`); any
    other exception (a bare KeyError, ValueError, ...) is a failure of its own;
  - the same programs compiled in other orders (each build after the reset) give the same model
    files, byte for byte.

The corpus runs in a child process (this file, run as a script) so that a crash is reported with
the program that caused it instead of killing pytest; after a crash the rest of the corpus runs
in a new child, so one run counts every crash. Needs tracr-pypi (the interop venv)."""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tracr_corpus as corpus  # noqa: E402

# One pass over the corpus (in one child, or several after crashes): about a minute verified on
# the 2-core machine, 10 s unverified; a pass still running after this is reported as a hang.
CHILD_TIMEOUT_S = 600
# raspc's own verification runs with its default samples (10,000); the inputs checked here
# against Tracr's evaluator and the 1,000 of compile_rasp_to_model's second oracle come on top.
MIN_DEFINED_SHARE = 0.5  # a corpus program must be defined by Tracr's evaluator on most inputs


# --- the child: compiles and checks the corpus in one process ----------------------------------

def _model_figures(model):
    report = model.model.report
    return {key: report.get(key) for key in ("layers", "heads", "n_embd", "parameters", "mismatches",
                                             "inputs_checked", "verify_ms", "compile_ms")}


def _check(entry, program, compiled):
    """Compares the model and raspc's interpreter with Tracr's evaluator on the entry's inputs."""
    import raspc
    import raspc.tracr
    pairs, tried = corpus.checked_inputs(entry, program)
    result = {"checked": len(pairs), "tried": tried, "wrong": 0, "interpreter_wrong": 0}
    for tokens, expected in pairs:
        try:
            decoded = compiled.apply(["BOS"] + tokens).decoded
            got = decoded[1:] if decoded[:1] == ["BOS"] else f"decoded does not start with BOS: {decoded!r}"
        except Exception as error:  # the model refuses an input Tracr's evaluator answers
            got = f"{type(error).__name__}: {error}"
        if not (isinstance(got, list) and len(got) == len(expected) and all(map(corpus.same, got, expected))):
            result["wrong"] += 1
            result.setdefault("first_wrong", {"input": tokens, "tracr": expected, "raspc": got})
        try:
            interpreted = raspc.tracr.evaluate(compiled.program, tokens)
        except Exception as error:
            interpreted = f"{type(error).__name__}: {error}"
        if not (isinstance(interpreted, list) and len(interpreted) == len(expected)
                and all(map(corpus.same, interpreted, expected))):
            result["interpreter_wrong"] += 1
            result.setdefault("first_interpreter_wrong", {"input": tokens, "tracr": expected,
                                                          "interpreter": interpreted})
    return result


def _run_entry(entry, verify, save_dir, check):
    import raspc
    import raspc.tracr
    result = {"name": entry.name}
    try:
        program = corpus.build_fresh(entry)
    except Exception as error:  # the corpus itself is wrong
        return {**result, "status": "build error", "message": f"{type(error).__name__}: {error}"}
    start = time.perf_counter()
    try:
        compiled = raspc.tracr.compile_rasp_to_model(program, entry.vocab, entry.max_seq_len, causal=entry.causal,
                                                     compiler_bos="BOS", verify=verify)
    except raspc.CompileError as error:
        refusal = {**result, "status": "refused", "seconds": time.perf_counter() - start, "message": str(error),
                   "path": error.path, "line": error.line}
        if error.line is not None:
            return refusal  # located in the listing: the conversion or the compiler refuses it
        # Not located: a verification failed (raspc's against its interpreter, or the second
        # oracle's against Tracr's evaluator). The model raspc would have handed out without
        # them shows what was wrong; the refusal is kept as the reason it was caught.
        try:
            compiled = raspc.tracr.compile_rasp_to_model(program, entry.vocab, entry.max_seq_len,
                                                         causal=entry.causal, compiler_bos="BOS", verify=False)
        except Exception:
            return refusal
        checked = _check(entry, program, compiled)
        if not (checked["wrong"] or checked["interpreter_wrong"]):
            return refusal
        return {**refusal, **checked, "status": "wrong", "caught": str(error),
                "figures": _model_figures(compiled)}
    except Exception as error:  # not a located refusal: a bare KeyError, ValueError, ...
        return {**result, "status": "error", "seconds": time.perf_counter() - start,
                "message": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc().splitlines()[-8:]}
    result.update(seconds=time.perf_counter() - start, figures=_model_figures(compiled),
                  tracr_check=getattr(compiled, "tracr_check", None))
    if save_dir:
        compiled.model.save(os.path.join(save_dir, f"{entry.name}.safetensors"))
    if check:
        result.update(_check(entry, program, compiled))
        wrong = result["wrong"] or result["interpreter_wrong"] or result["figures"]["mismatches"]
        result["status"] = "wrong" if wrong else "right"
    else:
        result["status"] = "compiled"
    return result


def ordered(order):
    entries = list(corpus.ENTRIES)
    if order == "reversed":
        entries.reverse()
    elif order.startswith("shuffled"):
        random.Random(order).shuffle(entries)
    return entries


def child_main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--order", default="corpus")
    parser.add_argument("--events", required=True)
    parser.add_argument("--save", default="")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--skip", type=int, default=0, help="entries of the order already run")
    args = parser.parse_args(argv)
    import faulthandler
    faulthandler.enable()  # a SIGSEGV prints the Python stack to stderr
    with open(args.events, "a") as events:
        for position, entry in enumerate(ordered(args.order)):
            if position < args.skip:
                continue
            events.write(json.dumps({"event": "start", "position": position, "name": entry.name}) + "\n")
            events.flush()  # written before the compile: it survives a crash there
            result = _run_entry(entry, not args.no_verify, args.save, not args.no_check)
            events.write(json.dumps({"event": "result", "position": position, **result}, default=repr) + "\n")
            events.flush()
    return 0


# --- the parent: runs children, reads their events ---------------------------------------------

def run_corpus(tmp_dir, order="corpus", verify=True, save=False, check=True):
    """Runs the corpus in `order` in a child process (a new one after each crash). Returns
    (results by name, crashes: dicts of name, how, stderr tail)."""
    os.makedirs(tmp_dir, exist_ok=True)
    events_path = os.path.join(tmp_dir, "events.jsonl")
    save_dir = os.path.join(tmp_dir, "models") if save else ""
    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
    entries = ordered(order)
    results, crashes, skip = {}, [], 0
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    while skip < len(entries):
        command = [sys.executable, os.path.abspath(__file__), "--child", "--order", order, "--events", events_path,
                   "--skip", str(skip)]
        command += ["--save", save_dir] if save_dir else []
        command += [] if verify else ["--no-verify"]
        command += [] if check else ["--no-check"]
        stderr_path = os.path.join(tmp_dir, f"stderr-{skip}.txt")
        with open(stderr_path, "w") as stderr:
            child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
            try:
                code = child.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                code = "timeout"
        started = None
        with open(events_path) as events:
            for line in events:
                event = json.loads(line)
                if event["event"] == "start":
                    started = event
                else:
                    results[event["name"]] = event
                    started = None
        if code == 0 and started is None:
            break
        with open(stderr_path) as stderr:
            tail = stderr.read()[-3000:]
        if code == "timeout":
            how = f"still running after {CHILD_TIMEOUT_S} s (the corpus's time limit)"
        elif isinstance(code, int) and code < 0:
            how = f"killed by {signal.Signals(-code).name}"
        else:
            how = f"exit status {code}"
        name = started["name"] if started else "(between programs)"
        crashes.append({"name": name, "how": how, "stderr": tail})
        if code == "timeout" or started is None:
            break
        skip = started["position"] + 1
    return results, crashes


def describe(results, crashes):
    """The summary the failures print: counts, then every refusal, error, wrong answer and crash."""
    lines = []
    statuses = {}
    for r in results.values():
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    lines.append(f"{len(results)} programs ran: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
                 + f"; {len(crashes)} crashed")
    for c in crashes:
        lines.append(f"CRASH {c['name']}: {c['how']}\n    " + c["stderr"].strip().replace("\n", "\n    "))
    for r in results.values():
        if r["status"] in ("refused", "error", "build error"):
            lines.append(f"{r['status'].upper()} {r['name']}: {r['message']}".replace("\n", "\n    "))
        elif r["status"] == "wrong":
            caught = f"\n    caught by raspc, which refused it: {r['caught']}" if r.get("caught") else ""
            lines.append(f"WRONG {r['name']}: {r['wrong']} of {r['checked']} inputs wrong (model), "
                         f"{r['interpreter_wrong']} (interpreter), raspc verification mismatches "
                         f"{r['figures']['mismatches']}; first: {r.get('first_wrong')}; "
                         f"interpreter's first: {r.get('first_interpreter_wrong')}{caught}")
    return "\n".join(lines)


# --- the tests ----------------------------------------------------------------------------------

def test_the_corpus_covers_tracrs_lib_and_sixty_programs_of_our_own():
    names = [e.name for e in corpus.ENTRIES]
    assert len(names) == len(set(names)), "entry names must be unique"
    assert all(n.replace("_", "").replace("-", "").isalnum() for n in names), names
    covered = {f for e in corpus.ENTRIES for f in e.lib_functions}
    assert corpus.lib_functions() <= covered, f"lib functions without an entry: {corpus.lib_functions() - covered}"
    assert len(corpus.OWN_ENTRIES) >= 60
    assert all(4 <= e.max_seq_len <= 10 for e in corpus.ENTRIES)


def test_every_program_compiles_right_and_nothing_crashes(tmp_path):
    results, crashes = run_corpus(str(tmp_path / "corpus"))
    summary = describe(results, crashes)
    print(summary)
    assert not crashes, summary
    assert len(results) == len(corpus.ENTRIES), summary
    failures = []
    for entry in corpus.ENTRIES:
        r = results[entry.name]
        if r["status"] == "refused":
            located = (r["path"] or "").startswith("tracr:") and r["line"] is not None
            if not located:
                failures.append(f"{entry.name}: a refusal without a place in the listing: {r['message']}")
            elif entry.expected_refusal is None:
                failures.append(f"{entry.name}: refused: {r['message']}")
        elif entry.expected_refusal is not None:
            failures.append(f"{entry.name}: expected a refusal ({entry.expected_refusal}), got {r['status']}")
        elif r["status"] == "wrong":
            failures.append(f"{entry.name}: wrong on {r['wrong']} of {r['checked']} inputs; "
                            f"first: {r.get('first_wrong')}")
        elif r["status"] != "right":
            failures.append(f"{entry.name}: {r['status']}: {r.get('message')}")
        if r["status"] in ("right", "wrong"):
            # At least 200 inputs where Tracr's evaluator is defined, or every input of the domain;
            # and the program is one Tracr's evaluator defines on most inputs.
            exhausted = r["tried"] < corpus.MAX_CANDIDATES and r["checked"] < corpus.CHECKED_INPUTS
            if r["checked"] < corpus.CHECKED_INPUTS and not exhausted:
                failures.append(f"{entry.name}: only {r['checked']} defined inputs in {r['tried']}")
            if r["checked"] < MIN_DEFINED_SHARE * r["tried"]:
                failures.append(f"{entry.name}: Tracr's evaluator is undefined on most inputs "
                                f"({r['checked']} of {r['tried']})")
    assert not failures, "\n".join(failures) + "\n\n" + summary


def _first_difference(path, other_path):
    """Where two model files differ: the first line of the converted listing, else the residual
    labels, else the weights (for the failure message)."""
    import raspc
    a, b = raspc.load(path), raspc.load(other_path)
    for line_a, line_b in zip(a.metadata.get("program", "").splitlines(), b.metadata.get("program", "").splitlines()):
        if line_a != line_b:
            return f" (listing: {line_a!r} / {line_b!r})"
    if a.residual_labels != b.residual_labels:
        return " (residual labels)"
    return " (weights or metadata)"


def test_the_same_programs_in_any_order_give_the_same_model_bytes(tmp_path):
    # Three orders, each program built after the reset: the ids a program draws, and those
    # rasp.tokens / rasp.indices / lib.length hold, differ between them. raspc's verification is
    # off here (it checks, it does not change the model; the test above runs it).
    runs = {}
    for order in ("corpus", "reversed", "shuffled-1"):
        results, crashes = run_corpus(str(tmp_path / order), order=order, verify=False, save=True, check=False)
        assert not crashes, describe(results, crashes)
        runs[order] = tmp_path / order / "models"
    compiled = sorted(p.name for p in runs["corpus"].iterdir())
    assert len(compiled) >= 0.9 * len(corpus.ENTRIES), f"only {len(compiled)} programs compiled"
    differ = [f"{p.name}: compiled in {order} order, not in corpus order" for order in ("reversed", "shuffled-1")
              for p in runs[order].iterdir() if p.name not in compiled]
    for name in compiled:
        reference = (runs["corpus"] / name).read_bytes()
        for order in ("reversed", "shuffled-1"):
            other = runs[order] / name
            if not other.exists():
                differ.append(f"{name}: compiled in corpus order, not in {order} order")
            elif other.read_bytes() != reference:
                where = _first_difference(runs["corpus"] / name, other)
                differ.append(f"{name}: the {order} order's model differs{where}")
    assert not differ, f"{len(differ)} of {len(compiled)} models differ:\n" + "\n".join(differ)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(child_main(sys.argv[2:]))
    sys.exit("run by pytest; `--child ...` runs the corpus (see run_corpus)")
