"""Loads a raspc TransformerLens export (the folder this file is in) into TransformerLens.

    import sys; sys.path.insert(0, "FOLDER")
    from load_tlens import load, encode
    model = load("FOLDER")        # TL 4.x: a TransformerBridge; TL 2.x: a HookedTransformer
    logits, cache = model.run_with_cache(encode(model, ["a", "a", "b"]))

The weights load as they are. TransformerLens's weight processing (fold_ln, centring) is not
applied: it changes what the residual stream holds, and so what raspc's residual labels
(`model.raspc["residual_labels"]`) name. `model.raspc` holds raspc's metadata: the vocabulary,
the BOS id, the output encoding and dimension, the program source.
"""
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
    return model


def encode(model, tokens):
    """A (1, T) tensor of token ids for a list of token strings, BOS first when the model has one."""
    ids = [model.raspc["vocab"].index(str(t)) for t in tokens]
    bos = model.raspc["bos_id"]
    return torch.tensor([([bos] if bos >= 0 else []) + ids])
