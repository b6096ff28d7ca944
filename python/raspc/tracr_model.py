"""The object raspc.tracr.compile_rasp_to_model returns: a raspc-compiled GPT-2 behind the surface
of Tracr's ``AssembledTransformerModel`` (tracr/compiler/assemble.py), so code written around a
Tracr model runs on it: ``params`` in Tracr's haiku layout, ``model_config``, ``residual_labels``,
``input_encoder`` / ``output_encoder`` and ``apply``, whose every number comes from raspc's C++
forward. ``forward`` and ``get_compiled_model`` are Tracr's own haiku model on these params (they
need tracr, jax and haiku); nothing else here imports jax.

Where raspc's GPT-2 and Tracr's transformer differ (LayerNorm, GELU, a tied unembedding, raspc's
own special residual dimensions), each field says what it holds instead; README.md, "Tracr's
programs", lists them."""

import collections.abc
import dataclasses
import functools
import importlib
import importlib.util
import math

import numpy as np

import raspc

# What Tracr writes in attn_logits where a key is masked (tracr/transformer/attention.py).
_MASKED_LOGIT = -1e30


def relu(x):
    """ReLU, as jax.nn.relu, in numpy."""
    return np.maximum(x, 0)


def gelu(x):
    """GELU in its tanh form (jax.nn.gelu's default, GPT-2's and raspc's), in numpy."""
    x = np.asarray(x)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


@dataclasses.dataclass
class TransformerConfig:
    """Tracr's ``tracr.transformer.model.TransformerConfig``, field for field."""
    num_heads: int
    num_layers: int
    key_size: int
    mlp_hidden_size: int
    dropout_rate: float
    activation_function: object
    layer_norm: bool
    causal: bool


@dataclasses.dataclass(frozen=True)
class BasisDirection:
    """Tracr's ``tracr.craft.bases.BasisDirection`` where tracr is not installed: the same
    string form and the same order."""
    name: str
    value: object = None

    def __str__(self):
        return self.name if self.value is None else f"{self.name}:{self.value}"

    def __lt__(self, other):
        try:
            return (self.name, self.value) < (other.name, other.value)
        except TypeError:
            return str(self) < str(other)


def _optional(module):
    """The module, or None where it (or what it imports) is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _tracr_class(module, name, fallback):
    found = _optional(module)
    return getattr(found, name) if found is not None else fallback


# Tracr-consuming code tests isinstance(encoder, CategoricalEncoder): be one where tracr is there.
_TracrCategorical = _tracr_class("tracr.transformer.encoder", "CategoricalEncoder", object)
_TracrNumerical = _tracr_class("tracr.transformer.encoder", "NumericalEncoder", object)


_BasisDirection = _tracr_class("tracr.craft.bases", "BasisDirection", BasisDirection)


def _basis_direction(name, value=None):
    return _BasisDirection(name, value)


class CategoricalEncoder(_TracrCategorical):
    """Tracr's CategoricalEncoder over raspc's token ids: ``encoding_map`` (value -> id),
    ``decoding_map``, ``encode`` (BOS first where enforced, known values only, at most
    ``max_seq_len`` of them, else raspc.InputError), ``decode``, ``bos_token``, ``pad_token``,
    ``bos_encoding``, ``pad_encoding``, ``vocab_size`` (the number of ids: every id is below it)
    and, for an output, ``basis`` (one BasisDirection a value, in the residual stream's terms)."""

    def __init__(self, encoding_map, vocab_size, basis=None, bos_token=None, pad_token=None, max_seq_len=None,
                 what="token"):
        # Tracr's __init__ builds encoding_map from consecutive basis positions; raspc's ids are
        # its model's, so every field is set here instead.
        self.encoding_map = dict(encoding_map)
        if basis is not None:
            self.basis = list(basis)
        self.enforce_bos = bos_token is not None
        self._bos_token, self._pad_token = bos_token, pad_token
        self._max_seq_len = max_seq_len
        self._vocab_size = vocab_size
        self._what = what

    @property
    def decoding_map(self):
        return {i: value for value, i in self.encoding_map.items()}

    def __repr__(self):
        return f"<raspc CategoricalEncoder of {len(self.encoding_map)} {self._what}s: {self.encoding_map!r}>"

    def encode(self, inputs):
        inputs = _as_list(inputs, f"{self._what}s")
        if self.enforce_bos and (not inputs or not _same_token(inputs[0], self._bos_token)):
            raise raspc.InputError(f"tokens: error: the first token must be the BOS token {self._bos_token!r}, "
                                   "as in Tracr")
        if self._max_seq_len is not None and len(inputs) > self._max_seq_len:
            raise raspc.InputError(f"tokens: error: {len(inputs)} tokens are more than the {self._max_seq_len} "
                                   f"this model takes (BOS included)")
        return [self._lookup(self.encoding_map, x, f"{self._what} {x!r} is not in the encoding_map")
                for x in inputs]

    def decode(self, encodings):
        decoding = self.decoding_map
        return [self._lookup(decoding, i, f"id {i!r} is not in the decoding map")
                for i in _as_list(encodings, "encodings")]

    def _lookup(self, table, key, why):
        try:
            return table[key]
        except (KeyError, TypeError):  # TypeError: an unhashable key (a list, a dict)
            raise raspc.InputError(f"tokens: error: {why}") from None

    @property
    def vocab_size(self):
        return self._vocab_size

    @property
    def bos_token(self):
        return self._bos_token

    @property
    def pad_token(self):
        return self._pad_token

    @property
    def bos_encoding(self):
        return None if self._bos_token is None else self.encoding_map[self._bos_token]

    @property
    def pad_encoding(self):
        return None if self._pad_token is None else self.encoding_map[self._pad_token]


class NumericalEncoder(_TracrNumerical):
    """Tracr's NumericalEncoder (the identity), with ``basis``: the one residual direction the
    numerical output is read from."""

    def __init__(self, basis):
        self.basis = list(basis)

    def __repr__(self):
        return f"<raspc NumericalEncoder reading {', '.join(str(b) for b in self.basis)}>"

    def encode(self, inputs):
        return inputs

    def decode(self, encodings):
        return encodings

    bos_token = pad_token = bos_encoding = pad_encoding = None


def _as_list(tokens, what):
    if isinstance(tokens, (str, bytes)) or not hasattr(tokens, "__iter__"):
        raise raspc.InputError(f"tokens: error: {what} must be a list, not {type(tokens).__name__}")
    return list(tokens)


def _same_token(a, b):
    try:
        return bool(a == b)
    except Exception:  # numpy arrays and other values whose == is not a bool
        return False


def _display(atom):
    """A raspc atom as the model's vocabulary writes it (language/value.cpp, to_display)."""
    if isinstance(atom, bool):
        return "True" if atom else "False"
    return str(atom)  # ints, Fractions ("1/3") and strings


class TracrOutput(collections.abc.Mapping):
    """What Tracr's ``AssembledTransformerModel.apply`` returns, from raspc's forward, batch
    dimension B = 1 first, T = the tokens given (BOS and trailing pads included):

    - ``decoded``: BOS, then one output value a position (the pad token at pads), as raspc decodes.
    - ``unembedded`` (also ``unembedded_output``, its name in Tracr's CompiledTransformerModel):
      (1, T); a categorical output's index into ``output_encoder`` (int32, the argmax of raspc's
      logits over the output tokens; -1 at pads), a numerical one's reading of the residual stream
      after the last block at the output dimension (float32; NaN at pads).
    - ``input_embeddings`` (1, T, D): token plus position embedding.
    - ``residuals``: 2L arrays (1, T, D), the stream after each attention and each MLP (a model
      of no blocks: L = 1, the block of zeros ``TracrModel.params`` gives it, which adds nothing).
    - ``layer_outputs``: 2L arrays (1, T, D), what each attention and each MLP added.
    - ``attn_logits``: L arrays (1, H, T, T) [query][key], q.k / sqrt(key_size), -1e30 where masked
      (a causal model's future keys; a pad's row and column).
    - ``transformer_output`` (1, T, D): the stream the unembedding reads (after the final
      LayerNorm where the model has one).
    - ``forward``: the raspc.Forward underneath (logits, margins, ...).
    Pad positions were not run: their rows hold 0. D is in ``TracrModel.residual_labels``' order.
    Like Tracr's (a chex dataclass), it is also a mapping of Tracr's seven field names."""

    _FIELDS = ("decoded", "unembedded", "layer_outputs", "residuals", "attn_logits", "transformer_output",
               "input_embeddings")

    def __init__(self, decoded, unembedded, forward, pads, order, heads=1, causal=False):
        self.decoded = decoded
        self.unembedded = self.unembedded_output = unembedded
        self.forward = forward
        stages = _padded(forward.residual[..., order], pads, axis=1)  # (2L+1, T, D)
        scores = np.asarray(forward.scores)
        if len(stages) == 1:  # no blocks: the block of zeros, whose q.k is 0 where not masked
            stages = np.repeat(stages, 3, axis=0)
            T = stages.shape[1] - pads
            scores = np.zeros((1, heads, T, T), np.float32)
            if causal:
                scores[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
        self.input_embeddings = stages[0][None]
        self.residuals = [stage[None] for stage in stages[1:]]
        self.layer_outputs = [(after - before)[None] for before, after in zip(stages[:-1], stages[1:])]
        scores = np.where(np.isneginf(scores), np.float32(_MASKED_LOGIT), scores)
        scores = _padded(_padded(scores, pads, axis=2, fill=_MASKED_LOGIT), pads, axis=3, fill=_MASKED_LOGIT)
        self.attn_logits = [layer[None] for layer in scores]
        self.transformer_output = _padded(forward.final[:, order], pads, axis=0)[None]

    def __getitem__(self, field):
        if field not in self._FIELDS:
            raise KeyError(field)
        return getattr(self, field)

    def __iter__(self):
        return iter(self._FIELDS)

    def __len__(self):
        return len(self._FIELDS)

    def __repr__(self):
        return f"<raspc TracrOutput decoded={self.decoded!r}, fields {', '.join(self._FIELDS)}>"


def _padded(array, pads, axis, fill=0.0):
    if not pads:
        return np.asarray(array)
    shape = list(array.shape)
    shape[axis] = pads
    return np.concatenate([array, np.full(shape, fill, dtype=array.dtype)], axis=axis)


def check_special_tokens(vocab, compiler_bos, compiler_pad):
    """Refuses, as Tracr does, a BOS or pad token that is missing or collides with the other or
    with a token of the vocabulary (raspc.InputError)."""
    if compiler_bos is None:
        raise raspc.InputError("compiler_bos: error: raspc's models always start with a BOS token, "
                               "so compiler_bos cannot be None")
    for special in (compiler_bos, compiler_pad):
        if special in vocab or compiler_bos == compiler_pad:
            raise raspc.InputError(f"compiler_bos: error: the BOS and pad tokens must differ from each other "
                                   f"and from every token of the vocabulary, as in Tracr; {special!r} does not")


class TracrModel:
    """A raspc-compiled model behind the surface of Tracr's ``AssembledTransformerModel``.
    ``.model`` is the raspc Model, ``.program`` the converted raspc Program."""

    def __init__(self, model, program, compiler_bos, compiler_pad):
        self.model = model
        self.program = program
        self.compiler_bos = compiler_bos
        self.compiler_pad = compiler_pad
        # Tracr categorical Aggregates compiled as means, as Tracr's evaluator computes them,
        # because a copy failed verification (compile_rasp_to_model fills it in).
        self.averaged = []
        self._codec = getattr(program, "_codec", None)
        self._output = model.metadata.get("output", {})
        # Tracr's residual space is sorted (VectorSpaceWithBasis sorts its basis), and converters
        # rebuild it from the labels, so its rows come out sorted: the stream is shown that way.
        directions = [self._direction(label) for label in model.residual_labels]
        position = {id(d): i for i, d in enumerate(directions)}
        self.residual_order = [position[id(d)] for d in sorted(directions)]
        self.residual_labels = [str(directions[i]) for i in self.residual_order]
        self.input_encoder = self._make_input_encoder()
        self.output_encoder = self._make_output_encoder()

    # --- labels and values ----------------------------------------------------------------
    def _value(self, text):
        """A value as the model's vocabulary or labels write it, as Tracr's Python value."""
        if self._codec is not None:
            return self._codec.from_display(text)
        return raspc._value_of_display(text)

    def _direction(self, label):
        """A raspc label as Tracr's BasisDirection: "name:value" with the value as Tracr's Python
        value (written 0.3333333333333333, (1, 2)); None is "None" (BasisDirection(name, None)
        would be a numerical direction). Other labels are raspc's, value-less."""
        name, colon, text = label.partition(":")
        if not colon:
            return _basis_direction(label)
        value = self._value(text)
        return _basis_direction(name, "None" if value is None else value)

    def _make_input_encoder(self):
        native = self.model._native
        vocab = self.model.vocab
        id_of = {text: i for i, text in enumerate(vocab)}
        codec = self._codec
        source = getattr(self.program, "tracr_source_vocab", None)
        if source is None:
            source = [codec.to_python(a) if codec else a for a in self.program.tracr_vocab]
        check_special_tokens(source, self.compiler_bos, self.compiler_pad)
        encoding = {self.compiler_bos: native.bos_id}
        self._atoms = {}  # token id -> the raspc atom the forward takes
        for value in source:
            atom = codec.to_raspc(value) if codec else value
            if _display(atom) not in id_of:
                raise raspc.CompileError(f"tracr: error: the compiled model has no token for the input {value!r}")
            encoding[value] = id_of[_display(atom)]
            self._atoms[encoding[value]] = atom
        # raspc has no pad token: it gets the id after raspc's vocabulary, and a zero embedding row.
        self._pad_id = len(vocab) if self.compiler_pad is not None else None
        if self.compiler_pad is not None:
            encoding[self.compiler_pad] = self._pad_id
        encoding = dict(sorted(encoding.items(), key=lambda item: item[1]))  # by id, whatever the set's order
        rows = len(vocab) + (self._pad_id is not None)
        return CategoricalEncoder(encoding, rows, bos_token=self.compiler_bos, pad_token=self.compiler_pad,
                                  max_seq_len=self.program.max_seq_len + 1)

    def _make_output_encoder(self):
        if self._output.get("encoding") == "numerical":
            return NumericalEncoder([_basis_direction(self.model.residual_labels[self._output["dim"]])])
        name = next((s["name"] for s in self.model.metadata.get("sops", []) if s.get("output")), self.program.output)
        # In Tracr's order: its output space is a VectorSpaceWithBasis, sorted too.
        outputs = sorted(((self._direction(f"{name}:{self.model.vocab[i]}"), i)
                          for i in self._output.get("token_ids", [])), key=lambda pair: pair[0])
        self._output_ids = [token_id for _, token_id in outputs]
        values = [self._value(self.model.vocab[token_id]) for token_id in self._output_ids]
        encoding = {value: i for i, value in enumerate(values)}
        return CategoricalEncoder(encoding, len(values), basis=[d for d, _ in outputs], what="output value")

    # --- Tracr's fields ---------------------------------------------------------------------
    @functools.cached_property
    def params(self):
        """Tracr's haiku parameters, a copy of raspc's weights with the residual axis D in
        ``residual_labels``' order: token_embed/embeddings (V+1, D: raspc's wte, then the pad's
        zero row), pos_embed/embeddings (P, D: position 0 is BOS's),
        transformer/layer_{l}/attn/{query,key,value,linear} and mlp/linear_1, linear_2 ({w, b},
        w as (in, out), heads as (n_heads key_size) columns), and with LayerNorm
        transformer/layer_{l}/layer_norm (before attention), .../layer_norm_1 (before the MLP) and
        transformer/layer_norm (final), {scale, offset}. A model without an MLP gets Tracr's
        minimum, one hidden unit of zeros; a model of no blocks (its embeddings compute the output)
        one block of zeros, which changes no output, since Tracr's transformer takes at least one
        (it divides by the layer count), as the gguf and llm.c exports do."""
        weights, config = self.model.weights, self.model.config
        d, inner, order = config["n_embd"], config["n_inner"], self.residual_order

        def reads(name):  # (D, out): rows are residual dimensions
            return np.array(weights[name][order], dtype=np.float32)

        def writes(name):  # (in, D) or (D,): the last axis is the residual
            return np.array(weights[name][..., order], dtype=np.float32)

        token_embed = writes("transformer.wte.weight")
        if self._pad_id is not None:
            token_embed = np.concatenate([token_embed, np.zeros((1, d), np.float32)])
        params = {"token_embed": {"embeddings": token_embed},
                  "pos_embed": {"embeddings": writes("transformer.wpe.weight")}}
        if config["n_layer"] == 0:
            zero = {"w": np.zeros((d, d), np.float32), "b": np.zeros(d, np.float32)}
            for part in ("query", "key", "value", "linear"):
                params[f"transformer/layer_0/attn/{part}"] = {k: v.copy() for k, v in zero.items()}
            params["transformer/layer_0/mlp/linear_1"] = {"w": np.zeros((d, 1), np.float32), "b": np.zeros(1, np.float32)}
            params["transformer/layer_0/mlp/linear_2"] = {"w": np.zeros((1, d), np.float32), "b": np.zeros(d, np.float32)}
            if config["layer_norm"]:
                for name in ("layer_norm", "layer_norm_1"):
                    params[f"transformer/layer_0/{name}"] = {"scale": np.ones(d, np.float32),
                                                             "offset": np.zeros(d, np.float32)}
        for layer in range(config["n_layer"]):
            gpt2, tracr = f"transformer.h.{layer}.", f"transformer/layer_{layer}/"
            qkv_w = reads(gpt2 + "attn.c_attn.weight")
            qkv_b = np.array(weights[gpt2 + "attn.c_attn.bias"], dtype=np.float32)
            for i, part in enumerate(("query", "key", "value")):  # c_attn's columns are [q | k | v]
                params[f"{tracr}attn/{part}"] = {"w": qkv_w[:, i * d:(i + 1) * d].copy(),
                                                 "b": qkv_b[i * d:(i + 1) * d].copy()}
            params[f"{tracr}attn/linear"] = {"w": writes(gpt2 + "attn.c_proj.weight"),
                                             "b": writes(gpt2 + "attn.c_proj.bias")}
            if inner:
                params[f"{tracr}mlp/linear_1"] = {"w": reads(gpt2 + "mlp.c_fc.weight"),
                                                  "b": np.array(weights[gpt2 + "mlp.c_fc.bias"], dtype=np.float32)}
                params[f"{tracr}mlp/linear_2"] = {"w": writes(gpt2 + "mlp.c_proj.weight"),
                                                  "b": writes(gpt2 + "mlp.c_proj.bias")}
            else:
                params[f"{tracr}mlp/linear_1"] = {"w": np.zeros((d, 1), np.float32), "b": np.zeros(1, np.float32)}
                params[f"{tracr}mlp/linear_2"] = {"w": np.zeros((1, d), np.float32), "b": np.zeros(d, np.float32)}
            if config["layer_norm"]:
                for tracr_name, gpt2_name in (("layer_norm", "ln_1"), ("layer_norm_1", "ln_2")):
                    params[tracr + tracr_name] = {"scale": writes(f"{gpt2}{gpt2_name}.weight"),
                                                  "offset": writes(f"{gpt2}{gpt2_name}.bias")}
        if config["layer_norm"]:
            params["transformer/layer_norm"] = {"scale": writes("transformer.ln_f.weight"),
                                                "offset": writes("transformer.ln_f.bias")}
        return params

    @functools.cached_property
    def model_config(self):
        """Tracr's TransformerConfig of this model. activation_function is jax.nn.relu or
        jax.nn.gelu (tanh form) where jax is installed, else this module's numpy relu / gelu. A
        model of no blocks says one layer: the block of zeros ``params`` gives it."""
        config = self.model.config
        name = config["activation"]
        jax_nn = _optional("jax.nn") if importlib.util.find_spec("jax") else None
        activation = getattr(jax_nn, name) if jax_nn is not None else {"relu": relu, "gelu": gelu}[name]
        return TransformerConfig(num_heads=config["n_head"], num_layers=max(config["n_layer"], 1),
                                 key_size=config["n_embd"] // config["n_head"],
                                 mlp_hidden_size=max(config["n_inner"], 1), dropout_rate=0.0,
                                 activation_function=activation, layer_norm=bool(config["layer_norm"]),
                                 causal=bool(config["causal"]))

    @functools.cached_property
    def unembedding(self):
        """(D, outputs): raspc's own unembedding, restricted to the output values in
        ``output_encoder``'s order. Categorical: the tied wte rows of the output tokens; the
        argmax of transformer_output @ unembedding is raspc's output. Numerical: 1 at the output
        dimension, to be read from the last residual (before any final LayerNorm)."""
        wte = self.model.weights["transformer.wte.weight"]
        if isinstance(self.output_encoder, NumericalEncoder):
            matrix = np.zeros((len(self.residual_order), 1), np.float32)
            matrix[self.residual_order.index(self._output["dim"]), 0] = 1
            return matrix
        return np.array(wte[self._output_ids][:, self.residual_order].T, dtype=np.float32)

    # --- running it -------------------------------------------------------------------------
    def apply(self, tokens):
        """Runs raspc's forward (C++, CPU) on ``[compiler_bos, t1, ...]`` and returns a
        TracrOutput. Trailing pads are left out of the run (as if masked) and given back as the
        pad token in ``decoded``; a pad before a non-pad token, an unknown token, a missing BOS or
        more than max_seq_len tokens raise raspc.InputError."""
        ids = self.input_encoder.encode(tokens)
        pads = 0
        while self._pad_id is not None and len(ids) > 1 + pads and ids[-1 - pads] == self._pad_id:
            pads += 1
        run = ids[1:len(ids) - pads]
        if not run:
            raise raspc.InputError("tokens: error: no token after BOS; raspc runs inputs of at least one token")
        for position, token_id in enumerate(run, start=1):
            if token_id == self._pad_id:
                raise raspc.InputError(f"tokens: error: the pad token at position {position} is followed by "
                                       "other tokens; raspc takes pads only at the end")
            if token_id not in self._atoms:
                raise raspc.InputError(f"tokens: error: the BOS token at position {position} may only come first")
        forward = self.model.forward([self._atoms[i] for i in run], capture=True)
        decoded = [self.compiler_bos] + forward.outputs + [self.compiler_pad] * pads
        if isinstance(self.output_encoder, NumericalEncoder):
            reading = forward.residual[-1][:, self._output["dim"]].astype(np.float32)
            unembedded = np.concatenate([reading, np.full(pads, np.nan, np.float32)])
        else:
            best = forward.logits[:, self._output_ids].argmax(axis=-1).astype(np.int32)
            unembedded = np.concatenate([best, np.full(pads, -1, np.int32)])
        config = self.model.config
        return TracrOutput(decoded, unembedded[None], forward, pads, self.residual_order, config["n_head"],
                           bool(config["causal"]))

    # --- Tracr's own model on these parameters (needs tracr, jax and haiku) ----------------
    def get_compiled_model(self):
        """Tracr's CompiledTransformerModel (a haiku module: build it inside hk.transform) with
        this model's config, embeddings from ``params`` and Tracr's unembedding: the projection
        of transformer_output onto ``output_encoder.basis``, argmax for a categorical output.
        It computes raspc's residual stream; without LayerNorm its unembedding decodes raspc's
        outputs, with it a numerical output is misread (it is read before the final LayerNorm)."""
        hk = _require("haiku")
        jnp = _require("jax.numpy")
        tracr_model = _require("tracr.transformer.model")
        projection = self._projection()
        categorical = not isinstance(self.output_encoder, NumericalEncoder)

        def unembed(x, use_unembed_argmax):
            out = x @ projection
            if use_unembed_argmax:
                return jnp.argmax(out, axis=-1)
            return out.squeeze(-1) if out.shape[-1] == 1 else out

        return tracr_model.CompiledTransformerModel(
            transformer=tracr_model.Transformer(self.model_config),
            token_embed=hk.Embed(embedding_matrix=self.params["token_embed"]["embeddings"], name="token_embed"),
            position_embed=hk.Embed(embedding_matrix=self.params["pos_embed"]["embeddings"], name="pos_embed"),
            unembed=hk.to_module(unembed)(), use_unembed_argmax=categorical)

    @functools.cached_property
    def forward(self):
        """Tracr's ``forward(params, tokens)``: get_compiled_model under hk.transform, applied to
        encoded tokens (B, T); returns Tracr's CompiledTransformerModelOutput."""
        hk = _require("haiku")
        forward = hk.transform(lambda tokens: self.get_compiled_model()(tokens, use_dropout=False))
        return hk.without_apply_rng(forward).apply

    def _projection(self):
        """Tracr's vectorspace_fns.project(residual space, output space).matrix: 1 where a
        residual label is an output basis direction. Where the output's dimensions hold scores
        (an output the embeddings write through pairs: its placement says "logits"), a projection
        would misread them, and this is raspc's own unembedding, which reads them."""
        if any(s.get("output") and s.get("logits") for s in self.model.metadata.get("sops", [])):
            return self.unembedding
        index = {label: d for d, label in enumerate(self.residual_labels)}
        matrix = np.zeros((len(self.residual_labels), len(self.output_encoder.basis)), np.float32)
        for j, direction in enumerate(self.output_encoder.basis):
            if str(direction) in index:
                matrix[index[str(direction)], j] = 1
        return matrix

    def __repr__(self):
        return f"<raspc.tracr.TracrModel of {self.model!r}>"


def _require(module):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"this needs `{module.split('.')[0]}` (pip install tracr-pypi, which brings jax and "
                          "dm-haiku)") from error
