"""Loads a raspc TransformerLens export (the folder this file is in) into TransformerLens.

    import sys; sys.path.insert(0, "FOLDER")
    from load_tlens import load, encode
    model = load("FOLDER")        # TL 4.x: a TransformerBridge; TL 2.x: a HookedTransformer
    logits, cache = model.run_with_cache(encode(model, ["a", "a", "b"]))

The weights load as they are. TransformerLens's weight processing (fold_ln, centring) is not
applied: it changes what the residual stream holds, and so what raspc's residual labels
(`model.raspc["residual_labels"]`) name. `model.raspc` holds raspc's metadata: the vocabulary,
the BOS id, the output encoding and dimension, the program source.

With transformers installed, the model gets the export's tokenizer (tokenizer.json: a word-level
tokenizer over the vocabulary that prepends BOS), so `model.to_str_tokens("aab")`,
`model.to_tokens("aab")` and `model.generate("a", max_new_tokens=7)` work as for any model. The
model has no end token: generate runs to max_new_tokens (stop_at_eos defaults to False).
"""
import functools
import json
import os

import torch
from safetensors.torch import load_file

_TL2_BUFFERS = (".mask", ".IGNORE")  # HookedTransformer's attention buffers: not weights


def read_export(folder):
    """The export's TransformerLens config (a dict), raspc's metadata and the TL-named weights."""
    with open(os.path.join(folder, "tlens_config.json"), encoding="utf-8") as f:
        spec = json.load(f)
    return spec["config"], spec["raspc"], load_file(os.path.join(folder, "model.safetensors"))


def load(folder, device=None):
    """The model in TransformerLens 4.x (TransformerBridge.boot_native) or 2.x (HookedTransformer)."""
    config, raspc, state = read_export(folder)
    try:  # TL 2.x and 3.x; 4.x raises ImportError for the removed names
        from transformer_lens import HookedTransformer, HookedTransformerConfig
    except ImportError:
        HookedTransformer = None

    if HookedTransformer is not None:
        fields = HookedTransformerConfig.__dataclass_fields__
        cfg = HookedTransformerConfig(**{k: v for k, v in config.items() if k in fields})
        model = HookedTransformer(cfg)
        result = model.load_state_dict(state, strict=False)
        missing = [k for k in result.missing_keys if not k.endswith(_TL2_BUFFERS)]
        if missing or result.unexpected_keys:
            raise ValueError(f"raspc export does not match TransformerLens: missing {missing}, "
                             f"unexpected {result.unexpected_keys}")
    else:  # TL 4.x
        from transformer_lens.config import TransformerBridgeConfig
        from transformer_lens.conversion_utils import convert_tl_checkpoint
        from transformer_lens.model_bridge.sources import boot_native

        cfg = TransformerBridgeConfig.from_dict(dict(config, init_weights=False))
        model = boot_native(cfg)
        model.load_state_dict(convert_tl_checkpoint(state, cfg), strict=True)
    if device is not None:
        model = model.to(device)
    model.eval()
    model.raspc = raspc
    attach_tokenizer(model, folder)
    return model


def attach_tokenizer(model, folder):
    """The export's tokenizer on the model, where transformers is installed."""
    try:
        from transformers import PreTrainedTokenizerFast
    except ImportError:
        return
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    model.cfg.default_prepend_bos = True
    model.cfg.tokenizer_prepends_bos = True
    if hasattr(model, "set_tokenizer"):  # TL 2.x (which makes a tokenizer of its own from this one)
        model.set_tokenizer(tokenizer, default_padding_side="right")
        # TL 2.x's generate masks every position whose token id it takes for the pad id 0 (it
        # passes zeros for the tokens): BOS, id 0, cannot pad. A pad of its own, outside the
        # model's vocabulary: single inputs and equal-length batches never hold it.
        model.tokenizer.add_special_tokens({"pad_token": "<pad>"})
    else:  # TL 4.x: BOS pads batches of strings (the tokenizer itself prepends BOS)
        model.tokenizer = tokenizer
        model.tokenizer.pad_token = model.tokenizer.bos_token
    # No end token: generation runs to max_new_tokens unless told otherwise.
    model.generate = functools.partial(model.generate, stop_at_eos=False)


def encode(model, tokens):
    """A (1, T) tensor of token ids for a list of token strings, BOS first when the model has one."""
    ids = [model.raspc["vocab"].index(str(t)) for t in tokens]
    bos = model.raspc["bos_id"]
    return torch.tensor([([bos] if bos >= 0 else []) + ids])
