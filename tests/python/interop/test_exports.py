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
    with torch.no_grad():  # a bidirectional model needs no mask (the next test)
        logits = hf(ids).logits[0].numpy()
    np.testing.assert_allclose(logits, model.forward(tokens, capture=False).logits, **TOLERANCE)
    assert hf.raspc["residual_labels"] == model.residual_labels


def output_tokens(model, logits):
    """The output token at every position after BOS, argmax over the output's tokens."""
    allowed = torch.tensor(model.config.raspc["output"]["token_ids"])
    return [model.config.raspc["vocab"][i] for i in allowed[logits[0, 1:, allowed].argmax(-1)]]


def test_a_bidirectional_model_in_transformers_needs_no_mask(tmp_path, monkeypatch):
    # GPT2LMHeadModel masks causally by default and then gives hist wrong answers with no error;
    # to_transformers and AutoModelForCausalLM (trust_remote_code, through config.json's auto_map)
    # give the export's class, whose default is no mask. Its module cache goes to tmp_path.
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2LMHeadModel
    model = compiled("hist", max_len=8)
    expected = [str(v) for v in raspc.evaluate(raspc.Program.from_file(PROGRAMS / "hist.rasp"), "abcaab")]
    folder = tmp_path / "hist-hf"
    ours = model.to_transformers(folder=folder)
    ids = AutoTokenizer.from_pretrained(folder)("abcaab", return_tensors="pt").input_ids
    auto = AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=True)
    plain = GPT2LMHeadModel.from_pretrained(folder)
    with torch.no_grad():
        assert type(ours).__name__ == type(auto).__name__ == "RaspcBidirectionalGPT2"
        assert output_tokens(ours, ours(ids).logits) == expected
        assert output_tokens(auto, auto(ids).logits) == expected
        # The trap itself, so that the test fails if transformers' default ever changes under it.
        assert output_tokens(plain, plain(ids).logits) != expected
        # A 2-D padding mask masks only the padded keys.
        padded = torch.cat([ids, ids[:, 1:3]], 1)
        mask = torch.cat([torch.ones_like(ids), torch.zeros(1, 2, dtype=ids.dtype)], 1)
        assert output_tokens(ours, ours(padded, attention_mask=mask).logits[:, :ids.shape[1]]) == expected
    # A causal model's export ships no such class, nor keeps one from an earlier export.
    causal = raspc.compile(raspc.Program.from_file(PROGRAMS / "aab.rasp"), causal=True, max_len=5, samples=100)
    causal.export(folder, "hf")
    assert not (folder / "raspc_gpt2.py").exists()


def test_the_readme_gguf_config_loads_in_transformers(tmp_path):
    # transformers maps neither gpt2.context_length nor gpt2.feed_forward_length from GGUF: without
    # the config the README builds, from_pretrained refuses every raspc GGUF (mismatched shapes).
    import json
    from gguf import GGUFReader
    from transformers import GPT2Config, GPT2LMHeadModel
    model = compiled("hist", max_len=8)
    model.export(tmp_path / "hist.gguf", "gguf")
    with pytest.raises(Exception, match="mismatch"):
        GPT2LMHeadModel.from_pretrained(tmp_path, gguf_file="hist.gguf")
    reader = GGUFReader(tmp_path / "hist.gguf")
    field = lambda key: reader.fields[key].contents()
    config = GPT2Config(vocab_size=len(field("tokenizer.ggml.tokens")), n_positions=field("gpt2.context_length"),
                        n_embd=field("gpt2.embedding_length"), n_layer=field("gpt2.block_count"),
                        n_head=field("gpt2.attention.head_count"), n_inner=field("gpt2.feed_forward_length"),
                        activation_function="gelu_new", tie_word_embeddings=True)
    hf = GPT2LMHeadModel.from_pretrained(tmp_path, gguf_file="hist.gguf", config=config)
    meta = json.loads(field("raspc.metadata"))
    ids = torch.tensor([ids_of(model, list("abca"))])
    with torch.no_grad():
        logits = hf(ids, attention_mask=torch.zeros(1, 1, 5, 5)).logits[0].numpy()
    np.testing.assert_allclose(logits, model.forward(list("abca"), capture=False).logits, **TOLERANCE)
    assert meta["vocab"] == model.vocab


def test_the_tlens_export_has_a_tokenizer_for_to_str_tokens_and_generate():
    model = raspc.compile(raspc.Program.from_file(PROGRAMS / "aab.rasp"), causal=True, max_len=8, samples=100)
    lens = model.to_transformer_lens()
    assert lens.to_str_tokens("aab") == ["<bos>", "a", "a", "b"]
    assert lens.to_tokens("aab").tolist() == [ids_of(model, "aab")]
    # No end token: generation runs to max_new_tokens, greedily as raspc generate does.
    assert lens.generate("a", max_new_tokens=7, do_sample=False, verbose=False) == "a a b a a b a a"


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
