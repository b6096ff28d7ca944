"""The Hugging Face training path as a user runs it: `raspc dataset`, examples/train_hf.py
(transformers' Trainer, on the CPU, a few hundred steps), `raspc import hf`, `raspc compare
--trained`; and the imported model's `raspc run` against the Hugging Face model it came from on 200
inputs. Needs torch, transformers and datasets (the interop venv)."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import raspc

REPO = Path(__file__).resolve().parents[3]
RASPC = os.environ.get("RASPC_BINARY", str(REPO / "build" / "raspc"))


def sh(args, cwd, env=None):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{args}: {done.stderr[-2000:]}"
    return done.stdout


def offline_env(tmp_path):
    """Hugging Face's caches inside the test's folder, and no network."""
    return dict(os.environ, HF_HOME=str(tmp_path / "hf-home"), HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"),
                HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")


@pytest.mark.parametrize("name,max_len", [("hist", 6), ("sort", 5)])
def test_dataset_train_hf_import_compare(tmp_path, name, max_len):
    env = offline_env(tmp_path)
    program = str(REPO / "programs" / f"{name}.rasp")
    sh([RASPC, "dataset", program, "--lengths", f"1-{max_len}", "--n", "20000", "-o", "data"], tmp_path)
    sh([RASPC, "compile", program, "--max-len", str(max_len), "--samples", "200", "-o", "compiled.safetensors"], tmp_path)
    out = sh([sys.executable, str(REPO / "examples" / "train_hf.py"), "data", "--shape-of", "compiled.safetensors",
              "--steps", "300", "--eval-every", "100", "-o", "hf"], tmp_path, env)
    assert "300 steps in" in out
    metrics = json.loads((tmp_path / "hf" / "metrics.json").read_text())
    assert metrics["steps"] == 300
    assert [p["step"] for p in metrics["curve"]] == [100, 200, 300]
    compiled_config = json.loads(sh([RASPC, "inspect", "compiled.safetensors", "--json"], tmp_path))["config"]
    hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert (hf_config["n_layer"], hf_config["n_head"], hf_config["n_embd"]) == \
        (compiled_config["n_layer"], compiled_config["n_head"], compiled_config["n_embd"])

    out = sh([RASPC, "import", "hf", "hf", "-o", "trained.safetensors"], tmp_path)
    assert out.startswith("wrote trained.safetensors: ")
    sh([RASPC, "compare", program, "--max-len", str(max_len), "--verify-samples", "200",
        "--trained", "trained.safetensors", "-o", "cmp"], tmp_path)
    report = json.loads((tmp_path / "cmp.json").read_text())
    assert [arm["name"] for arm in report["arms"]] == ["compiled", "trained.safetensors"]
    arm = report["arms"][1]
    # compare's held-out set is the dataset's test split, scored by the same rule as train_hf.py's:
    # the same positions; the same answers but where two float32 forwards order a near-tie otherwise.
    ours, theirs = arm["training_lengths"], metrics["training_lengths"]
    assert ours["positions"] == theirs["positions"]
    assert ours["token_accuracy"] == pytest.approx(theirs["token_accuracy"], abs=0.005)
    assert len(arm["head_matches"]) == compiled_config["n_layer"] * compiled_config["n_head"]

    # 200 inputs through `raspc run` and through the Hugging Face model itself.
    card = json.loads((tmp_path / "data" / "raspc_dataset.json").read_text())
    rng = random.Random(5)
    inputs = [[rng.choice(card["input_vocab"]) for _ in range(rng.randint(1, max_len))] for _ in range(200)]
    (tmp_path / "inputs.txt").write_text("".join("[" + ",".join(i) + "]\n" for i in inputs))
    lines = sh([RASPC, "run", "trained.safetensors", "--inputs", "inputs.txt", "--json", "--logits"], tmp_path)
    results = [json.loads(line) for line in lines.splitlines()]
    from transformers import GPT2LMHeadModel
    model = GPT2LMHeadModel.from_pretrained(tmp_path / "hf").eval()
    output_ids = torch.tensor(card["output_ids"])
    for tokens, result in zip(inputs, results, strict=True):
        ids = torch.tensor([[card["bos_id"]] + [card["vocab"].index(t) for t in tokens]])
        T = ids.shape[1]
        with torch.no_grad():  # bidirectional: an all-zero additive mask, every position sees every position
            logits = model(ids, attention_mask=torch.zeros(1, 1, T, T)).logits[0]
        expected = [card["vocab"][i] for i in output_ids[logits[1:, output_ids].argmax(-1)]]
        assert [str(v) for v in result["outputs"]] == expected, tokens
        # float32 both ways, summed in other orders: agreement to float32 rounding of the logits' size
        np.testing.assert_allclose(np.array(result["logits"]), logits.numpy(), rtol=1e-4, atol=1e-4)


def test_python_dataset_is_a_dataset_dict_and_writes_parquet_train_hf_reads(tmp_path):
    env = offline_env(tmp_path)
    program = raspc.Program.from_file(REPO / "programs" / "hist.rasp")
    ds = raspc.dataset(program, lengths=(1, 5), n=2000, seed=3, path=tmp_path / "data")
    import datasets
    assert isinstance(ds, datasets.DatasetDict)
    assert ds.num_rows == {"train": 2000, "test": ds.card["counts"]["test"]}
    # The rows of `raspc dataset` with the same settings, line for line.
    sh([RASPC, "dataset", str(REPO / "programs" / "hist.rasp"), "--lengths", "1-5", "--n", "2000", "--seed", "3",
        "-o", "cli"], tmp_path)
    cli = [json.loads(line) for line in (tmp_path / "cli" / "train-00000-of-00001.jsonl").read_text().splitlines()]
    assert ds["train"].to_list() == cli
    sorted_files = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert sorted_files == ["raspc_dataset.json", "test-00000-of-00001.parquet", "train-00000-of-00001.parquet"]
    loaded = datasets.load_dataset("parquet", data_dir=str(tmp_path / "data"), cache_dir=str(tmp_path / "cache"))
    assert loaded["test"].to_list() == ds["test"].to_list()
    out = sh([sys.executable, str(REPO / "examples" / "train_hf.py"), "data", "--layers", "1", "--d-model", "16",
              "--steps", "20", "-o", "hf"], tmp_path, env)
    assert "20 steps in" in out


def test_train_hf_trains_on_two_processes_under_torchrun(tmp_path):
    # What `accelerate launch` does on several GPUs, here on the CPU: two processes of the same
    # script (DDP over gloo), each a batch a step, one of them writing the model and the metrics.
    env = offline_env(tmp_path)
    sh([RASPC, "dataset", str(REPO / "programs" / "hist.rasp"), "--lengths", "1-5", "--n", "2000", "-o", "data"], tmp_path)
    torchrun = Path(sys.executable).parent / "torchrun"
    out = sh([str(torchrun), "--nproc_per_node", "2", str(REPO / "examples" / "train_hf.py"), "data", "--layers", "1",
              "--d-model", "16", "--steps", "30", "--eval-every", "10", "-o", "hf"], tmp_path, env)
    assert out.count("30 steps in") == 1  # the main process alone reports
    metrics = json.loads((tmp_path / "hf" / "metrics.json").read_text())
    assert metrics["processes"] == 2 and metrics["steps"] == 30
    assert [p["step"] for p in metrics["curve"]] == [10, 20, 30]
    sh([RASPC, "import", "hf", "hf", "-o", "trained.safetensors"], tmp_path)
    assert sh([RASPC, "run", "trained.safetensors", "--input", "abca"], tmp_path).startswith("[")
