"""Width outputs read as numbers (compiler/constructions/number_output.cpp) in the peers' runtimes:
hist and length at max length 1,024 exported as hf and tlens, run by transformers and
TransformerLens through tests/interop/peers.py's own runners, beside `raspc run`.

    RASPC_INTEROP_VENV/bin/python bench/number_output_peers.py BUILD/raspc [MAX_LEN ...]

Prints, per program, length and format: argmax agreement with raspc over every position, the
largest |logit difference| (the scores are quadratic in the count, so far tokens' logits reach
-1e8 and differ by float32 ulps of that size), and the peer's own smallest top-1 minus top-2
margin. The interop label cannot check these models: it runs at max length 8, where the one-hot
stays, and its 1e-3 logit tolerance assumes logits of ~50.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
import peers  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main():
    raspc = os.path.abspath(sys.argv[1])
    lengths = [int(n) for n in sys.argv[2:]] or [1024]
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as work:
        for name in ("hist", "length"):
            for n in lengths:
                model = os.path.join(work, f"{name}{n}.safetensors")
                subprocess.run([raspc, "compile", os.path.join(ROOT, "programs", name + ".rasp"), "--max-len", str(n),
                                "--samples", "5", "-o", model], check=True, capture_output=True)
                subprocess.run([raspc, "export", model, "--format", "tlens", "-o", model + ".meta"], check=True,
                               capture_output=True)
                with open(os.path.join(model + ".meta", "tlens_config.json"), encoding="utf-8") as f:
                    meta = json.load(f)["raspc"]
                symbols = [meta["vocab"][i] for i in meta["input_ids"]]
                batches = [["".join(rng.choice(symbols) for _ in range(length)) for _ in range(4)]
                           for length in (1, 7, n // 2, n)]
                for fmt in ("hf", "tlens"):
                    folder = os.path.join(work, f"{name}{n}.{fmt}")
                    subprocess.run([raspc, "export", model, "--format", fmt, "-o", folder], check=True,
                                   capture_output=True)
                    run = peers.hf_runner(folder, meta, torch)[2] if fmt == "hf" else peers.tlens_runner(folder, meta, torch)[1]
                    right = total = 0
                    worst, smallest = 0.0, float("inf")
                    for seqs in batches:
                        r = subprocess.run([raspc, "run", model, "--inputs", "-", "--json", "--logits"],
                                           input="\n".join(seqs) + "\n", capture_output=True, text=True, check=True)
                        expected = [json.loads(line) for line in r.stdout.splitlines()]
                        logits = run([[meta["bos_id"]] + [meta["vocab"].index(c) for c in s] for s in seqs])[0]
                        for b, e in enumerate(expected):
                            ours = torch.tensor(e["logits"])[1:]
                            theirs = logits[b, 1:]
                            want = [meta["vocab"].index(v) for v in e["outputs"]]
                            right += sum(int(x == y) for x, y in zip(theirs.argmax(-1).tolist(), want))
                            total += len(want)
                            worst = max(worst, (theirs - ours).abs().max().item())
                            top = theirs.topk(2, dim=-1).values
                            smallest = min(smallest, (top[:, 0] - top[:, 1]).min().item())
                    print(f"{name} at {n}, {fmt}: argmax {right}/{total}, max |logit difference| {worst:.3g}, "
                          f"smallest margin {smallest:.4g}", flush=True)


if __name__ == "__main__":
    main()
