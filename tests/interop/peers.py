"""raspc's exports in the peers' own runtimes, unmodified (the `interop` CTest label).

    python peers.py compile --raspc BIN --programs DIR --models OUT
        compiles every program of DIR at max length 8, in its own mode and in the other one
        (a refusal is recorded, not fatal), into OUT, with the inputs every check runs:
        every input up to length 4 plus 200 random ones, and raspc's own results on them
        (`raspc run --inputs --json --logits`)
    python peers.py check FORMAT --raspc BIN --models OUT [--table FILE]
        exports every model OUT holds as FORMAT (hf, tlens, tl2, gguf, llmc), loads it in the
        peer (for hf also its tokenizer, and runs its model card's example) and compares: argmax equal to raspc's at every position of every input, max
        |logit difference| < 1e-3 on logits of ~50 (a position whose largest |logit| L is above
        1,000 allows 5e-4 L), numerical outputs read from the peer's
        residual within 1e-4 of raspc's. Formats that refuse a model must refuse it exactly
        where raspc's export says so. Exits 1 on any disagreement.
"""
import argparse
import itertools
import json
import os
import random
import subprocess
import sys

LOGIT_TOLERANCE = 1e-3      # float32 GEMMs in another order, on logits of magnitude ~50
# Logits of a count read from its head's 1/(w+1) (compiler/constructions/scratch_output.cpp) reach
# 1e4-1e6 by design (the closest counts' margin is 40, the others' far more), summed from products
# larger still that cancel (the rows' weights on the scratch and on `zero`): another runtime's
# order of sums moves them by up to 2.2e-4 of the position's largest |logit| (measured 2026-12-05
# in HF, argmax 540/540: hist 3.6e-5, length 6.2e-5, count_less_freq 8.4e-5, double_hist 2.2e-4).
# Where that largest |logit| is above LARGE_LOGIT, the difference allowed is that share of it.
LARGE_LOGIT = 1000.0
LARGE_LOGIT_SHARE = 5e-4
NUMERICAL_TOLERANCE = 1e-4  # the residual itself, of magnitude ~1
MAX_LEN = 8
# The one model the 1e-3 target is missed on (measured 2026-12-01: 0.024 in HF, argmax 16,304/16,304):
# long_addition compiled causally is the deepest and widest model (6 layers, 7,940 MLP units, 32.9M
# parameters), and float32 sums over that many units in another order drift further. Its own bound,
# so that a regression beyond it still fails.
# shuffle_dyck reads `length` and compares positions by numerical selectors (docs/long-contexts.md):
# their scores reach beta * k^2 (about 36 * 64 at MAX_LEN 8), so the float32 rounding that another
# runtime's order of sums adds is larger against logits of ~50: 0.0017-0.0036 in HF and
# TransformerLens (measured 2026-12-01, argmax 230/230; 0.0003 before those selectors).
# long_addition bidirectional is the same depth (6 layers): 0.0017-0.0018 in HF and both
# TransformerLens versions, argmax 16,304/16,304, once raspc's own CPU forward summed its products
# in its own order (runtime/gemm.cpp, measured 2026-12-01; under 1e-3 with Eigen's order before).
# sort bidirectional is a counting sort (docs/long-contexts.md): its MLP steps read BOS's attention
# weight at a gap of 1/(8n) from 1/2, so their slopes (about 650 at MAX_LEN 8) multiply the float32
# rounding that another runtime's order of sums gives that weight: 0.0011 in HF and 0.0015 in
# TransformerLens 2 (measured 2026-12-02, argmax 540/540; 0.0002-0.0004 as a stable sort before).
LOGIT_TOLERANCE_FOR = {"long_addition.causal": 0.05, "long_addition.bidirectional": 0.01,
                       "shuffle_dyck.bidirectional": 0.01, "shuffle_dyck.causal": 0.01,
                       "sort.bidirectional": 0.005}


def sh(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def program_mode(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# causal:"):
                return "causal" if line.split(":", 1)[1].strip() == "yes" else "bidirectional"
    return "bidirectional"


def input_texts(vocab, rng):
    """Every input up to length 4, then 200 random ones up to MAX_LEN, as `raspc run` reads them."""
    def text(tokens):
        if all(len(t) == 1 and t not in ' []"' for t in tokens):
            return "".join(tokens)
        return "[" + ",".join(tokens) + "]"
    out = []
    for n in range(1, 5):
        out += [text(p) for p in itertools.product(vocab, repeat=n)]
    for _ in range(200):
        out.append(text([rng.choice(vocab) for _ in range(rng.randint(1, MAX_LEN))]))
    return out


def cmd_compile(a):
    os.makedirs(a.models, exist_ok=True)
    rng = random.Random(8)
    models = []
    paths = sorted(os.path.join(d, f) for d in a.programs for f in os.listdir(d) if f.endswith(".rasp"))
    for path in paths:
        name = os.path.basename(path)[:-5]
        own = program_mode(path)
        for mode in [own, "bidirectional" if own == "causal" else "causal"]:
            stem = f"{name}.{mode}"
            model = os.path.join(a.models, stem + ".safetensors")
            r = sh([a.raspc, "compile", path, "--max-len", str(MAX_LEN), "-o", model] +
                   (["--causal"] if mode == "causal" else []))
            entry = {"name": name, "mode": mode, "own_mode": mode == own, "stem": stem}
            if r.returncode != 0:
                entry["refused"] = r.stderr.strip().splitlines()[0] if r.stderr.strip() else "exit %d" % r.returncode
                models.append(entry)
                continue
            inspect = sh([a.raspc, "export", model, "--format", "tlens", "-o", os.path.join(a.models, stem + ".meta")])
            assert inspect.returncode == 0, inspect.stderr
            with open(os.path.join(a.models, stem + ".meta", "tlens_config.json"), encoding="utf-8") as f:
                meta = json.load(f)["raspc"]
            vocab = [meta["vocab"][i] for i in meta["input_ids"]]
            inputs = input_texts(vocab, rng)
            inputs_file = os.path.join(a.models, stem + ".inputs")
            with open(inputs_file, "w", encoding="utf-8") as f:
                f.write("\n".join(inputs) + "\n")
            r = sh([a.raspc, "run", model, "--inputs", inputs_file, "--json", "--logits"])
            assert r.returncode == 0, r.stderr
            with open(os.path.join(a.models, stem + ".expected.jsonl"), "w", encoding="utf-8") as f:
                f.write(r.stdout)
            entry.update(model=model, inputs=len(inputs))
            models.append(entry)
            print(f"compiled {stem}: {len(inputs)} inputs")
    with open(os.path.join(a.models, "models.json"), "w", encoding="utf-8") as f:
        json.dump(models, f, indent=1)


# --- the peers: each returns a function from a batch of token-id sequences of one length to
# (logits (B,T,V), numerical readings (B,T) or None) -----------------------------------------

def hf_runner(folder, meta, torch):
    from transformers import AutoTokenizer, GPT2LMHeadModel
    model, info = GPT2LMHeadModel.from_pretrained(folder, output_loading_info=True)
    bad = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if bad:
        raise AssertionError(f"HF load: {bad}")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    return model, tokenizer, lambda ids, mask=True: hf_forward(model, meta, torch, ids, mask)


def hf_forward(model, meta, torch, ids, bidirectional_mask=True):
    x = torch.tensor(ids)
    kwargs = {}
    if not meta["config"]["causal"] and bidirectional_mask:
        kwargs["attention_mask"] = torch.zeros(x.shape[0], 1, x.shape[1], x.shape[1])
    captured = {}
    hook = model.transformer.ln_f.register_forward_pre_hook(lambda m, args: captured.update(x=args[0]))
    with torch.no_grad():
        logits = model(x, **kwargs).logits
    hook.remove()
    return logits, numerical(meta, captured["x"])


def numerical(meta, residual):
    if meta["output"].get("encoding") != "numerical":
        return None
    return residual[:, :, meta["output"]["dim"]]


def tlens_runner(folder, meta, torch):
    sys.path.insert(0, folder)
    import load_tlens
    sys.path.pop(0)
    model = load_tlens.load(folder)
    layers = meta["config"]["n_layer"]

    def run(ids):
        with torch.no_grad():
            logits, cache = model.run_with_cache(torch.tensor(ids))
        # A model of no blocks: the residual before ln_final is the two embeddings' sum.
        residual = (cache[f"blocks.{layers - 1}.hook_resid_post"] if layers
                    else cache["hook_embed"] + cache["hook_pos_embed"])
        return logits, numerical(meta, residual)
    return model, run


def gguf_runner(path, meta, torch):
    """The GGUF file's hyperparameters read with gguf-py under the keys llama.cpp's gpt2 graph reads,
    and its tensors loaded by transformers' own GGUF loader (names, layouts and all). The config is
    passed explicitly because transformers maps neither gpt2.context_length nor
    gpt2.feed_forward_length (it would assume 1,024 positions and a 4C MLP)."""
    import gguf
    from transformers import GPT2Config, GPT2LMHeadModel
    reader = gguf.GGUFReader(path)
    def field(key):
        f = reader.fields[key]
        return f.contents()
    assert field("general.architecture") == "gpt2"
    config = GPT2Config(vocab_size=len(field("tokenizer.ggml.tokens")), n_positions=field("gpt2.context_length"),
                        n_embd=field("gpt2.embedding_length"), n_layer=field("gpt2.block_count"),
                        n_head=field("gpt2.attention.head_count"), n_inner=field("gpt2.feed_forward_length"),
                        layer_norm_epsilon=field("gpt2.attention.layer_norm_epsilon"),
                        activation_function="gelu_new", resid_pdrop=0, embd_pdrop=0, attn_pdrop=0,
                        tie_word_embeddings=True, bos_token_id=meta["bos_id"], eos_token_id=None)
    if field("gpt2.attention.causal") != meta["config"]["causal"]:
        raise AssertionError("gpt2.attention.causal does not match the model's config")
    model = GPT2LMHeadModel.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path), config=config)
    model.eval()
    return lambda ids: hf_forward(model, meta, torch, ids)


def llmc_runner(folder, meta, torch):
    """model.bin read as llm.c's gpt2_build_from_checkpoint reads it, into an HF GPT-2."""
    import numpy as np
    from transformers import GPT2Config, GPT2LMHeadModel
    raw = np.fromfile(os.path.join(folder, "model.bin"), dtype=np.float32)
    header = raw[:256].view(np.int32)
    assert header[0] == 20240326 and header[1] == 3, header[:8]
    maxT, V, L, NH, C, Vp = (int(v) for v in header[2:8])
    shapes = [("wte", (Vp, C)), ("wpe", (maxT, C)), ("ln1w", (L, C)), ("ln1b", (L, C)),
              ("qkvw", (L, 3 * C, C)), ("qkvb", (L, 3 * C)), ("attprojw", (L, C, C)), ("attprojb", (L, C)),
              ("ln2w", (L, C)), ("ln2b", (L, C)), ("fcw", (L, 4 * C, C)), ("fcb", (L, 4 * C)),
              ("fcprojw", (L, C, 4 * C)), ("fcprojb", (L, C)), ("lnfw", (C,)), ("lnfb", (C,))]
    t, at = {}, 256
    for name, shape in shapes:
        n = int(np.prod(shape))
        t[name] = torch.from_numpy(raw[at:at + n].reshape(shape).copy())
        at += n
    assert at == raw.size, "trailing data in model.bin"
    config = GPT2Config(vocab_size=V, n_positions=maxT, n_embd=C, n_layer=L, n_head=NH, n_inner=4 * C,
                        activation_function="gelu_new", resid_pdrop=0, embd_pdrop=0, attn_pdrop=0,
                        layer_norm_epsilon=1e-5, tie_word_embeddings=True)
    sd = {"transformer.wte.weight": t["wte"][:V], "transformer.wpe.weight": t["wpe"],
          "transformer.ln_f.weight": t["lnfw"], "transformer.ln_f.bias": t["lnfb"]}
    for l in range(L):
        h = f"transformer.h.{l}."
        sd.update({h + "ln_1.weight": t["ln1w"][l], h + "ln_1.bias": t["ln1b"][l],
                   h + "attn.c_attn.weight": t["qkvw"][l].T, h + "attn.c_attn.bias": t["qkvb"][l],
                   h + "attn.c_proj.weight": t["attprojw"][l].T, h + "attn.c_proj.bias": t["attprojb"][l],
                   h + "ln_2.weight": t["ln2w"][l], h + "ln_2.bias": t["ln2b"][l],
                   h + "mlp.c_fc.weight": t["fcw"][l].T, h + "mlp.c_fc.bias": t["fcb"][l],
                   h + "mlp.c_proj.weight": t["fcprojw"][l].T, h + "mlp.c_proj.bias": t["fcprojb"][l]})
    model = GPT2LMHeadModel(config)
    result = model.load_state_dict(sd, strict=False)
    assert not result.unexpected_keys and set(result.missing_keys) <= {"lm_head.weight"}, result
    model.tie_weights()
    model.eval()
    return lambda ids: hf_forward(model, meta, torch, ids)


def compare(run, meta, expected, torch):
    """(inputs, argmax agreements, max |logit difference| where a position's largest |logit| is at
    most LARGE_LOGIT, max |logit difference| as a share of it where it is above, max |numerical
    difference|)."""
    allowed = meta["output"].get("token_ids") or [i for i in range(len(meta["vocab"])) if i != meta["bos_id"]]
    by_length = {}
    for e in expected:
        by_length.setdefault(len(e["logits"]), []).append(e)
    # Batches of at most 256: TransformerLens's cache of long_addition (7,940 MLP units, 6 layers)
    # for all 10^4 inputs of one length would need tens of GB.
    batches = [group[i:i + 256] for _, group in sorted(by_length.items()) for i in range(0, len(group), 256)]
    agree, worst_logit, worst_share, worst_number = 0, 0.0, 0.0, 0.0
    for group in batches:
        ids = [[meta["bos_id"]] + [meta["vocab"].index(v) for v in tokens_of(e["input"], meta)] for e in group]
        logits, readings = run(ids)
        ref = torch.tensor([e["logits"] for e in group])
        largest = ref.abs().amax(-1, keepdim=True)  # (B, T, 1)
        diff = (logits - ref).abs()
        small = largest <= LARGE_LOGIT
        worst_logit = max(worst_logit, float(torch.where(small, diff, torch.zeros_like(diff)).max()))
        worst_share = max(worst_share, float(torch.where(small, torch.zeros_like(diff), diff / largest).max()))
        best = torch.tensor(allowed)[logits[:, 1:, allowed].argmax(-1)]
        for b, e in enumerate(group):
            if readings is not None:
                diff = (readings[b, 1:] - torch.tensor(e["readings"])).abs().max()
                worst_number = max(worst_number, float(diff))
                agree += bool(diff < NUMERICAL_TOLERANCE)
            else:
                agree += [meta["vocab"][i] for i in best[b].tolist()] == e["outputs"]
    return len(expected), agree, worst_logit, worst_share, worst_number


def tokens_of(text, meta):
    if text.startswith("["):
        return [t.strip() for t in text[1:-1].split(",")]
    return list(text)


def cmd_check(a):
    import torch
    torch.set_num_threads(1)
    with open(os.path.join(a.models, "models.json"), encoding="utf-8") as f:
        models = json.load(f)
    fmt = "tlens" if a.format == "tl2" else a.format
    rows, failures = [], 0
    for m in models:
        if "refused" in m:
            continue
        out = os.path.join(a.work, f"{m['stem']}.{a.format}")
        r = sh([a.raspc, "export", m["model"], "--format", fmt, "-o", out])
        with open(os.path.join(a.models, m["stem"] + ".meta", "tlens_config.json"), encoding="utf-8") as f:
            meta = json.load(f)["raspc"]
        if r.returncode != 0:
            reason = r.stderr.strip().split(": ", 3)[-1]
            rows.append((m["name"], m["mode"], "refused", reason))
            continue
        with open(os.path.join(a.models, m["stem"] + ".expected.jsonl"), encoding="utf-8") as f:
            expected = [json.loads(line) for line in f]
        extra = ""
        if a.format == "hf":
            model, tokenizer, run = hf_runner(out, meta, torch)
            check_tokenizer(tokenizer, meta, expected)
            check_card(out, m["model"], a.raspc, meta)
            if not meta["config"]["causal"]:
                # Without the documented mask HF runs causally: the model card's warning must be true
                # for the programs that look ahead (a causal program compiled bidirectionally may not;
                # a model of no blocks looks nowhere, and its config says causal).
                unmasked = compare(lambda ids: run(ids, False), meta, expected, torch)
                extra = f"without the mask: {unmasked[1]}/{unmasked[0]}"
                if m["own_mode"] and unmasked[1] == unmasked[0]:
                    failures += 1
                    extra += " (the warning is false!)"
        elif a.format in ("tlens", "tl2"):
            _, run = tlens_runner(out, meta, torch)
        elif a.format == "gguf":
            run = gguf_runner(out, meta, torch)
        else:
            run = llmc_runner(out, meta, torch)
        n, agree, worst_logit, worst_share, worst_number = compare(run, meta, expected, torch)
        ok = (agree == n and worst_logit < LOGIT_TOLERANCE_FOR.get(m["stem"], LOGIT_TOLERANCE)
              and worst_share < LARGE_LOGIT_SHARE and worst_number < NUMERICAL_TOLERANCE)
        failures += not ok
        detail = (f"max |dlogit| {worst_logit:.2g}" + (f", of large logits {worst_share:.2g}" if worst_share else "") +
                  (f", max |dvalue| {worst_number:.2g}" if meta["output"].get("encoding") == "numerical" else ""))
        rows.append((m["name"], m["mode"], f"{agree}/{n}" + ("" if ok else " FAIL"), detail + (f"; {extra}" if extra else "")))
        print(f"{a.format} {m['stem']}: {agree}/{n}, {detail} {extra}", flush=True)
    table = [f"| program | mode | {a.format}: argmax agree | notes |", "|---|---|---|---|"]
    table += [f"| {p} | {mode} | {agree} | {note} |" for p, mode, agree, note in rows]
    print("\n".join(table))
    if a.table:
        with open(a.table, "w", encoding="utf-8") as f:
            f.write("\n".join(table) + "\n")
    checked = sum(1 for r in rows if r[2] != "refused")
    print(f"{checked - failures} passed, {failures} failed, {len(rows) - checked} skipped")
    return 1 if failures or checked == 0 else 0


def check_card(folder, model_path, raspc, meta):
    """The model card's example, run as written (its PATH replaced), prints what raspc run prints."""
    import re
    card = open(os.path.join(folder, "README.md"), encoding="utf-8").read()
    code = re.search(r"```python\n(.*?)```", card, re.S).group(1).replace('"PATH"', repr(folder))
    example = re.search(r'tokenizer\("([^"]*)"', code).group(1)
    r = sh([sys.executable, "-c", code])
    if r.returncode != 0:
        raise AssertionError(f"the model card's example fails:\n{r.stderr[-2000:]}")
    tokens = example.split() if " " in example else list(example)
    want = json.loads(sh([raspc, "run", model_path, "--input", "[" + ",".join(tokens) + "]", "--json"]).stdout)
    printed = eval(r.stdout.strip())  # a list of tokens or of numbers, as the card prints it
    if meta["output"].get("encoding") == "numerical":
        ok = len(printed) == len(want["readings"]) and all(abs(a - b) < 1e-3 for a, b in zip(printed, want["readings"]))
    else:
        ok = printed == want["outputs"]
    if not ok:
        raise AssertionError(f"the model card's example prints {printed}, raspc run gives {want}")


def check_tokenizer(tokenizer, meta, expected):
    for e in expected[:20]:
        tokens = tokens_of(e["input"], meta)
        want = [meta["bos_id"]] + [meta["vocab"].index(t) for t in tokens]
        got = tokenizer(" ".join(tokens))["input_ids"]
        if got != want:
            raise AssertionError(f"AutoTokenizer gives {got} for {tokens}, not {want}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--raspc", required=True)
    c.add_argument("--programs", required=True, nargs="+")
    c.add_argument("--models", required=True)
    k = sub.add_parser("check")
    k.add_argument("format", choices=["hf", "tlens", "tl2", "gguf", "llmc"])
    k.add_argument("--raspc", required=True)
    k.add_argument("--models", required=True)
    k.add_argument("--work", required=True)
    k.add_argument("--table")
    a = p.parse_args()
    if a.cmd == "compile":
        cmd_compile(a)
        return 0
    os.makedirs(a.work, exist_ok=True)
    return cmd_check(a)


if __name__ == "__main__":
    sys.exit(main())
