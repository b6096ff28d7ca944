"""Model.to_transformers and Model.to_transformer_lens: the exported model, loaded by the peer
library, gives the logits raspc's own forward gives. Needs torch, transformers and
transformer-lens (the interop venv)."""

from pathlib import Path

import numpy as np
import pytest
import torch

import raspc

PROGRAMS = Path(__file__).resolve().parents[3] / "programs"


def compiled(name, max_len=5):
    program = raspc.Program.from_file(PROGRAMS / f"{name}.rasp")
    return raspc.compile(program, max_len=max_len, samples=100)


def ids_of(model, tokens):
    bos = [model.vocab.index(t) for t in model.vocab if t == "<bos>"]
    return bos + [model.vocab.index(str(t)) for t in tokens]


# float32 in both, summed in different orders: logits of magnitude up to ~50 agree to 1e-3.
TOLERANCE = dict(rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("name,tokens", [("sort", [3, 1, 2, 2]), ("reverse", list("abca")),
                                         ("frac_prevs", list("xaxb"))])
def test_to_transformers_gives_raspcs_logits(name, tokens):
    model = compiled(name)
    hf = model.to_transformers()
    ids = torch.tensor([ids_of(model, tokens)])
    kwargs = {}
    if not model.config["causal"]:
        kwargs["attention_mask"] = torch.zeros(1, 1, ids.shape[1], ids.shape[1])
    with torch.no_grad():
        logits = hf(ids, **kwargs).logits[0].numpy()
    np.testing.assert_allclose(logits, model.forward(tokens, capture=False).logits, **TOLERANCE)
    assert hf.raspc["residual_labels"] == model.residual_labels


def test_to_transformers_keeps_the_folder_it_is_given(tmp_path):
    model = compiled("hist")
    model.to_transformers(folder=tmp_path / "hist-hf")
    assert (tmp_path / "hist-hf" / "config.json").is_file()
    assert (tmp_path / "hist-hf" / "model.safetensors").is_file()


@pytest.mark.parametrize("name,tokens", [("sort", [3, 1, 2, 2]), ("hist", list("abca"))])
def test_to_transformer_lens_gives_raspcs_logits(name, tokens):
    model = compiled(name)
    lens = model.to_transformer_lens()
    with torch.no_grad():
        logits, cache = lens.run_with_cache(torch.tensor([ids_of(model, tokens)]))
    np.testing.assert_allclose(logits[0].numpy(), model.forward(tokens, capture=False).logits, **TOLERANCE)
    # The residual stream is raspc's: the last block's output is raspc's last stage.
    layers = model.config["n_layer"]
    np.testing.assert_allclose(cache[f"blocks.{layers - 1}.hook_resid_post"][0].numpy(),
                               model.forward(tokens).residual[-1], **TOLERANCE)


def test_an_export_a_format_cannot_take_is_refused_before_writing(tmp_path):
    model = compiled("hist")
    with pytest.raises(raspc.InputError) as caught:
        model.export(tmp_path / "x", "onnx")
    assert str(caught.value).startswith("format")
    assert not (tmp_path / "x").exists()
