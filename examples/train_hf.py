#!/usr/bin/env python3
"""Train a GPT-2 from scratch on a `raspc dataset` with Hugging Face transformers' Trainer.

    raspc dataset programs/hist.rasp --lengths 1-8 --n 100000 -o hist-data
    raspc compile programs/hist.rasp --max-len 8 -o hist.safetensors
    python examples/train_hf.py hist-data --shape-of hist.safetensors --steps 2000 -o hist-hf
    raspc import hf hist-hf -o hist-trained.safetensors
    raspc compare programs/hist.rasp --max-len 8 --trained hist-trained.safetensors

The same script runs on several GPUs or machines unchanged: `accelerate launch examples/train_hf.py ...`
(the batch is then per device). The loss and metrics are `raspc train`'s: cross-entropy at every
position whose label counts (the dataset's labels are aligned with the inputs, -100 at BOS and
where the program is undefined), and held-out accuracy by length on the dataset's test split (the
held-out set of `raspc train` and `raspc compare`), predicting the best output token at each
position. The optimiser and schedule are `raspc train`'s too: AdamW (beta2 0.99, weight decay on
matrices and embeddings only), linear warmup over steps/20, cosine decay to 0.1 of the rate,
gradients clipped to norm 1.

A bidirectional dataset trains a bidirectional model: every position attends to every position
(but padding), through an explicit 4-D mask, since GPT2LMHeadModel masks causally by default.
OUTPUT_DIR receives the model (config.json, model.safetensors), the dataset's card
(raspc_dataset.json, which `raspc import hf` reads) and metrics.json.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch
import torch.nn.functional as F
from datasets import load_dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments

IGNORED = -100


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dataset", help="a folder `raspc dataset` wrote")
    p.add_argument("-o", "--output-dir", required=True, help="where the trained model goes")
    p.add_argument("--shape-of", help="a raspc model file (.safetensors): train a GPT-2 of its shape "
                                      "(the compiled model's, say); else --layers, --heads, --d-model, --mlp")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--d-model", type=int, default=16)
    p.add_argument("--mlp", type=int, default=-1, help="MLP width (default 4 * d_model)")
    p.add_argument("--activation", choices=["gelu", "relu"], default="gelu")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch", type=int, default=32, help="sequences per step and device")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--warmup", type=int, default=-1, help="warmup steps (default steps / 20)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--eval-every", type=int, default=0,
                   help="held-out evaluation at the training lengths every this many steps (0: at the end only)")
    p.add_argument("--logging-steps", type=int, default=50)
    return p.parse_args(argv)


def read_card(folder):
    path = os.path.join(folder, "raspc_dataset.json")
    if not os.path.isfile(path):
        sys.exit(f"{path}: error: is missing; give a folder `raspc dataset` wrote")
    with open(path) as f:
        card = json.load(f)
    if card.get("format") != "raspc-dataset":
        sys.exit(f"{path}: error: is not a raspc dataset card")
    return path, card


def model_shape(args):
    """(layers, heads, d_model, mlp, activation): the raspc model's, or the flags'."""
    if args.shape_of:
        from safetensors import safe_open
        with safe_open(args.shape_of, "pt") as f:
            config = json.loads(f.metadata()["raspc.config"])
        if not config["layer_norm"]:
            sys.exit(f"{args.shape_of}: error: the model has no LayerNorm, which a Hugging Face GPT-2 always has")
        return config["n_layer"], config["n_head"], config["n_embd"], config["n_inner"], config["activation"]
    mlp = 4 * args.d_model if args.mlp < 0 else args.mlp
    return args.layers, args.heads, args.d_model, mlp, args.activation


def make_model(card, shape, seed):
    layers, heads, d_model, mlp, activation = shape
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(card["vocab"]), n_positions=card["n_positions"], n_embd=d_model, n_layer=layers,
        n_head=heads, n_inner=max(mlp, 1),  # an MLP of 0 units crashes GPT-2's forward: one unit
        activation_function="gelu_new" if activation == "gelu" else "relu",  # gelu_new: raspc's tanh GELU
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, layer_norm_epsilon=1e-5,
        bos_token_id=card["bos_id"], eos_token_id=None, pad_token_id=None, tie_word_embeddings=True)
    return GPT2LMHeadModel(config)


def attention_mask(keep, causal, dtype):
    """keep (B,T): 1 for a real position, 0 for padding. Causal: the 2-D mask (GPT-2 adds the causal
    one). Bidirectional: an additive (B,1,T,T) mask, 0 where a query may attend, which GPT-2 takes as
    it is: every position sees every position but padding."""
    if causal:
        return keep
    B, T = keep.shape
    blocked = (1.0 - keep.to(dtype))[:, None, None, :].expand(B, 1, T, T)
    return blocked * torch.finfo(dtype).min


def collate(bos_id):
    def pad(rows):
        T = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((len(rows), T), bos_id, dtype=torch.long)
        labels = torch.full((len(rows), T), IGNORED, dtype=torch.long)
        keep = torch.zeros((len(rows), T), dtype=torch.long)
        for b, r in enumerate(rows):
            n = len(r["input_ids"])
            ids[b, :n] = torch.tensor(r["input_ids"])
            labels[b, :n] = torch.tensor(r["labels"])
            keep[b, :n] = 1
        return {"input_ids": ids, "labels": labels, "keep": keep}
    return pad


class RaspTrainer(Trainer):
    """The loss of `raspc train`: mean cross-entropy over the positions whose label counts, the
    labels aligned with the inputs (GPT2LMHeadModel's own loss would shift them by one)."""

    def __init__(self, *args, causal, **kwargs):
        super().__init__(*args, **kwargs)
        self.causal = causal

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mask = attention_mask(inputs["keep"], self.causal, next(model.parameters()).dtype)
        logits = model(input_ids=inputs["input_ids"], attention_mask=mask).logits
        loss = F.cross_entropy(logits.flatten(0, 1).float(), inputs["labels"].flatten(), ignore_index=IGNORED)
        return (loss, logits) if return_outputs else loss


@torch.no_grad()
def evaluate_by_length(model, rows, card, lengths=None, batch=256):
    """Token and sequence accuracy by input length on the test rows: the best output token at each
    position whose label counts; a sequence is right when all of them are (rows where the program
    is undefined count in neither)."""
    model.eval()
    device = next(model.parameters()).device
    output_ids = torch.tensor(card["output_ids"], device=device)
    by_length = {}
    groups = {}
    for r in rows:
        if lengths is None or r["length"] in lengths:
            groups.setdefault(r["length"], []).append(r)
    for length in sorted(groups):
        group = groups[length]
        stats = {"positions": 0, "correct_positions": 0, "sequences": 0, "correct_sequences": 0}
        for first in range(0, len(group), batch):
            chunk = group[first:first + batch]
            ids = torch.tensor([r["input_ids"] for r in chunk], device=device)
            labels = torch.tensor([r["labels"] for r in chunk], device=device)
            keep = torch.ones_like(ids)
            logits = model(input_ids=ids, attention_mask=attention_mask(keep, card["mode"] == "causal",
                                                                        next(model.parameters()).dtype)).logits
            predicted = output_ids[logits[:, :, output_ids].argmax(-1)]
            counted = labels != IGNORED
            right = (predicted == labels) & counted
            for b in range(len(chunk)):
                n = int(counted[b].sum())
                if n == 0:
                    continue
                stats["positions"] += n
                stats["correct_positions"] += int(right[b].sum())
                stats["sequences"] += 1
                stats["correct_sequences"] += int(right[b].sum()) == n
        by_length[length] = stats
    model.train()
    return by_length


def totals(by_length):
    t = {"positions": 0, "correct_positions": 0, "sequences": 0, "correct_sequences": 0}
    for stats in by_length.values():
        for k in t:
            t[k] += stats[k]
    return {"token_accuracy": t["correct_positions"] / max(t["positions"], 1),
            "sequence_accuracy": t["correct_sequences"] / max(t["sequences"], 1), **t}


class HeldOutCurve(TrainerCallback):
    """Held-out token accuracy at the training lengths every `every` steps (main process only: a
    forward without gradients, which the other processes need not wait for)."""

    def __init__(self, rows, card, every):
        self.rows, self.card, self.every = rows, card, every
        low, high = card["train_lengths"]
        self.lengths = set(range(low, high + 1))
        self.curve, self.started = [], None

    def on_train_begin(self, args, state, control, **kwargs):
        self.started = time.perf_counter()

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if self.every <= 0 or state.global_step % self.every or not state.is_world_process_zero:
            return
        t = totals(evaluate_by_length(model, self.rows, self.card, self.lengths))
        self.curve.append({"step": state.global_step, "held_out_accuracy": t["token_accuracy"],
                           "seconds": time.perf_counter() - self.started})
        print(f"step {state.global_step}: held-out token accuracy {100 * t['token_accuracy']:.1f}%", flush=True)


def main(argv=None):
    args = parse_args(argv)
    card_path, card = read_card(args.dataset)
    causal = card["mode"] == "causal"
    # `raspc dataset` writes JSON lines; raspc.dataset(path=...) in Python, Parquet.
    parquet = any(name.endswith(".parquet") for name in card.get("files", []))
    data = load_dataset("parquet" if parquet else "json", data_dir=args.dataset)
    model = make_model(card, model_shape(args), args.seed)
    warmup = args.steps // 20 if args.warmup < 0 else args.warmup
    training = TrainingArguments(
        output_dir=args.output_dir, max_steps=args.steps, per_device_train_batch_size=args.batch,
        learning_rate=args.lr, weight_decay=args.weight_decay, warmup_steps=warmup,
        lr_scheduler_type="cosine_with_min_lr", lr_scheduler_kwargs={"min_lr_rate": 0.1},
        adam_beta1=0.9, adam_beta2=0.99, adam_epsilon=1e-8, max_grad_norm=1.0, optim="adamw_torch",
        seed=args.seed, data_seed=args.seed, logging_steps=args.logging_steps, save_strategy="no",
        report_to="none", remove_unused_columns=False, dataloader_num_workers=0, disable_tqdm=True,
        # Without a GPU, several processes (accelerate launch, torchrun) train together only as
        # use_cpu says (distributed over gloo); otherwise each would train alone.
        use_cpu=not torch.cuda.is_available())
    test_rows = list(data["test"])
    curve = HeldOutCurve(test_rows, card, args.eval_every)
    trainer = RaspTrainer(model=model, args=training, train_dataset=data["train"], data_collator=collate(card["bos_id"]),
                          callbacks=[curve], causal=causal)
    result = trainer.train()
    trainer.save_model(args.output_dir)  # on every process: it writes on the main one only
    if not trainer.is_world_process_zero():
        return
    shutil.copy(card_path, os.path.join(args.output_dir, "raspc_dataset.json"))
    by_length = evaluate_by_length(trainer.model, test_rows, card)
    low, high = card["train_lengths"]
    trained = totals({k: v for k, v in by_length.items() if low <= k <= high})
    metrics = {
        "steps": result.global_step, "processes": training.world_size, "mean_train_loss": result.training_loss,
        "train_runtime_s": result.metrics["train_runtime"],
        "steps_per_second": result.metrics["train_steps_per_second"],
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        "training_lengths": trained,
        "by_length": {str(k): totals({k: v}) for k, v in by_length.items()},
        "curve": curve.curve,
    }
    with open(os.path.join(args.output_dir, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    print(f"{result.global_step} steps in {metrics['train_runtime_s']:.1f} s ({metrics['steps_per_second']:.1f} steps/s), "
          f"mean training loss {result.training_loss:.4f}")
    print(f"held-out, lengths {low}-{high}: token accuracy {100 * trained['token_accuracy']:.2f}%, "
          f"sequence accuracy {100 * trained['sequence_accuracy']:.2f}% ({trained['sequences']} sequences)")
    for k, v in sorted(by_length.items()):
        t = totals({k: v})
        print(f"  length {k}{' (train)' if low <= k <= high else ''}: {100 * t['token_accuracy']:.1f}% / "
              f"{100 * t['sequence_accuracy']:.1f}%")
    print(f"wrote {args.output_dir}; next: raspc import hf {args.output_dir} -o MODEL.safetensors")


if __name__ == "__main__":
    main()
