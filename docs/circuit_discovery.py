"""Circuit discovery against ground truth: edge activation patching in TransformerLens, scored
against the circuit raspc reads off a compiled model's weights (Model.circuit()).

    PYTHONPATH=build/python .interop-venv/bin/python docs/circuit_discovery.py

For each program: compile it, load it in TransformerLens, score every edge of the model's full
graph by how much patching that one edge (clean -> corrupt) moves the output, and compare with the
true circuit (raspc.circuits.score: ROC AUC over the full graph). Then two sanity checks of the
scorer: the true circuit scores 1.0, random scores about 0.5. Needs torch and transformer-lens.
A method that names edges by hooks, as ACDC does, converts them with Circuit.edge_from_hooks:
truth.edge_from_hooks("blocks.0.attn.hook_result", 1, "blocks.1.hook_q_input", 0) is
("a0.1", "a1.0", "q").
"""

import random
import tempfile
from pathlib import Path

import torch

import raspc
from raspc.circuits import score

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
LENGTH, PAIRS = 4, 32  # clean/corrupt pairs, all of one length (patching needs aligned positions)


def token_ids(model, tokens):
    return [model.vocab.index("<bos>")] + [model.vocab.index(str(t)) for t in tokens]


def edge_patching(model, lens, graph, clean, corrupt):
    """{(from, to, via): score} for every edge of `graph`: the mean absolute change, over
    the pairs and positions, of the clean answer's logit difference when the receiver's input gets
    (corrupt - clean) of the sender's output, every other edge left clean."""
    cfg = lens.cfg
    heads, d_head, last = cfg.n_heads, cfg.d_head, cfg.n_layers - 1
    answers = torch.tensor(model.metadata["output"]["token_ids"])  # the output's token ids
    with torch.no_grad():
        clean_logits, clean_cache = lens.run_with_cache(clean)
        _, corrupt_cache = lens.run_with_cache(corrupt)
    answer = clean_logits[:, 1:, answers].argmax(-1, keepdim=True)  # BOS (position 0) has no output

    def logit_diff(logits):  # the clean answer's logit minus the mean of the other answers'
        logits = logits[:, 1:, answers]
        right = logits.gather(-1, answer)[..., 0]
        return right - (logits.sum(-1) - right) / (len(answers) - 1)

    base = logit_diff(clean_logits)

    def output(cache, node):  # what a node adds to the residual stream
        if node in ("embed", "pos_embed"):
            return cache[f"hook_{node}"]
        if node.startswith("m"):
            return cache[f"blocks.{node[1:]}.hook_mlp_out"]
        layer, head = map(int, node[1:].split("."))
        # TL 4's native bridge has no per-head hook_result (set_use_attn_result raises): a head's
        # output is its z through its slice of W_O (the shared bias b_O cancels in the difference).
        w_o = lens.blocks[layer].attn.o.original_component.weight.view(cfg.d_model, heads, d_head)
        return cache[f"blocks.{layer}.attn.hook_z"][:, :, head] @ w_o[:, head].T

    def receiver(to, via, delta):  # (hook name, hook function) that feeds delta to one input
        if to == "unembed":
            return f"blocks.{last}.hook_resid_post", lambda act, hook: act + delta
        if via == "mlp_in":  # hook_mlp_in (set_use_hook_mlp_in) is the MLP's input alone
            return f"blocks.{to[1:]}.hook_mlp_in", lambda act, hook: act + delta
        # A head's q, k or v input. TL 4's native bridge has no split hook_q_input per head either
        # (set_use_split_qkv_input raises), so this head's q (k, v) is recomputed from its patched
        # input, ln1(resid_pre + delta), and replaces the head's slice of hook_q (k, v).
        layer, head = map(int, to[1:].split("."))
        block = lens.blocks[layer]
        resid = clean_cache[f"blocks.{layer}.hook_resid_pre"] + delta  # nothing upstream changed
        projection = getattr(block.attn, via).original_component
        new = projection(block.ln1.original_component(resid)).view(*resid.shape[:2], heads, d_head)

        def replace(act, hook):
            act = act.clone()
            act[:, :, head] = new[:, :, head]
            return act
        return f"blocks.{layer}.attn.hook_{via}", replace

    scores = {}
    with torch.no_grad():
        for sender, to, via in graph:
            delta = output(corrupt_cache, sender) - output(clean_cache, sender)
            patched = lens.run_with_hooks(clean, fwd_hooks=[receiver(to, via, delta)])
            # Rounded: float32 noise (~1e-5 on logits of ~40) must not rank one edge above another.
            scores[(sender, to, via)] = round((logit_diff(patched) - base).abs().mean().item(), 4)
    return scores


def study(name, folder):
    program = raspc.Program.from_file(PROGRAMS / f"{name}.rasp")
    model = raspc.compile(program, max_len=5, samples=100)
    lens = model.to_transformer_lens(folder=Path(folder) / name)  # unprocessed weights: no fold_ln
    lens.set_use_hook_mlp_in(True)
    truth = model.circuit()
    rng = random.Random(0)
    vocab = [str(t) for t in program.vocab]
    pairs = [[rng.choice(vocab) for _ in range(LENGTH)] for _ in range(2 * PAIRS)]
    clean = torch.tensor([token_ids(model, tokens) for tokens in pairs[:PAIRS]])
    corrupt = torch.tensor([token_ids(model, tokens) for tokens in pairs[PAIRS:]])

    scores = edge_patching(model, lens, truth.full_graph(), clean, corrupt)
    found = score(scores, truth)
    c = model.config
    print(f"{name}: n_layer {c['n_layer']}, n_head {c['n_head']}; true circuit {len(truth.edge_list())} of "
          f"{len(scores)} edges")
    print(f"  edge activation patching: ROC AUC {found['roc_auc']:.2f}")
    # What activation patching cannot see: an edge that carries the same thing on every input of
    # this length -- the bookkeeping dimensions `one` and `bos`, the position embeddings, what a
    # head computes from them alone (reverse.rasp's `length`) -- moves nothing when patched, so
    # it scores 0 although the model needs it (pairs of different lengths do not line up). That
    # is the method's blind spot, not the ground truth's error. (Edges outside the circuit score 0
    # here too: the rounding takes their float noise.)
    silent = [e for e in truth.edges if e["in_circuit"] and scores[(e["from"], e["to"], e["via"])] == 0]
    carried = sorted({label for e in silent for label in e["carries"]})
    print(f"  true edges patching leaves at 0: {len(silent)}, carrying {', '.join(carried) or 'nothing'}")

    # Sanity checks of the scorer. The true circuit itself scores 1.0 everywhere:
    exact = score(truth.node_ids() + truth.edge_list(), truth)
    true_edges = set(truth.edge_list())
    perfect = score({edge: 1.0 if edge in true_edges else 0.0 for edge in truth.full_graph()}, truth)
    print(f"  true circuit: node precision {exact['node_precision']:.2f} recall {exact['node_recall']:.2f}, "
          f"edge precision {exact['edge_precision']:.2f} recall {exact['edge_recall']:.2f}, "
          f"ROC AUC {perfect['roc_auc']:.2f}")
    # ... and random scores about 0.5 (the mean over 20 seeds):
    aucs = []
    for seed in range(20):
        noise = random.Random(seed)
        aucs.append(score({edge: noise.random() for edge in truth.full_graph()}, truth)["roc_auc"])
    print(f"  random scores: mean ROC AUC {sum(aucs) / len(aucs):.2f} over {len(aucs)} seeds")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="raspc-circuits-") as folder:  # the TL exports
        for name in ("hist", "sort"):  # one layer, one head; two layers, three parallel heads
            study(name, folder)
