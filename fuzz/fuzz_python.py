"""The calls of the Python fuzz target (fuzz_python.cpp embeds CPython and runs `run(data)` on
every input): the bytes choose entry points of the public API and the arguments each gets, a
valid one or a hostile value of any type (None, bools, huge ints, NaN, lone surrogates, bytes,
nested lists, dicts, numpy arrays of odd dtypes and shapes, raspc objects where others belong).
Every call must return or raise a raspc.RaspcError; anything else escapes to the C++ side,
which aborts with it. Files are written only inside the scratch folder `setup` is given, under
a few fixed names (the model's own file among them, to try overwriting it)."""

import fractions
import os
import shutil

import numpy

import raspc

SCRATCH = None
PROGRAM = None     # hist, with its header
MODEL = None       # hist compiled at max length 4, saved as model.safetensors
FORWARD = None
WORDS = ["a", "b", "c", "d", "<bos>", "BOS", ",", "[", "]", "a,b", "[a, b]", "", " ", "\n", "0", "1", "-1",
         "3.7", "1/3", "True", "abca", "[1,2]", "cpu", "cuda", "gpu", "gguf", "hf", "tlens", "llmc", "onnx",
         "gelu", "relu", "tanh", "infer", "simplify", "lower", "verify", "nope", "blocks.0.hook_resid_pre",
         "blocks.0.hook_resid_mid", "blocks.9.hook_resid_post", "wte", "h.0.attn.c_attn.weight", "x = tokens;\nx;",
         "hist = selector_width(select(tokens, tokens, ==));\nhist;", "select(", "aggregate(tokens);",
         "def f(x) { return x; }\nf(tokens);", "\ud800", "é", "a" * 300]


def setup(scratch):
    global SCRATCH, PROGRAM, MODEL, FORWARD
    # Never chdir: libFuzzer reads and writes its corpus by paths relative to where it started.
    SCRATCH = scratch
    with open(inside("hist.rasp"), "w") as f:
        f.write("# vocab: a b c d\nhist = selector_width(select(tokens, tokens, ==));\nhist;\n")
    PROGRAM = raspc.Program.from_file(inside("hist.rasp"))
    MODEL = raspc.compile(PROGRAM, max_len=4)
    MODEL.save(inside("model.safetensors"))
    FORWARD = MODEL.forward("abca")
    for name in ("hist.rasp", "model.safetensors"):
        with open(inside(name), "rb") as f:
            ORIGINALS[name] = f.read()


def inside(name):
    return os.path.join(SCRATCH, name)


ORIGINALS = {}


def check_inputs_kept():
    """The program and the model file are the sources of the models written (MODEL was compiled
    from the one, the loaded model read from the other): no call may replace them (a loaded model
    saved over its own file may write the same bytes)."""
    for name, content in ORIGINALS.items():
        full = os.path.join(SCRATCH, name)
        if not os.path.isfile(full) or os.path.islink(full) or open(full, "rb").read() != content:
            raise AssertionError(f"{name} was replaced")


class Bytes:
    """The input read a choice at a time; past its end every choice is 0."""

    def __init__(self, data):
        self.data, self.at = data, 0

    def byte(self):
        self.at += 1
        return self.data[self.at - 1] if self.at <= len(self.data) else 0

    def take(self, n):
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk


def hostile(b, depth=0):
    kind = b.byte() % 17
    if kind == 0:
        return None
    if kind == 1:
        return b.byte() % 2 == 0
    # Small ints stay small: a valid max_len of 100 is a compile of seconds here but minutes in the
    # sanitized build, and libFuzzer takes 30 s for a hang.
    if kind == 2:
        return b.byte() % 24 - 8
    if kind == 3:
        return [2 ** 31, -2 ** 31, 2 ** 63, 2 ** 64, -2 ** 64, 10 ** 30, 4097, 10 ** 12][b.byte() % 8]
    if kind == 4:
        raw = b.take(8).ljust(8, b"\0")
        return numpy.frombuffer(raw, dtype=numpy.float64)[0].item()
    if kind == 5:
        return [float("nan"), float("inf"), -float("inf"), 0.5, 3.7, -0.0][b.byte() % 6]
    if kind == 6:
        return b.take(b.byte() % 16).decode("utf-8", "surrogateescape")
    if kind in (7, 8):
        return WORDS[b.byte() % len(WORDS)]
    if kind == 9:
        return bytes(b.take(b.byte() % 8))
    if kind in (10, 11) and depth < 3:
        items = [hostile(b, depth + 1) for _ in range(b.byte() % 6)]
        return items if kind == 10 else tuple(items)
    if kind == 12 and depth < 3:
        return {str(hostile(b, depth + 1)): hostile(b, depth + 1) for _ in range(b.byte() % 4)}
    if kind == 13:
        return fractions.Fraction(b.byte() - 128, b.byte() % 7 + 1)
    if kind == 14:
        dtype = [numpy.float32, numpy.float64, numpy.int64, numpy.bool_, object, numpy.uint8][b.byte() % 6]
        shape = tuple(b.byte() % 5 for _ in range(b.byte() % 4))
        return numpy.zeros(shape, dtype=dtype)
    if kind == 15:
        return [PROGRAM, MODEL, FORWARD, PROGRAM._native, MODEL._native, object(), raspc, print][b.byte() % 8]
    if kind == 16:
        return [set("ab"), frozenset(), range(3), iter([1]), b"ab", bytearray(b"a"), memoryview(b"a")][b.byte() % 7]
    return None


def path(b, sources=("hist.rasp", "model.safetensors")):
    """Only names inside the scratch folder: its files, a folder, a missing folder's child. A model
    may not write over the files it came from (`sources`); any other file is just a file to write,
    so a writing call is given only its model's sources of the two."""
    names = ["model.safetensors" if "model.safetensors" in sources else "compiled.safetensors",
             "hist.rasp" if "hist.rasp" in sources else "other.rasp", "out", "out/model.safetensors",
             "missing/sub/x", "x.gguf", "folder", ".", "", "model.safetensors/x"]
    choice = b.byte()
    if choice < 200:
        return inside(names[choice % len(names)])
    value = hostile(b)
    # A text the bytes made is a name inside the scratch folder too (where "" and "." are that folder).
    return inside(value.replace("/", "_").replace("..", "_")) if isinstance(value, str) else value


def argument(b, valid):
    """The valid value (a callable making it) most of the time, else a hostile one."""
    return (valid() if callable(valid) else valid) if b.byte() < 160 else hostile(b)


def tokens_value(b):
    return [["a", "b", "c"], "abca", ["a"], "[a, b]", [], ["a"] * 6][b.byte() % 6]


CALLS = [
    lambda b: raspc.parse(argument(b, lambda: WORDS[b.byte() % len(WORDS)]), argument(b, "<fuzz>"),
                          argument(b, None)),
    lambda b: raspc.evaluate(argument(b, PROGRAM), argument(b, lambda: tokens_value(b)), causal=argument(b, False),
                             trace=argument(b, False)),
    lambda b: raspc.compile(argument(b, PROGRAM), vocab=argument(b, None), max_len=argument(b, lambda: b.byte() % 5 + 1),
                            causal=argument(b, None), layer_norm=argument(b, True),
                            verify=argument(b, lambda: b.byte() % 2 == 0), activation=argument(b, "gelu"),
                            verify_len=argument(b, 0), samples=argument(b, 20), seed=argument(b, 1),
                            device=argument(b, "cpu"), dump_after=argument(b, None), explain=argument(b, False),
                            threads=argument(b, lambda: b.byte() % 3)),
    lambda b: raspc.load(path(b)),
    lambda b: raspc.Program.from_file(path(b), argument(b, None)),
    lambda b: MODEL.run(argument(b, lambda: tokens_value(b)), argument(b, "cpu")),
    lambda b: MODEL.forward(argument(b, lambda: tokens_value(b)), argument(b, True), argument(b, "cpu")),
    lambda b: MODEL.decode_residual(argument(b, lambda: tokens_value(b)), argument(b, lambda: b.byte() % 4 - 1)),
    lambda b: FORWARD.decode_residual(argument(b, lambda: b.byte() % 4)),
    lambda b: MODEL.save(path(b, sources=["hist.rasp"])),
    lambda b: MODEL.export(path(b, sources=["hist.rasp"]),
                           argument(b, lambda: ["gguf", "hf", "tlens", "llmc"][b.byte() % 4])),
    lambda b: MODEL.format_tensor(argument(b, "wte")),
    lambda b: MODEL.view(argument(b, lambda: tokens_value(b)), argument(b, "model")).save(path(b, ["hist.rasp"])),
    lambda b: raspc.load(inside("model.safetensors")).export(path(b, sources=["model.safetensors"]),
                                                             argument(b, "gguf")),
    lambda b: raspc.load(inside("model.safetensors")).save(path(b, sources=["model.safetensors"])),
    lambda b: MODEL._native.decode_stream(argument(b, lambda: FORWARD.residual), argument(b, lambda: FORWARD._ids)),
    lambda b: raspc.compile(raspc.parse(WORDS[b.byte() % len(WORDS)]), vocab=argument(b, ["a", "b"]),
                            max_len=argument(b, lambda: b.byte() % 4 + 1), causal=argument(b, False)),
    lambda b: MODEL.patch(argument(b, lambda: tokens_value(b)), argument(b, lambda: tokens_value(b)),
                          argument(b, lambda: ["hist", "tokens", "hits"][b.byte() % 3])),
    lambda b: MODEL.ablate(argument(b, lambda: tokens_value(b)), argument(b, lambda: ["a0.0", "m0", "a3.1"][b.byte() % 3]),
                           argument(b, lambda: ["zero", "mean", "bos"][b.byte() % 3]),
                           mean_over=argument(b, lambda: b.byte() % 5 + 1), seed=argument(b, 0)),
    lambda b: raspc.circuits.score(argument(b, lambda: [["a0.0", ("embed", "a0.0", "q")], {("m0", "unembed"): 0.5},
                                                        ["m0", ("embed", "m0")]][b.byte() % 3]),
                                   argument(b, lambda: MODEL.circuit())),
    lambda b: MODEL.verify_interventions(argument(b, lambda: b.byte() % 4 + 1), max_len=argument(b, None),
                                         seed=argument(b, 0)),
    lambda b: raspc.dataset(argument(b, PROGRAM), lengths=argument(b, lambda: (1, b.byte() % 4 + 1)),
                            n=argument(b, lambda: b.byte() % 50), max_len=argument(b, None), vocab=argument(b, None),
                            causal=argument(b, None), seed=argument(b, 1), held_out=argument(b, 4),
                            threads=argument(b, lambda: b.byte() % 3), path=argument(b, lambda: path(b, ["hist.rasp"]))),
]


def run(data):
    # Each input starts from the same folder: the program and the model file, nothing else.
    for entry in os.listdir(SCRATCH):
        if entry not in ("hist.rasp", "model.safetensors"):
            full = os.path.join(SCRATCH, entry)
            shutil.rmtree(full) if os.path.isdir(full) and not os.path.islink(full) else os.remove(full)
    b = Bytes(data)
    for _ in range(4):
        if b.at >= len(data):
            break
        try:
            CALLS[b.byte() % len(CALLS)](b)
        except raspc.RaspcError:
            pass
        check_inputs_kept()
