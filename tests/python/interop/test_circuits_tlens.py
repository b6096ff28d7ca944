"""Model.patch and the circuit-discovery example, through TransformerLens: an interchange
intervention done with TransformerLens hooks on the exported model gives the output raspc's own
patch gives (and the interpreter predicts), and docs/circuit_discovery.py runs and prints its
sanity checks. Needs torch and transformer-lens (the interop venv)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import raspc

REPO = Path(__file__).resolve().parents[3]
PROGRAMS = REPO / "programs"


def compiled(name, max_len=5):
    return raspc.compile(raspc.Program.from_file(PROGRAMS / f"{name}.rasp"), max_len=max_len, samples=100)


def ids_of(model, tokens):
    return torch.tensor([[model.vocab.index("<bos>")] + [model.vocab.index(str(t)) for t in tokens]])


def outputs(model, logits):
    """The output token at every position after BOS, argmax over the output's tokens."""
    allowed = torch.tensor(model.metadata["output"]["token_ids"])
    return [model.vocab[i] for i in allowed[logits[0, 1:, allowed].argmax(-1)]]


def stage_hook(stage):
    """Residual stage s as TransformerLens names it: 0 is blocks.0.hook_resid_pre, 2L+1 is
    blocks.L.hook_resid_mid, 2L+2 is blocks.L.hook_resid_post (Model.stages)."""
    if stage == 0:
        return "blocks.0.hook_resid_pre"
    return f"blocks.{(stage - 1) // 2}.hook_resid_{'mid' if stage % 2 else 'post'}"


def patch_in_tlens(model, lens, tokens, source, sop):
    """The s-op's residual dimensions, at the stage where it is written, set at every position to
    their values on `source`, with a TransformerLens hook; the outputs."""
    info = next(s for s in model.metadata["sops"] if s["name"] == sop)
    stage, dims = stage_hook(info["stage"]), torch.tensor(info["dims"])
    assert stage == model.stages[info["stage"]]
    with torch.no_grad():
        _, clean = lens.run_with_cache(ids_of(model, tokens), names_filter=stage)
        _, patched_from = lens.run_with_cache(ids_of(model, source), names_filter=stage)
    target = clean[stage].clone()
    target[..., dims] = patched_from[stage][..., dims]
    if stage.endswith("hook_resid_mid"):
        # TL 4's bridge aliases hook_resid_mid to ln2.hook_in: a hook that returns a new tensor
        # there reaches the MLP alone, not the residual stream the later layers and the unembed
        # read. resid_mid = resid_pre + attn_out, so the patch goes into the attention's output.
        hook, change = stage.replace("hook_resid_mid", "hook_attn_out"), target - clean[stage]
        fwd_hooks = [(hook, lambda act, hook: act + change)]
    else:
        fwd_hooks = [(stage, lambda act, hook: target)]
    with torch.no_grad():
        return outputs(model, lens.run_with_hooks(ids_of(model, tokens), fwd_hooks=fwd_hooks))


@pytest.mark.parametrize("name,tokens,source,sop", [
    ("hist", "abbd", "aaab", "hist"),                  # one layer; hist at blocks.0.hook_resid_post
    ("double_hist", "aabc", "abcd", "hist"),           # a middle s-op the second layer's heads read
    ("shuffle_dyck", "(())", "))((", "balance"),       # a middle s-op at blocks.0.hook_resid_mid
    ("reverse", "abcd", "dcba", "reversed"),           # at blocks.1.hook_resid_mid, read by the unembed
])
def test_a_patch_in_transformer_lens_gives_raspcs_output(name, tokens, source, sop):
    model = compiled(name)
    lens = model.to_transformer_lens()
    intervention = model.patch(tokens, source, sop)
    with torch.no_grad():
        unpatched = outputs(model, lens(ids_of(model, tokens)))
    patched = patch_in_tlens(model, lens, tokens, source, sop)
    assert unpatched == [str(v) for v in intervention.clean]
    assert patched == [str(v) for v in intervention.model]
    assert patched == [str(v) for v in intervention.predicted]
    assert intervention.agree and intervention.changed and patched != unpatched


def test_the_circuit_discovery_example_runs_and_its_sanity_checks_hold(tmp_path):
    # In an empty folder, its temporary folder (the TransformerLens exports) inside tmp_path.
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    run = subprocess.run([sys.executable, str(REPO / "docs" / "circuit_discovery.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    text = run.stdout
    for name in ("hist", "sort"):
        assert re.search(rf"^{name}: n_layer \d+, n_head \d+;", text, re.M), text
    # The true circuit scores 1.0 in every measure, once a program.
    perfect = ("true circuit: node precision 1.00 recall 1.00, edge precision 1.00 recall 1.00, "
               "ROC AUC 1.00")
    assert text.count(perfect) == 2, text
    # Random scores rank the true edges by chance; edge activation patching does better.
    randoms = [float(x) for x in re.findall(r"random scores: mean ROC AUC ([\d.]+) over 20 seeds", text)]
    assert len(randoms) == 2 and all(0.35 <= auc <= 0.65 for auc in randoms), text
    found = [float(x) for x in re.findall(r"edge activation patching: ROC AUC ([\d.]+)", text)]
    assert len(found) == 2 and all(auc > 0.6 for auc in found), text
    assert list(tmp_path.iterdir()) == []  # the exports went with their temporary folder
