"""An independent GPT-2 forward in numpy, checked against raspc's CPU forward.

Usage: numpy_forward.py FIXTURES_BINARY FOLDER

Runs FIXTURES_BINARY FOLDER (raspc writes random models and its logits on them), then reads every
FOLDER/case<i>.safetensors with its own safetensors parser, computes the forward in float64 and
requires raspc's float32 logits to agree within 1e-5 relative (to the largest logit of the
sequence, or 1): float32 rounding over these sizes stays below ~1e-6.
"""
import json
import struct
import subprocess
import sys
from pathlib import Path

try:
    import numpy as np
except ImportError:
    print("numpy is not installed (Debian: apt install python3-numpy); skipping")
    sys.exit(77)

TOLERANCE = 1e-5


def read_safetensors(path):
    data = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    metadata = header.pop("__metadata__")
    tensors = {}
    for name, entry in header.items():
        assert entry["dtype"] == "F32", name
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(body[begin:end], dtype="<f4").reshape(entry["shape"]).astype(np.float64)
    return json.loads(metadata["raspc.config"]), tensors


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def forward(config, t, tokens):
    """Logits (T, V) of one unpadded sequence."""
    C, H = config["n_embd"], config["n_head"]
    d = C // H
    T = len(tokens)
    ln = config["layer_norm"]
    x = t["transformer.wte.weight"][tokens] + t["transformer.wpe.weight"][:T]
    mask = np.tril(np.ones((T, T), bool)) if config["causal"] else np.ones((T, T), bool)
    for l in range(config["n_layer"]):
        p = f"transformer.h.{l}."
        h = layer_norm(x, t[p + "ln_1.weight"], t[p + "ln_1.bias"]) if ln else x
        qkv = h @ t[p + "attn.c_attn.weight"] + t[p + "attn.c_attn.bias"]
        q, k, v = np.split(qkv, 3, axis=-1)
        q = q.reshape(T, H, d).transpose(1, 0, 2)
        k = k.reshape(T, H, d).transpose(1, 0, 2)
        v = v.reshape(T, H, d).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        scores = np.where(mask, scores, -np.inf)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        att = scores / scores.sum(-1, keepdims=True)
        y = (att @ v).transpose(1, 0, 2).reshape(T, C)
        x = x + y @ t[p + "attn.c_proj.weight"] + t[p + "attn.c_proj.bias"]
        if config["n_inner"] > 0:
            h = layer_norm(x, t[p + "ln_2.weight"], t[p + "ln_2.bias"]) if ln else x
            h = h @ t[p + "mlp.c_fc.weight"] + t[p + "mlp.c_fc.bias"]
            h = gelu(h) if config["activation"] == "gelu" else np.maximum(h, 0)
            x = x + h @ t[p + "mlp.c_proj.weight"] + t[p + "mlp.c_proj.bias"]
    if ln:
        x = layer_norm(x, t["transformer.ln_f.weight"], t["transformer.ln_f.bias"])
    return x @ t["transformer.wte.weight"].T


def main():
    binary, folder = sys.argv[1], Path(sys.argv[2])
    subprocess.run([binary, str(folder)], check=True)
    cases = sorted(folder.glob("case*.safetensors"))
    assert cases, "no cases written"
    worst = 0.0
    for model_path in cases:
        config, tensors = read_safetensors(model_path)
        expected = json.loads(model_path.with_suffix(".json").read_text())
        for tokens, raspc_logits in zip(expected["sequences"], expected["logits"]):
            reference = forward(config, tensors, np.array(tokens))
            got = np.array(raspc_logits, dtype=np.float64)
            scale = max(1.0, np.abs(reference).max())
            error = np.abs(got - reference).max() / scale
            worst = max(worst, error)
            if not error <= TOLERANCE:
                print(f"{model_path.name} tokens {tokens}: relative error {error:.3g} > {TOLERANCE}")
                return 1
    print(f"{len(cases)} models agree with numpy; worst relative error {worst:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
