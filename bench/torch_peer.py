"""PyTorch on exactly the workloads of bench/runtime_bench.cpp and bench/train_bench.cpp, one thread.

    python torch_peer.py [--seconds S] [--steps N] [--json-out FILE]
        prints PyTorch's figures (and writes them to FILE as JSON: one round of peers.sh)
    python torch_peer.py --summarize DIR --rounds R
        reads the R rounds of DIR (runtime_R.txt and train_R.txt, raspc's benches' output;
        torch_R.json, this script's) and prints each figure's median on each side, the ratio of the
        medians and the range of the rounds' own ratios

The model is the d64 reference GPT-2 of both benches (n_embd 64, 2 layers, 4 heads, MLP 256,
LayerNorm, GELU in its tanh form, tied unembedding), written directly in torch (no transformers
overhead): decode with a KV cache over a context of 16, causal; a batched forward of 64 x 16,
causal; and the training step of train_bench: 32 sequences of 17 positions, bidirectional,
vocabulary 16, fixed random tokens and targets (-1 at the BOS position), cross-entropy, backward,
gradient clipping at norm 1, AdamW (lr 1e-3, betas 0.9 and 0.99, eps 1e-8, weight decay 0.01 on
matrices and embeddings only). Times are the thread's (runtime) or the process's (training) CPU
time, as raspc's benches measure theirs.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F

C, LAYERS, HEADS, INNER, VOCAB = 64, 2, 4, 256, 16


class Gpt2(torch.nn.Module):
    def __init__(self, positions, causal):
        super().__init__()
        self.causal = causal
        self.wte = torch.nn.Parameter(torch.randn(VOCAB, C) * 0.02)
        self.wpe = torch.nn.Parameter(torch.randn(positions, C) * 0.02)
        self.blocks = torch.nn.ModuleList()
        for _ in range(LAYERS):
            b = torch.nn.Module()
            b.ln_1 = torch.nn.LayerNorm(C)
            b.c_attn = torch.nn.Linear(C, 3 * C)
            b.c_proj = torch.nn.Linear(C, C)
            b.ln_2 = torch.nn.LayerNorm(C)
            b.c_fc = torch.nn.Linear(C, INNER)
            b.c_fc_proj = torch.nn.Linear(INNER, C)
            self.blocks.append(b)
        self.ln_f = torch.nn.LayerNorm(C)

    def forward(self, tokens):
        B, T = tokens.shape
        x = self.wte[tokens] + self.wpe[:T]
        for b in self.blocks:
            q, k, v = b.c_attn(b.ln_1(x)).split(C, dim=2)
            heads = lambda t: t.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=self.causal)
            x = x + b.c_proj(y.transpose(1, 2).reshape(B, T, C))
            x = x + b.c_fc_proj(F.gelu(b.c_fc(b.ln_2(x)), approximate="tanh"))
        return self.ln_f(x) @ self.wte.t()

    def decode_step(self, token, t, cache):
        """One token at position t; cache[l] holds (k, v) of shape (HEADS, P, d)."""
        x = self.wte[token] + self.wpe[t]
        d = C // HEADS
        for l, b in enumerate(self.blocks):
            q, k, v = b.c_attn(b.ln_1(x)).split(C)
            keys, values = cache[l]
            keys[:, t] = k.view(HEADS, d)
            values[:, t] = v.view(HEADS, d)
            scores = (keys[:, : t + 1] @ q.view(HEADS, d, 1)).squeeze(2) / math.sqrt(d)
            y = (torch.softmax(scores, dim=1).unsqueeze(1) @ values[:, : t + 1]).reshape(C)
            x = x + b.c_proj(y)
            x = x + b.c_fc_proj(F.gelu(b.c_fc(b.ln_2(x)), approximate="tanh"))
        return self.ln_f(x) @ self.wte.t()


def measure(seconds, work, clock=time.thread_time):
    work()
    reps, start = 0, clock()
    while clock() - start < seconds:
        work()
        reps += 1
    return reps, clock() - start


def runtime_figures(seconds):
    figures = {}
    # The square product, and the batched forward's four (1,024 rows), as runtime_bench measures ours.
    for name, shapes in (("gemm 512^3 GFLOP/s", [(512, 512, 512)]),
                         ("gemm forward GFLOP/s", [(1024, 64, 192), (1024, 64, 64), (1024, 64, 256), (1024, 256, 64)])):
        pairs = [(torch.rand(n, k) * 2 - 1, torch.rand(k, m) * 2 - 1) for n, k, m in shapes]
        reps, cpu = measure(seconds, lambda: [a @ b for a, b in pairs])
        figures[name] = sum(2 * n * k * m for n, k, m in shapes) * reps / cpu * 1e-9
    with torch.inference_mode():
        model = Gpt2(16, causal=True).eval()
        d = C // HEADS
        cache = [(torch.zeros(HEADS, 16, d), torch.zeros(HEADS, 16, d)) for _ in range(LAYERS)]

        tokens = [torch.tensor(t % VOCAB) for t in range(16)]

        def decode():
            for t in range(16):
                model.decode_step(tokens[t], t, cache)

        reps, cpu = measure(seconds, decode)
        figures["decode us/token"] = 1e6 * cpu / (reps * 16)
        batch = torch.randint(0, VOCAB, (64, 16))
        reps, cpu = measure(seconds, lambda: model(batch))
        figures["batched tokens/s"] = reps * 64 * 16 / cpu
    return figures


def train_figures(steps):
    torch.manual_seed(1)
    B, T = 32, 17
    model = Gpt2(T, causal=False)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    tokens = torch.randint(0, VOCAB, (B, T))
    tokens[:, 0] = 0
    targets = torch.randint(0, VOCAB, (B, T))
    targets[:, 0] = -1

    def step():
        optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(tokens).view(-1, VOCAB), targets.view(-1), ignore_index=-1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(10):
        step()
    start = time.process_time()
    for _ in range(steps):
        step()
    return {"train steps/s": steps / (time.process_time() - start)}


def raspc_figures(runtime_text, train_text):
    """The same figures from runtime_bench's and train_bench's output."""
    patterns = [  # (figure, the text it is read from, the pattern)
        ("gemm 512^3 GFLOP/s", runtime_text, r"float GEMM 512x512x512: ([\d.]+) GFLOP/s"),
        ("gemm forward GFLOP/s", runtime_text, r"float GEMM, the batched forward's products.*?: ([\d.]+) GFLOP/s"),
        ("decode us/token", runtime_text, r"d64 L2 H4 MLP256 \(context 16\)\s+\d+\s+([\d.]+)"),
        ("batched tokens/s", runtime_text, r"batched forward.*?([\d.]+) tokens/s"),
        ("train steps/s", train_text,
         r"forward \+ backward \+ AdamW \(fixed batch\)\s+[\d.]+ steps/s wall\s+([\d.]+) steps/s CPU"),
        # Not a peer figure (the table lists torch's): where the run's clock was.
        ("core peak GFLOP/s", runtime_text, r"multiply-add peak now \(registers only\): ([\d.]+) GFLOP/s"),
    ]
    figures = {}
    for name, text, pattern in patterns:
        m = re.search(pattern, text)
        if m:
            figures[name] = float(m.group(1))
    return figures


def summarize(folder, rounds):
    """The table of `rounds` alternating rounds: each side's median, the ratio of the medians."""
    ours, peers, header = [], [], ""
    for r in range(1, rounds + 1):
        with open(os.path.join(folder, f"runtime_{r}.txt"), encoding="utf-8") as f, \
                open(os.path.join(folder, f"train_{r}.txt"), encoding="utf-8") as g:
            ours.append(raspc_figures(f.read(), g.read()))
        with open(os.path.join(folder, f"torch_{r}.json"), encoding="utf-8") as f:
            record = json.load(f)
        header = record["header"]
        peers.append(record["figures"])
    print(header)
    print(f"{rounds} rounds, each raspc's benches then torch's; a figure is its median over the rounds")
    # Which way is better: a time (us/token) is better lower, a rate higher; the ratio is always
    # raspc's advantage (above 1: raspc ahead).
    lower_is_better = {"decode us/token"}

    def ratio(name, raspc, torch_value):
        return torch_value / raspc if name in lower_is_better else raspc / torch_value

    print(f"{'figure':<22} {'raspc':>14} {'torch':>14} {'raspc/torch':>12}   rounds' ratios")
    missing = 0
    median = {}
    for name in peers[0]:
        values = [o[name] for o in ours if name in o]
        if len(values) < rounds:
            print(f"{name:<22} {'(not found)':>14} {statistics.median(p[name] for p in peers):>14.2f}")
            missing += 1
            continue
        mine, theirs = statistics.median(values), statistics.median(p[name] for p in peers)
        median[name] = (mine, theirs)
        each = [ratio(name, o[name], p[name]) for o, p in zip(ours, peers)]
        print(f"{name:<22} {mine:>14.2f} {theirs:>14.2f} {ratio(name, mine, theirs):>11.2f}x   "
              f"{min(each):.2f}-{max(each):.2f}x")
    # The clock of the machines these run on moves between runs; the products' share of the core's
    # peak (runtime_bench measured it each round) says where a ratio was taken.
    peaks = [o["core peak GFLOP/s"] for o in ours if "core peak GFLOP/s" in o]
    if len(peaks) == rounds:
        peak = statistics.median(peaks)
        shares = ", ".join(f"{name.split(' GFLOP')[0]}: raspc {100 * median[name][0] / peak:.0f}%, "
                           f"torch {100 * median[name][1] / peak:.0f}%"
                           for name in ("gemm 512^3 GFLOP/s", "gemm forward GFLOP/s") if name in median)
        print(f"the core's multiply-add peak (runtime_bench, median of {min(peaks):.1f}-{max(peaks):.1f}): "
              f"{peak:.1f} GFLOP/s; of it, {shares}")
    return 1 if missing else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per runtime measurement")
    parser.add_argument("--steps", type=int, default=200, help="timed training steps")
    parser.add_argument("--json-out", help="also write the figures here, as JSON (one round of peers.sh)")
    parser.add_argument("--summarize", metavar="DIR", help="print the table of the rounds in DIR; measure nothing")
    parser.add_argument("--rounds", type=int, default=1, help="how many rounds DIR holds")
    a = parser.parse_args()
    if a.summarize:
        return summarize(a.summarize, a.rounds)
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    peer = runtime_figures(a.seconds)
    peer.update(train_figures(a.steps))
    header = f"torch {torch.__version__}, one thread, CPU capability {torch.backends.cpu.get_cpu_capability()}"
    print(header)
    for name, value in peer.items():
        print(f"torch {name}: {value:.2f}")
    if a.json_out:
        with open(a.json_out, "w", encoding="utf-8") as f:
            json.dump({"header": header, "figures": peer}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
