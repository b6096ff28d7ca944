"""raspc: RASP programs compiled into real, verified GPT-2 weights.

The compiler, the interpreter, the runtime and the verifier are raspc's C++ ones (the ``_raspc``
extension module); this package only converts between them and Python::

    import raspc
    program = raspc.Program.from_file("programs/sort.rasp")
    raspc.evaluate(program, [3, 1, 2])            # [1, 2, 3], exact
    model = raspc.compile(program, max_len=8)     # verified GPT-2
    model.run([3, 1, 2])                          # [1, 2, 3]

(Over 500 lines, as one file on purpose: the package's whole public surface -- Program, compile,
Model, Forward, View -- with the docstrings that are its reference, read in one place.)
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from fractions import Fraction
from typing import Any, Optional, Sequence, Union

# _raspc initialises numpy's C API as it loads (so that two threads' first calls cannot deadlock
# on it); without numpy that fails as "ImportError: initialization failed", so say what is missing.
import numpy  # noqa: F401

from . import _raspc, circuits
from ._datasets import dataset
from .errors import CompileError, FileError, InputError, RaspcError, RaspcWarning, UndefinedError

# An input: a list (or tuple) of tokens, or text in the command line's --input form ("hello", "[3,1,2]").
Tokens = Union[str, Sequence]

__all__ = [
    "Program", "Model", "Forward", "View", "parse", "evaluate", "compile", "load", "from_tracr", "dataset",
    "RaspcError", "CompileError", "InputError", "FileError", "UndefinedError", "RaspcWarning",
]


class Program:
    """A RASP program: the DAG of s-ops and selectors that evaluating its source produced."""

    def __init__(self, native):
        self._native = native

    @staticmethod
    def from_file(path: Union[str, os.PathLike], output: Optional[str] = None) -> Program:
        """Reads and evaluates a .rasp file; ``output`` names the s-op to output (default: the
        last expression statement), as ``--output`` does."""
        return Program(_raspc.parse_file(_path(path, "path"), _output_name(output)))

    @property
    def source(self) -> str:
        return self._native.source

    @property
    def filename(self) -> str:
        return self._native.filename

    @property
    def output(self) -> str:
        """The label of the s-op the program outputs."""
        return self._native.output

    @property
    def names(self) -> list[str]:
        """Every top-level name bound to an s-op or selector, in the order first assigned."""
        return self._native.names

    @property
    def vocab(self) -> list:
        """The vocabulary the ``# vocab:`` header line declares (empty without one)."""
        return self._native.vocab

    @property
    def causal(self) -> Optional[bool]:
        """What the ``# causal:`` header line says (``None`` without one)."""
        return self._native.causal

    @property
    def expectations(self) -> list[tuple[str, str, bool]]:
        """The header's ``# expect:`` lines as (input, output, causal) tuples of text."""
        return self._native.expectations

    def __repr__(self):
        return f"<raspc.Program {self.filename} output={self.output}>"


def parse(source: str, filename: str = "<string>", output: Optional[str] = None) -> Program:
    """Evaluates RASP source text into a Program. A syntax or evaluation error raises
    CompileError with the located diagnostic (``.path``, ``.line``, ``.column``)."""
    return Program(_raspc.parse(_text(source, "source"), _text(filename, "filename"), _output_name(output)))


def evaluate(program: Program, tokens: Tokens, *, causal: bool = False, trace: bool = False) -> Union[list, dict]:
    """Runs the reference interpreter on one input: a list of tokens, or a string in the CLI's
    ``--input`` form ("hello", "[3,1,2]"). Values are exact: ints, ``fractions.Fraction``, bools
    and strs. With ``trace``, a dict of every named s-op's values and ``"output"``."""
    _expect(causal, bool, "causal", "True or False")
    _expect(trace, bool, "trace", "True or False")
    return _raspc.evaluate(_native_program(program), _tokens(tokens), causal, trace)


def compile(program: Program, *, vocab: Union[None, str, Sequence] = None, max_len: int = 16,
            causal: Optional[bool] = None, layer_norm: bool = True, verify: bool = True, activation: str = "gelu",
            verify_len: int = 0, samples: int = 10000, seed: int = 1, device: str = "cpu",
            dump_after: Optional[str] = None, explain: bool = False, progress: Optional[bool] = None,
            threads: int = 0) -> Model:
    """Compiles a program into a verified GPT-2 Model. ``vocab`` defaults to the program's
    ``# vocab:`` line (a str is read as the CLI's ``--vocab``: "abc", "a b c", "[1,2,3]");
    ``causal`` defaults to its ``# causal:`` line. A refusal, or a verification that finds a
    mismatch, raises CompileError with the same diagnostic ``raspc compile`` prints.
    ``dump_after`` (a pass name) and ``explain`` print what ``--dump-after`` and ``--explain``
    print, to sys.stdout, as soon as the compiler has it. ``progress``: a bar for the verification
    (tqdm's, in a notebook its widget where ipywidgets is installed); None (the default) shows it
    when tqdm is installed and the verification runs over two seconds, True always (a plain line
    on stderr without tqdm), False never. Ctrl-C (a notebook's stop button) ends a compile with
    KeyboardInterrupt. ``threads``: the CPU verification's threads (0, the default: every core);
    the report is the same for every count."""
    native = _native_program(program)
    if vocab is None:
        vocab = native.vocab
    elif isinstance(vocab, str):
        vocab = _raspc.parse_vocabulary(_text(vocab, "vocab"))
    if causal is None:
        causal = bool(native.causal)
    # Strict types, as the command line's flags have: 3.7 is not a length, "no" is not False.
    _expect(max_len, int, "max_len", "a whole number")
    _expect(verify_len, int, "verify_len", "a whole number")
    _expect(samples, int, "samples", "a whole number")
    _expect(seed, int, "seed", "a whole number")
    _expect(threads, int, "threads", "a whole number")
    if not 0 <= threads <= 1024:
        raise InputError(f"threads: error: must be from 0 (every core) to 1024, not {threads}")
    if seed < 0 or seed >= 2 ** 64:
        raise InputError(f"seed: error: must be from 0 to 2^64 - 1, not {seed}")
    if progress is not None:
        _expect(progress, bool, "progress", "True, False or None")
    for value, name in ((causal, "causal"), (layer_norm, "layer_norm"), (verify, "verify"), (explain, "explain")):
        _expect(value, bool, name, "True or False")
    for value, name in ((activation, "activation"), (device, "device")):
        _text(value, name)
    if dump_after is not None:
        _expect(dump_after, str, "dump_after", "a pass name")
        _text(dump_after, "dump_after")
    if not isinstance(vocab, (list, tuple, set, frozenset)):
        raise InputError(f"vocab: error: must be a list of tokens or a string, not {type(vocab).__name__}")
    # A number beyond C++'s int is out of the compiler's bounds (check_compile_limits) too; it is
    # refused here only because it cannot reach that check.
    for value, name, top in ((max_len, "max_len", _raspc.max_compile_length), (verify_len, "verify_len", None),
                             (samples, "samples", _raspc.max_samples)):
        if not -2 ** 31 < value < 2 ** 31:
            bound = f"between 1 and {top}" if name == "max_len" else (f"from 0 to {top}" if top else "at most max_len")
            raise InputError(f"{name}: error: must be {bound}, not {value}")
    with _VerifyProgress(progress) as bar:
        native_model = _raspc.compile(native, list(vocab), max_len, causal, layer_norm, activation, verify, verify_len,
                                      samples, seed, device, dump_after or "", explain, bar.update, threads)
    return Model(native_model, getattr(program, "_codec", None))


class _VerifyProgress:
    """The verification's progress for compile(progress=...): the compiler calls ``update(done,
    total)`` between batches, with the GIL held."""

    def __init__(self, show):
        self.show, self.bar, self.last_line = show, None, 0.0
        self.tqdm = None
        if show is not False:
            try:
                if "ipykernel" in sys.modules and importlib.util.find_spec("ipywidgets"):
                    from tqdm.notebook import tqdm
                else:
                    from tqdm import tqdm
                self.tqdm = tqdm
            except ImportError:
                pass

    def update(self, done, total):
        if self.show is False or total <= 0:
            return
        if self.tqdm is not None:
            if self.bar is None:
                # delay: a verification of under two seconds shows nothing unless asked to.
                self.bar = self.tqdm(total=total, unit=" inputs", desc="verifying", delay=0 if self.show else 2)
            self.bar.update(done - self.bar.n)
        elif self.show and (done == total or time.monotonic() - self.last_line >= 1):
            self.last_line = time.monotonic()
            print(f"verifying: {done:,} of {total:,} inputs", file=sys.stderr, flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()


def load(path: Union[str, os.PathLike]) -> Model:
    """Reads a model file (safetensors) that ``raspc compile -o`` or Model.save wrote."""
    return Model(_raspc.load(_path(path, "path")))


def _native_program(program):
    if isinstance(program, Program):
        return program._native
    raise InputError(f"program: error: expected a raspc.Program (from raspc.parse, Program.from_file or "
                     f"from_tracr), not {type(program).__module__}.{type(program).__name__}")


def _text(value, name):
    """A str argument that C++ can take: text, and encodable as UTF-8 (no lone surrogate)."""
    _expect(value, str, name, "a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{name}: error: {value!r} is not valid text (it holds a lone surrogate)") from None
    return value


def _int(value, name, low=0, high=2**31 - 1):
    """An int argument within what C++ takes (a bool is not one)."""
    _expect(value, int, name, "an int")
    if not low <= value <= high:
        raise InputError(f"{name}: error: must be from {low} to {high}, not {value}")
    return value


def _output_name(output):
    """The s-op to output: None for the last expression statement, or its name. (Never tested for
    truth: a numpy array has none, found by fuzz_python.)"""
    return "" if output is None else _text(output, "output")


def _path(value, name):
    """A file name: a str or an os.PathLike, as text."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes) or not isinstance(value, str):
        raise InputError(f"{name}: error: must be a file name (a str or a pathlib.Path), not {value!r:.60}")
    return _text(value, name)


def _tokens(tokens):
    """An input as the C++ side takes it: text in --input's form, or a list (or tuple) of tokens."""
    if isinstance(tokens, str):
        return _text(tokens, "tokens")
    if not isinstance(tokens, (list, tuple)):
        raise InputError(f"tokens: error: must be a string or a list of tokens, not {type(tokens).__name__}")
    for token in tokens:
        if isinstance(token, str):
            _text(token, "tokens")
    return tokens


def _expect(value, kind, name, what):
    """An argument of the type the command line's flag would have: a bool is not a number here."""
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise InputError(f"{name}: error: must be {what}, not {value!r}")


def _value_of_display(text):
    """A model output as a Python value: the decoded token's text read back the way the
    interpreter displays values (3, 1/3, True; anything else stays a str)."""
    if text in ("True", "False"):
        return text == "True"
    try:
        return int(text)
    except ValueError:
        pass
    if "/" in text:
        try:
            return Fraction(text)
        except ValueError:
            return text
    try:
        return float(text)
    except ValueError:
        return text


class Forward:
    """One forward pass: ``logits`` (T, V), and with capture ``residual`` (2L+1, T, C: the
    embeddings, then the stream after every attention and every MLP), ``attention``
    (L, H, T, T, [query][key]) and, on the CPU, ``scores`` (L, H, T, T: each head's scores before
    the softmax, q.k / sqrt(d_head), -inf where a key is masked) and ``final`` (T, C: the stream
    the unembedding reads, after ln_f where the model has one) as numpy arrays; T counts BOS."""

    def __init__(self, model, result):
        self.model = model
        self.tokens = result["tokens"]
        self.logits = result["logits"]
        self.residual = result.get("residual")
        self.attention = result.get("attention")
        self.scores = result.get("scores")
        self.final = result.get("final")
        self.outputs = [model._output_value(v) for v in result["outputs"]]
        self.margins = result["margins"]
        self._ids = result["ids"]

    @property
    def cache(self) -> dict[str, Any]:
        """The captured activations by TransformerLens's hook names, shaped as TransformerLens's
        ``run_with_cache`` shapes them (a batch of one first): ``hook_embed`` and ``hook_pos_embed``
        (1, T, C: the token and position embeddings), ``blocks.L.hook_resid_pre`` / ``_mid`` /
        ``_post`` (1, T, C), ``blocks.L.attn.hook_pattern`` (1, H, T, T [query][key]), on the CPU
        ``blocks.L.attn.hook_attn_scores`` (1, H, T, T) and ``ln_final.hook_normalized`` (1, T, C,
        with a LayerNorm). Only what the forward computed: no sum is taken apart again."""
        if self.residual is None:
            raise InputError("cache: error: this forward did not capture its activations (capture=True)")
        weights = self.model.weights
        cache = {"hook_embed": weights["transformer.wte.weight"][self._ids][None],
                 "hook_pos_embed": weights["transformer.wpe.weight"][:len(self._ids)][None]}
        for layer in range(self.attention.shape[0]):
            cache[f"blocks.{layer}.hook_resid_pre"] = self.residual[2 * layer][None]
            if self.scores is not None:
                cache[f"blocks.{layer}.attn.hook_attn_scores"] = self.scores[layer][None]
            cache[f"blocks.{layer}.attn.hook_pattern"] = self.attention[layer][None]
            cache[f"blocks.{layer}.hook_resid_mid"] = self.residual[2 * layer + 1][None]
            cache[f"blocks.{layer}.hook_resid_post"] = self.residual[2 * layer + 2][None]
        if self.model.config["layer_norm"]:
            cache["ln_final.hook_normalized"] = self.final[None]
        return cache

    def _repr_html_(self) -> str:
        """In Jupyter: the view page of this forward's input (Model.view)."""
        return self.model.view(self._input)._repr_html_()

    def __repr__(self):
        captured = "captured" if self.residual is not None else "not captured"
        return f"<raspc.Forward {len(self._ids)} positions (BOS included), outputs {self.outputs}, activations {captured}>"

    @property
    def stages(self) -> list[str]:
        """The residual stages by their TransformerLens hooks, as ``run --trace`` and ``view`` name
        them: "blocks.0.hook_resid_pre" (the embedding), "blocks.0.hook_resid_mid" (after block 0's
        attention), "blocks.0.hook_resid_post" (after its MLP), "blocks.1.hook_resid_mid", ..."""
        return self.model.stages

    def decode_residual(self, stage: Union[int, str]) -> dict[str, list]:
        """The s-op values the residual stream holds after ``stage`` (an index into ``stages``
        or its name), by the s-op's shown name (the name the program gave it, else its expression, as
        ``run --trace`` names its rows, a selector width's scratch value "hist (scratch)" among them),
        one value a position (BOS included), decoded as ``raspc run
        --trace`` and ``raspc view`` decode them (through the s-op placement the compiler stores
        in the model): None before the s-op's stage (nothing has computed it yet), at BOS (which
        holds no s-op's value) and where its one-hot has no clear winner. A model without
        placement metadata (a trained one) decodes to no s-ops."""
        if self.residual is None:
            raise InputError("stage: error: this forward did not capture the residual stream (capture=True)")
        if isinstance(stage, str) and stage in self.stages:
            stage = self.stages.index(stage)
        elif isinstance(stage, bool) or not isinstance(stage, int) or not -len(self.stages) <= stage < len(self.stages):
            raise InputError(f"stage: error: {stage!r} is none of the stages {', '.join(self.stages)} (or their "
                             f"indices 0 to {len(self.stages) - 1})")
        decoded, first = self.model._native.decode_stream(self.residual, self._ids)
        return {name: [None if t < first or text in ("", "?") else self.model._output_value(text)
                       for t, text in enumerate(texts)]
                for name, texts in decoded[stage].items()}


class View:
    """A ``raspc view`` page (Model.view): ``.html`` is the self-contained page; a notebook shows it
    inline, in a frame of its own (its styles and script stay inside it), ``height`` pixels tall."""

    def __init__(self, model, html, height=720):
        self.model = model
        self.html = html
        self.height = height

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the page (atomically), as ``raspc view -o`` does; never over the files the model
        came from."""
        self.model._native.write_page(_path(path, "path"), self.html)

    def _repr_html_(self) -> str:
        import html
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" style="width: 100%; height: {int(self.height)}px; '
                f'border: 1px solid #ccc" sandbox="allow-scripts"></iframe>')

    def __repr__(self):
        return f"<raspc.View {len(self.html)} characters of HTML>"


class Model:
    """A GPT-2 model compiled by raspc (or loaded from a file)."""

    def __init__(self, native, codec=None):
        self._native = native
        self._codec = codec

    @property
    def config(self) -> dict[str, Any]:
        """n_layer, n_head, n_embd, n_inner, n_positions, vocab_size, causal, layer_norm,
        activation: the GPT-2 configuration."""
        return self._native.config

    @property
    def vocab(self) -> list[str]:
        """The token strings by id (BOS included)."""
        return self._native.vocab

    @property
    def stages(self) -> list[str]:
        """The residual stages by their TransformerLens hooks, as Forward.stages and ``run --trace``
        name them: "blocks.0.hook_resid_pre", "blocks.0.hook_resid_mid", ..."""
        return self._native.stage_names()

    @property
    def residual_labels(self) -> list[str]:
        """One label a residual dimension: "tokens:a", "hist:3", "frac", "one", "bos", ..."""
        return self._native.residual_labels

    @property
    def report(self) -> dict[str, Any]:
        """The compiler's report as a dict: the object `raspc compile --json` prints (docs/json.md);
        a model loaded from a file has the part the file keeps."""
        return self._native.report

    @property
    def metadata(self) -> dict[str, Any]:
        return self._native.metadata

    @property
    def weights(self) -> dict[str, Any]:
        """Every parameter under its Hugging Face GPT-2 name, as read-only numpy views of the
        model's own storage (no copy); they keep the model's storage alive."""
        return self._native.weights

    def run(self, tokens: Tokens, device: str = "cpu") -> list:
        """The decoded output at every input position (BOS excluded)."""
        return self.forward(tokens, capture=False, device=device).outputs

    def forward(self, tokens: Tokens, capture: bool = True, device: str = "cpu") -> Forward:
        """Runs the model on one input; with ``capture``, the residual stream after every
        half-block and every head's attention pattern too. Returns a Forward."""
        _expect(capture, bool, "capture", "True or False")
        forward = Forward(self, self._native.forward(_tokens(tokens), capture, _text(device, "device")))
        forward._input = tokens
        return forward

    def run_with_cache(self, tokens: Tokens, device: str = "cpu") -> tuple[Any, dict[str, Any]]:
        """TransformerLens's ``run_with_cache`` for one input: the logits (1, T, V) and the
        activations by hook name (Forward.cache). T counts BOS."""
        forward = self.forward(tokens, device=device)
        return forward.logits[None], forward.cache

    def decode_residual(self, tokens: Tokens, stage: Union[int, str]) -> dict[str, list]:
        """Forward.decode_residual of this input: the s-op values the residual holds."""
        return self.forward(tokens).decode_residual(stage)

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the model as one safetensors file (atomically), as ``raspc compile -o``."""
        self._native.save(_path(path, "path"))

    def export(self, path: Union[str, os.PathLike], format: str) -> None:
        """Writes the model for another runtime, as ``raspc export`` does: "hf" (a Hugging Face
        transformers folder), "tlens" (a TransformerLens folder with its loader), "gguf" (a
        file), "llmc" (an llm.c folder). A format that cannot run the model exactly refuses it
        (FileError, with the reason), before anything is written."""
        self._native.export(_path(path, "path"), _text(format, "format"))

    def to_transformers(self, folder: Optional[Union[str, os.PathLike]] = None) -> Any:
        """The model as a Hugging Face ``GPT2LMHeadModel``, loaded from an "hf" export (into
        ``folder``, kept; else a temporary folder). Its logits are this model's. A bidirectional
        program's model is the export's ``RaspcBidirectionalGPT2`` (raspc_gpt2.py: GPT2LMHeadModel
        whose default is no mask; GPT-2's own default mask is causal and would give wrong answers).
        ``.raspc`` holds raspc's metadata (vocab, bos_id, output, residual_labels)."""
        transformers = _require("transformers", "Model.to_transformers")
        with _export_folder(folder, "raspc-hf-") as path:
            self.export(path, "hf")
            model_class = transformers.GPT2LMHeadModel
            if not self.config["causal"]:
                model_class = _module_from_file(os.path.join(path, "raspc_gpt2.py"), "raspc_gpt2").RaspcBidirectionalGPT2
            model = model_class.from_pretrained(path)
        model.eval()
        model.raspc = model.config.raspc  # the export's own metadata (config.json's "raspc")
        return model

    def to_transformer_lens(self, folder: Optional[Union[str, os.PathLike]] = None) -> Any:
        """The model in TransformerLens (4.x: a TransformerBridge; 2.x: a HookedTransformer),
        loaded by the loader the "tlens" export ships, unprocessed (no fold_ln or centring, so
        the residual stream holds what ``residual_labels`` name), with the export's tokenizer where
        transformers is installed (``to_str_tokens``, ``generate``). ``.raspc`` holds the metadata."""
        _require("transformer_lens", "Model.to_transformer_lens")
        with _export_folder(folder, "raspc-tlens-") as path:
            self.export(path, "tlens")
            return _module_from_file(os.path.join(path, "load_tlens.py"), "raspc_load_tlens").load(path)

    def view(self, tokens: Tokens, title: Optional[str] = None, *, height: int = 720) -> View:
        """The page ``raspc view`` writes, for one input (a list of tokens, or text in --input's
        form): the s-op graph, the residual stream at every stage decoded and checked against the
        interpreter, every head's attention and every weight matrix. ``title`` defaults to the
        program's output name ("hist"), else "model". A notebook shows the View inline, in a frame
        ``height`` pixels tall; ``.html`` is the page, ``.save(path)`` writes it."""
        if title is None:
            outputs = [sop.get("shown") or sop.get("name") for sop in (self.metadata.get("sops") or [])
                       if isinstance(sop, dict) and sop.get("output")]
            title = outputs[0] if outputs and isinstance(outputs[0], str) else "model"
        _expect(height, int, "height", "a whole number of pixels")
        if not 0 < height < 100_000:
            raise InputError(f"height: error: must be from 1 to 99,999 pixels, not {height}")
        return View(self, self._native.view(_tokens(tokens), _text(title, "title")), height)

    def describe(self) -> str:
        """What ``raspc inspect`` prints first: config, sizes, vocabulary, labels, metadata."""
        return self._native.describe()

    def circuit(self) -> circuits.Circuit:
        """The model's circuit (``raspc circuit``): its heads, MLPs and embeddings, what each reads and
        writes, with TransformerLens's hook names; what a circuit-discovery method should find.
        ``raspc.circuits.score(found, model.circuit())`` scores what one found."""
        return circuits.Circuit(self, *_raspc.circuit(self._native))

    def patch(self, tokens: Tokens, source: Tokens, sop: str) -> circuits.Intervention:
        """Runs the model on ``tokens`` with s-op ``sop``'s residual dimensions patched from its run on
        ``source`` (the same length), beside the interpreter run with ``sop`` taking its values on
        ``source`` (``raspc patch --from``)."""
        return circuits.Intervention(self, _raspc.patch(self._native, _tokens(tokens), _tokens(source),
                                                        _text(sop, "sop")))

    def ablate(self, tokens: Tokens, node: str, how: str = "zero", *, mean_over: int = 200,
               seed: int = 0) -> circuits.Intervention:
        """Runs the model on ``tokens`` with a head ("a0.1") or MLP ("m0") ablated: "zero" (its output
        set to 0), "mean" (to its mean over ``mean_over`` random inputs of this length) or "bos" (a
        head attending to BOS alone, as when its selector selects nothing), beside the interpreter's
        prediction where the program has one (``raspc patch --ablate``)."""
        return circuits.Intervention(self, _raspc.ablate(self._native, _tokens(tokens), _text(node, "node"),
                                                         _text(how, "how"), _int(mean_over, "mean_over", 1),
                                                         _int(seed, "seed", 0, 2**64 - 1)))

    def verify_interventions(self, pairs: int = 200, *, max_len: Optional[int] = None,
                             seed: int = 0) -> circuits.InterventionReport:
        """Every s-op's interchange interventions on ``pairs`` random input pairs and every head's and
        MLP's zero ablation, checked against the interpreter (``raspc verify-interventions``)."""
        return circuits.InterventionReport(*_raspc.verify_interventions(
            self._native, _int(pairs, "pairs", 1), 0 if max_len is None else _int(max_len, "max_len", 1),
            _int(seed, "seed", 0, 2**64 - 1)))

    def format_tensor(self, name: str) -> str:
        """One tensor as ``raspc inspect --tensor`` prints it, rows and columns labelled."""
        return self._native.format_tensor(_text(name, "name"))

    def _output_value(self, text):
        if self._codec is not None:
            return self._codec.from_display(text)
        return _value_of_display(text)

    def _repr_html_(self) -> str:
        """In Jupyter: the model's summary, as ``raspc view`` heads its page (config, parameters, FLOPs
        per token, the verification report; Model.view draws the rest for an input)."""
        return self._native.summary_html("raspc.Model")

    def __repr__(self):
        c = self.config
        return (f"<raspc.Model {c['n_layer']} layers, {c['n_head']} heads, n_embd {c['n_embd']}, "
                f"{c['vocab_size']} tokens>")


def _module_from_file(path, name):
    """A Python file an export ships (its loader, its model class), imported from the export."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _require(package, what):
    import importlib
    try:
        return importlib.import_module(package)
    except ImportError as error:
        raise ImportError(f"{what} needs the `{package}` package, which is not installed "
                          f"(pip install {package.replace('_', '-')})") from error


class _export_folder:
    """The folder an export goes to: the caller's (kept), or a temporary one (removed after)."""

    def __init__(self, folder, prefix):
        self.folder, self.prefix, self.temporary = folder, prefix, None

    def __enter__(self):
        if self.folder is not None:
            return str(self.folder)
        import tempfile
        self.temporary = tempfile.TemporaryDirectory(prefix=self.prefix)
        return self.temporary.name

    def __exit__(self, *exc):
        if self.temporary is not None:
            self.temporary.cleanup()


def from_tracr(expr, vocab, max_seq_len, causal=False, encodings="tracr"):
    """Converts a program built with Tracr's ``tracr.rasp.rasp`` into a raspc Program
    (see raspc.tracr)."""
    from .tracr import from_tracr as convert
    return convert(expr, vocab, max_seq_len, causal=causal, encodings=encodings)
