"""raspc.tracr's TracrModel read by Tracr's own code: its ``params`` run in Tracr's haiku
transformer, built as tracr/compiler/assemble.py builds one, and in a TransformerLens model built
the way Tracr-to-TransformerLens converters build one (InterpBench's HookedTracrTransformer); every
``apply`` field has the shape and meaning of a real Tracr model's; bad arguments raise raspc's
errors. Needs tracr-pypi, jax, haiku, torch and transformer-lens (the interop venv)."""

import functools
import itertools
import os
import sys

import haiku as hk
import jax.numpy as jnp
import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))

from tracr.compiler import compiling, lib  # noqa: E402
from tracr.craft import bases, vectorspace_fns  # noqa: E402
from tracr.rasp import rasp  # noqa: E402
from tracr.transformer import encoder as tracr_encoder  # noqa: E402
from tracr.transformer import model as tracr_model  # noqa: E402

import raspc  # noqa: E402
import raspc.tracr  # noqa: E402
from tracr_cases import CASES, same  # noqa: E402

MAX_SEQ_LEN = 4  # every input up to this length is run
# Categorical and numerical outputs, None outputs (shift_by), 1 to 3 layers, a causal program.
PROGRAMS = ["make_hist", "make_sort_unique", "make_reverse", "make_frac_prevs", "shift_by_1",
            "make_shuffle_dyck_2", "make_nary_sequencemap", "make_frac_prevs causal"]
CONFIGS = {"relu": dict(layer_norm=False, activation="relu"),
           "layernorm-gelu": dict(layer_norm=True, activation="gelu")}


@functools.lru_cache(maxsize=None)
def compiled(name, config):
    base, _, causal = name.partition(" ")
    build, vocab = CASES[base]
    return raspc.tracr.compile_rasp_to_model(build(MAX_SEQ_LEN), vocab, MAX_SEQ_LEN, causal=bool(causal),
                                             compiler_bos="BOS", samples=200, **CONFIGS[config])


def inputs_by_length(name):
    """Every input up to MAX_SEQ_LEN, one batch a length, BOS first."""
    vocab = sorted(CASES[name.split()[0]][1], key=repr)
    for n in range(1, MAX_SEQ_LEN + 1):
        yield [["BOS"] + list(t) for t in itertools.product(vocab, repeat=n)]


def raspc_outputs(model, batch):
    """apply's decoded outputs (BOS dropped); None where raspc finds the program undefined."""
    outputs = []
    for tokens in batch:
        try:
            out = model.apply(tokens)
        except raspc.UndefinedError:
            outputs.append(None)
            continue
        if is_categorical(model):  # unembedded indexes the same outputs
            assert model.output_encoder.decode(out.unembedded[0, 1:].tolist()) == out.decoded[1:]
        outputs.append(out.decoded[1:])
    return outputs


def is_categorical(model):
    return isinstance(model.output_encoder, tracr_encoder.CategoricalEncoder)


# --- Tracr's forward, built by hand from the model's public fields ---------------------------

def label_value(text):
    """A residual label's value as Tracr-consuming converters read it back."""
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def residual_space(model):
    directions = []
    for label in model.residual_labels:
        name, colon, value = label.partition(":")
        directions.append(bases.BasisDirection(name, label_value(value)) if colon else bases.BasisDirection(label))
    return bases.VectorSpaceWithBasis(directions)


def tracr_projection(model):
    """Tracr's unembedding: the residual space projected onto the output space."""
    output_space = bases.VectorSpaceWithBasis(model.output_encoder.basis)
    return vectorspace_fns.project(residual_space(model), output_space).matrix


def tracr_forward(model, unembedding):
    """Tracr's CompiledTransformerModel with model.params, its embeddings as
    assemble._make_embedding_modules makes them, and `unembedding` (D, outputs)."""
    c = model.model_config
    config = tracr_model.TransformerConfig(num_heads=c.num_heads, num_layers=c.num_layers, key_size=c.key_size,
                                           mlp_hidden_size=c.mlp_hidden_size, dropout_rate=c.dropout_rate,
                                           activation_function=c.activation_function, layer_norm=c.layer_norm,
                                           causal=c.causal)
    categorical = is_categorical(model)

    @hk.without_apply_rng
    @hk.transform
    def forward(tokens):
        def unembed(x, use_unembed_argmax):
            out = x @ unembedding
            return jnp.argmax(out, axis=-1) if use_unembed_argmax else out.squeeze(-1)

        compiled_model = tracr_model.CompiledTransformerModel(
            transformer=tracr_model.Transformer(config),
            token_embed=hk.Embed(embedding_matrix=model.params["token_embed"]["embeddings"], name="token_embed"),
            position_embed=hk.Embed(embedding_matrix=model.params["pos_embed"]["embeddings"], name="pos_embed"),
            unembed=hk.to_module(unembed)(), use_unembed_argmax=categorical)
        return compiled_model(tokens, use_dropout=False)

    return lambda batch: forward.apply(model.params, jnp.array([model.input_encoder.encode(t) for t in batch]))


def decoded_from(model, unembedded):
    if is_categorical(model):
        return model.output_encoder.decode(np.asarray(unembedded).tolist())
    return [float(x) for x in np.asarray(unembedded)]


def assert_same_outputs(got, expected, where):
    assert len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected)), (where, got, expected)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("name", PROGRAMS)
def test_tracrs_own_forward_on_the_params_computes_raspcs_model(name, config):
    model = compiled(name, config)
    # Without LayerNorm, Tracr's own unembedding (a projection onto the output space) reads the
    # output; with it, a numerical output is read before the final LayerNorm (README).
    if config == "relu":
        readers = [("projection", tracr_forward(model, tracr_projection(model)))]
    else:
        readers = [("raspc's unembedding", tracr_forward(model, model.unembedding))]
    checked = 0
    for batch in inputs_by_length(name):
        expected = raspc_outputs(model, batch)
        for how, forward in readers:
            out = forward(batch)
            for i, tokens in enumerate(batch):
                if expected[i] is None:
                    continue
                if config != "relu" and not is_categorical(model):
                    stream = np.asarray(out.transformer_output.residuals[-1][i])
                    got = [float(x) for x in (stream @ model.unembedding)[:, 0]]
                else:
                    got = decoded_from(model, out.unembedded_output[i])
                assert_same_outputs(got[1:], expected[i], (how, tokens))
                checked += 1
        # The residual stream is raspc's, stage by stage (float32 sums in other orders).
        i = max(i for i in range(len(batch)) if expected[i] is not None)
        applied = model.apply(batch[i])
        for stage, (tracr_stage, raspc_stage) in enumerate(zip(out.transformer_output.residuals, applied.residuals)):
            scale = max(1.0, float(np.abs(raspc_stage).max()))
            np.testing.assert_allclose(np.asarray(tracr_stage[i]), raspc_stage[0], atol=1e-5 * scale,
                                       err_msg=f"stage {stage}")
    assert checked > 0


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("name", ["make_sort_unique", "make_nary_sequencemap"])
def test_the_models_own_tracr_forward_is_the_same(name, config):
    # make_nary_sequencemap under LayerNorm is a map of the token and the position the embeddings
    # write as scores, which the model's own forward reads through raspc's unembedding.
    model = compiled(name, config)
    batch = next(itertools.islice(inputs_by_length(name), 2, None))
    ids = jnp.array([model.input_encoder.encode(t) for t in batch])
    out = model.forward(model.params, ids)
    for i, tokens in enumerate(batch):
        assert model.output_encoder.decode(np.asarray(out.unembedded_output[i]).tolist())[1:] == \
            model.apply(tokens).decoded[1:]


# --- a Tracr-to-TransformerLens converter, written as Tracr-consuming code writes one --------

def hooked_tracr_transformer(model, unembedding):
    """(config, state dict) in TransformerLens's names from the Tracr surface only, as
    InterpBench's HookedTracrTransformer builds them; LayerNorm models also get their LN."""
    c = model.model_config
    params = model.params
    n_heads, d_head = c.num_heads, c.key_size
    config = {"n_layers": c.num_layers, "d_model": params["token_embed"]["embeddings"].shape[1], "d_head": d_head,
              "n_heads": n_heads, "d_mlp": c.mlp_hidden_size, "d_vocab": params["token_embed"]["embeddings"].shape[0],
              "d_vocab_out": unembedding.shape[1], "n_ctx": params["pos_embed"]["embeddings"].shape[0],
              "act_fn": "relu" if not c.layer_norm else "gelu_new",
              "normalization_type": "LN" if c.layer_norm else None,
              "attention_dir": "causal" if c.causal else "bidirectional", "default_prepend_bos": False,
              "positional_embedding_type": "standard", "original_architecture": "GPT2LMHeadModel",
              "model_name": "raspc-tracr", "tokenizer_name": None}
    sd = {"embed.W_E": params["token_embed"]["embeddings"], "pos_embed.W_pos": params["pos_embed"]["embeddings"],
          "unembed.W_U": np.asarray(unembedding, np.float32), "unembed.b_U": np.zeros(unembedding.shape[1], np.float32)}
    for layer in range(c.num_layers):
        prefix = f"transformer/layer_{layer}"
        for tracr_name, tl in (("query", "Q"), ("key", "K"), ("value", "V")):
            p = params[f"{prefix}/attn/{tracr_name}"]
            sd[f"blocks.{layer}.attn.W_{tl}"] = p["w"].reshape(-1, n_heads, d_head).transpose(1, 0, 2)
            sd[f"blocks.{layer}.attn.b_{tl}"] = p["b"].reshape(n_heads, d_head)
        linear = params[f"{prefix}/attn/linear"]
        sd[f"blocks.{layer}.attn.W_O"] = linear["w"].reshape(n_heads, d_head, -1)
        sd[f"blocks.{layer}.attn.b_O"] = linear["b"]
        sd[f"blocks.{layer}.mlp.W_in"] = params[f"{prefix}/mlp/linear_1"]["w"]
        sd[f"blocks.{layer}.mlp.b_in"] = params[f"{prefix}/mlp/linear_1"]["b"]
        sd[f"blocks.{layer}.mlp.W_out"] = params[f"{prefix}/mlp/linear_2"]["w"]
        sd[f"blocks.{layer}.mlp.b_out"] = params[f"{prefix}/mlp/linear_2"]["b"]
        if c.layer_norm:
            for tl, tracr_name in (("ln1", "layer_norm"), ("ln2", "layer_norm_1")):
                sd[f"blocks.{layer}.{tl}.w"] = params[f"{prefix}/{tracr_name}"]["scale"]
                sd[f"blocks.{layer}.{tl}.b"] = params[f"{prefix}/{tracr_name}"]["offset"]
    if c.layer_norm:
        sd["ln_final.w"] = params["transformer/layer_norm"]["scale"]
        sd["ln_final.b"] = params["transformer/layer_norm"]["offset"]
    return config, {k: torch.tensor(np.ascontiguousarray(v, dtype=np.float32)) for k, v in sd.items()}


def load_transformer_lens(config, state):
    """A HookedTransformer (TransformerLens 2.x), or its 4.x equivalent, with these weights as
    they are (no fold_ln or centring), as raspc's own tlens loader does."""
    try:
        from transformer_lens import HookedTransformer, HookedTransformerConfig
    except ImportError:
        HookedTransformer = None
    if HookedTransformer is not None:
        lens = HookedTransformer(HookedTransformerConfig(**config))
        lens.load_state_dict(state, strict=False)
    else:
        from transformer_lens.config import TransformerBridgeConfig
        from transformer_lens.conversion_utils import convert_tl_checkpoint
        from transformer_lens.model_bridge.sources import boot_native
        cfg = TransformerBridgeConfig.from_dict(dict(config, init_weights=False))
        lens = boot_native(cfg)
        lens.load_state_dict(convert_tl_checkpoint(state, cfg), strict=True)
    lens.eval()
    return lens


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("name", ["make_sort_unique", "make_frac_prevs", "shift_by_1", "make_frac_prevs causal"])
def test_a_transformer_lens_converter_from_the_tracr_surface(name, config):
    model = compiled(name, config)
    unembedding = tracr_projection(model) if config == "relu" else model.unembedding
    lens = load_transformer_lens(*hooked_tracr_transformer(model, unembedding))
    last = f"blocks.{model.model_config.num_layers - 1}.hook_resid_post"
    for batch in inputs_by_length(name):
        expected = raspc_outputs(model, batch)
        with torch.no_grad():
            logits, cache = lens.run_with_cache(torch.tensor([model.input_encoder.encode(t) for t in batch]))
        for i, tokens in enumerate(batch):
            if expected[i] is None:
                continue
            if is_categorical(model):
                got = model.output_encoder.decode(logits[i].argmax(-1).tolist())
            elif config == "relu":
                got = logits[i, :, 0].tolist()
            else:  # a numerical output is read before the final LayerNorm
                got = (cache[last][i].numpy() @ model.unembedding)[:, 0].tolist()
            assert_same_outputs(got[1:], expected[i], tokens)


# TransformerLens 2.x's HookedTransformer, in the TL 2.x venv beside this one (it has no tracr):
# the converter's config and weights go there as a file, the logits and last stream come back.
_TL2_RUN = """
import sys, torch
from transformer_lens import HookedTransformer, HookedTransformerConfig
job = torch.load(sys.argv[1])
lens = HookedTransformer(HookedTransformerConfig(**job["config"]))
lens.load_state_dict(job["state"], strict=False)
lens.eval()
results = []
with torch.no_grad():
    for ids in job["batches"]:
        logits, cache = lens.run_with_cache(ids)
        results.append((logits, cache[job["last"]]))
torch.save(results, sys.argv[2])
"""


@pytest.mark.parametrize("name,config", [("make_sort_unique", "relu"), ("make_frac_prevs", "relu"),
                                         ("shift_by_1", "layernorm-gelu")])
def test_a_hooked_transformer_in_transformer_lens_2(name, config, tmp_path):
    import subprocess
    python = os.path.join(sys.prefix + "-tl2", "bin", "python")
    if not os.access(python, os.X_OK):
        pytest.skip(f"no TransformerLens 2.x venv at {sys.prefix}-tl2 (scripts/setup-interop.sh makes it)")
    model = compiled(name, config)
    unembedding = tracr_projection(model) if config == "relu" else model.unembedding
    lens_config, state = hooked_tracr_transformer(model, unembedding)
    batches = list(inputs_by_length(name))
    last = f"blocks.{model.model_config.num_layers - 1}.hook_resid_post"
    torch.save({"config": lens_config, "state": state, "last": last,
                "batches": [torch.tensor([model.input_encoder.encode(t) for t in batch]) for batch in batches]},
               tmp_path / "job.pt")
    subprocess.run([python, "-c", _TL2_RUN, str(tmp_path / "job.pt"), str(tmp_path / "out.pt")], check=True,
                   env=dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=""))
    for batch, (logits, stream) in zip(batches, torch.load(tmp_path / "out.pt")):
        expected = raspc_outputs(model, batch)
        for i, tokens in enumerate(batch):
            if expected[i] is not None:
                got = model.output_encoder.decode(logits[i].argmax(-1).tolist()) if is_categorical(model) \
                    else logits[i, :, 0].tolist()
                assert_same_outputs(got[1:], expected[i], tokens)
                if config == "relu":  # the stream is raspc's, in residual_labels' order
                    np.testing.assert_allclose(stream[i].numpy(), model.apply(tokens).residuals[-1][0], atol=1e-4)


# --- apply, field by field, against a real Tracr model ------------------------------------

# make_nary_sequencemap under LayerNorm is a model of no blocks (its embeddings compute it), which
# the Tracr surface shows as one block of zeros, as Tracr's transformer takes at least one.
@pytest.mark.parametrize("name", ["make_hist", "make_sort_unique", "make_frac_prevs", "make_frac_prevs causal",
                                  "make_nary_sequencemap", "make_nary_sequencemap causal"])
def test_apply_has_the_fields_of_a_real_tracr_model(name):
    base, _, causal = name.partition(" ")
    build, vocab = CASES[base]
    program = build(MAX_SEQ_LEN)
    theirs = compiling.compile_rasp_to_model(program, vocab, MAX_SEQ_LEN, causal=bool(causal), compiler_bos="BOS")
    ours = compiled(name, "layernorm-gelu")
    assert isinstance(ours.output_encoder, type(theirs.output_encoder))
    assert len(ours.params["pos_embed"]["embeddings"]) == len(theirs.params["pos_embed"]["embeddings"])
    for tokens in [["BOS", t] for t in sorted(vocab, key=repr)] + [["BOS"] + sorted(vocab, key=repr)[:MAX_SEQ_LEN]]:
        a, b = ours.apply(tokens), theirs.apply(tokens)
        T = len(tokens)
        for model, out in ((ours, a), (theirs, b)):
            D, L, H = len(model.residual_labels), model.model_config.num_layers, model.model_config.num_heads
            assert np.shape(out.unembedded) == (1, T)
            assert np.shape(out.input_embeddings) == np.shape(out.transformer_output) == (1, T, D)
            assert len(out.residuals) == len(out.layer_outputs) == 2 * L
            assert all(np.shape(x) == (1, T, D) for x in out.residuals + out.layer_outputs)
            assert len(out.attn_logits) == L and all(np.shape(x) == (1, H, T, T) for x in out.attn_logits)
            # Each stage is the last plus what its layer wrote.
            np.testing.assert_allclose(np.asarray(out.residuals[0]),
                                       np.asarray(out.input_embeddings + out.layer_outputs[0]), rtol=1e-5, atol=1e-4)
            # A causal model masks every future key, as Tracr writes it.
            if causal:
                future = np.triu(np.ones((T, T), bool), 1)
                assert all((np.asarray(x)[0, :, future] == -1e30).all() for x in out.attn_logits)
        assert np.asarray(a.unembedded).dtype.kind == np.asarray(b.unembedded).dtype.kind
        assert a.decoded[0] == b.decoded[0] == "BOS"
        # Printed in a notebook, raspc's objects say what they hold.
        assert repr(a).startswith(f"<raspc TracrOutput decoded={a.decoded!r}, fields ")
        assert repr(ours.output_encoder).startswith(("<raspc CategoricalEncoder of ", "<raspc NumericalEncoder reading "))
        expected = rasp.evaluate(program, tokens[1:])
        assert_same_outputs(a.decoded[1:], expected, tokens)
        if all(same(t, e) for t, e in zip(b.decoded[1:], expected)):
            assert_same_outputs(a.decoded[1:], b.decoded[1:], tokens)
        assert a.unembedded_output is a.unembedded and isinstance(a.forward, raspc.Forward)
        assert set(a) == set(b.keys()) and a["decoded"] is a.decoded  # a mapping, as Tracr's chex dataclass


def test_the_tracr_surface_fields():
    model = compiled("make_sort_unique", "relu")
    config = model.model_config
    assert (config.num_heads, config.num_layers) == (model.model.config["n_head"], model.model.config["n_layer"])
    assert config.key_size * config.num_heads == model.model.config["n_embd"]
    assert config.activation_function.__name__ == "relu" and config.dropout_rate == 0 and not config.layer_norm
    assert len(model.residual_labels) == model.params["token_embed"]["embeddings"].shape[1]
    assert "one" in model.residual_labels and "tokens:1" in model.residual_labels
    encoder = model.input_encoder
    assert isinstance(encoder, tracr_encoder.CategoricalEncoder)
    assert encoder.bos_token == "BOS" and encoder.pad_token == "compiler_pad"
    assert encoder.encode(["BOS", 3, 1]) == [encoder.bos_encoding, encoder.encoding_map[3], encoder.encoding_map[1]]
    assert encoder.decode(encoder.encode(["BOS", 3, 1, "compiler_pad"])) == ["BOS", 3, 1, "compiler_pad"]
    assert encoder.vocab_size == model.params["token_embed"]["embeddings"].shape[0] > encoder.pad_encoding
    assert not model.params["token_embed"]["embeddings"][encoder.pad_encoding].any()
    output = model.output_encoder
    assert output.decode([output.encoding_map[2]]) == [2] and output.decoding_map[output.encoding_map[None]] is None
    assert all(isinstance(d, bases.BasisDirection) and str(d) in model.residual_labels for d in output.basis)
    frac_prevs = compiled("make_frac_prevs", "relu")
    numerical = frac_prevs.output_encoder
    assert isinstance(numerical, tracr_encoder.NumericalEncoder) and numerical.decode([0.5]) == [0.5]
    output_dim = frac_prevs.model.metadata["output"]["dim"]
    assert [str(d) for d in numerical.basis] == [frac_prevs.model.residual_labels[output_dim]]
    # Tracr's order (VectorSpaceWithBasis sorts), a permutation of raspc's dimensions.
    assert model.residual_labels == [str(d) for d in residual_space(model).basis]
    assert sorted(model.residual_order) == list(range(len(model.residual_labels)))
    gelu = compiled("make_sort_unique", "layernorm-gelu")
    assert gelu.model_config.activation_function.__name__ == "gelu" and gelu.model_config.layer_norm
    layer_norms = {"transformer/layer_0/layer_norm", "transformer/layer_0/layer_norm_1", "transformer/layer_norm"}
    assert layer_norms <= set(gelu.params)
    assert all(set(gelu.params[name]) == {"scale", "offset"} for name in layer_norms)


def test_numpy_activations_are_jaxs():
    import jax
    from raspc import tracr_model
    x = np.linspace(-8, 8, 101, dtype=np.float32)
    np.testing.assert_allclose(tracr_model.relu(x), np.asarray(jax.nn.relu(x)))
    np.testing.assert_allclose(tracr_model.gelu(x), np.asarray(jax.nn.gelu(x)), atol=1e-6)


def test_trailing_pads_are_given_back_and_not_run():
    model = compiled("make_hist", "relu")
    plain = model.apply(["BOS", "a", "b", "a"])
    padded = model.apply(["BOS", "a", "b", "a", "compiler_pad"])
    assert padded.decoded == plain.decoded + ["compiler_pad"]
    assert padded.unembedded.shape == (1, 5) and padded.unembedded[0, -1] == -1
    np.testing.assert_array_equal(padded.residuals[-1][0, :4], plain.residuals[-1][0])
    assert not padded.residuals[-1][0, 4].any()
    logits = padded.attn_logits[0][0]
    assert (logits[:, 4, :] == -1e30).all() and (logits[:, :, 4] == -1e30).all()
    numerical = compiled("make_frac_prevs", "relu").apply(["BOS", "l", "compiler_pad", "compiler_pad"])
    assert numerical.decoded == ["BOS", 1, "compiler_pad", "compiler_pad"]
    assert np.isnan(numerical.unembedded[0, 2:]).all()


@pytest.mark.parametrize("tokens", [
    ["a", "b"],                         # no BOS
    [],                                 # nothing at all
    ["BOS", "z"],                       # a token outside the vocabulary
    ["BOS", "a", "b", "c", "d", "a"],   # longer than max_seq_len
    ["BOS"], ["BOS", "compiler_pad"],   # no token to run
    ["BOS", "compiler_pad", "a"],       # a pad before a token
    ["BOS", "a", "BOS"],                # BOS again
    ["BOS", ["a"]],                     # unhashable
    ["BOS", None],
    ["BOS", 1.5],
    None, 5, "BOS a", b"BOS",
])
def test_bad_arguments_raise_raspcs_errors(tokens):
    model = compiled("make_hist", "relu")
    with pytest.raises(raspc.RaspcError) as caught:
        model.apply(tokens)
    assert isinstance(caught.value, raspc.InputError) and isinstance(caught.value, ValueError)
    assert str(caught.value).startswith("tokens: error: ") and "\n" not in str(caught.value)


def test_bad_ids_in_the_encoders_raise_raspcs_errors():
    model = compiled("make_hist", "relu")
    for call in (lambda: model.input_encoder.decode([999]), lambda: model.output_encoder.decode([-1]),
                 lambda: model.output_encoder.decode([[0]]), lambda: model.output_encoder.encode(["not an output"]),
                 lambda: model.input_encoder.encode(None)):
        with pytest.raises(raspc.InputError):
            call()


@pytest.mark.parametrize("bos,pad", [(None, "compiler_pad"), ("a", "compiler_pad"), ("BOS", "a"), ("X", "X")])
def test_bos_and_pad_tokens_must_be_their_own(bos, pad):
    with pytest.raises(raspc.InputError):
        raspc.tracr.compile_rasp_to_model(lib.make_length(), {"a"}, 2, compiler_bos=bos, compiler_pad=pad, samples=10)
