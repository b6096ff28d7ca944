"""raspc's bidirectional GPT-2 for Hugging Face transformers (the "hf" export of a bidirectional model).

A bidirectional program's model must let every position attend to every position, but
GPT2LMHeadModel applies a causal mask unless it is given a 4-D one, and then gives wrong answers
with no error. This class is GPT2LMHeadModel with the mask defaulted: no attention_mask means
every position sees every position; a 2-D padding mask (1 keep, 0 pad) masks only padded keys.
The export's config.json names it in "auto_map", so

    AutoModelForCausalLM.from_pretrained(FOLDER, trust_remote_code=True)

loads it (raspc's Model.to_transformers() does too). The weights are the export's; only the
default mask differs from GPT2LMHeadModel.
"""
import torch
from transformers import GPT2LMHeadModel


class RaspcBidirectionalGPT2(GPT2LMHeadModel):
    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, **kwargs):
        shaped = input_ids if input_ids is not None else inputs_embeds
        if shaped is not None and (attention_mask is None or attention_mask.dim() == 2):
            batch, length = shaped.shape[0], shaped.shape[1]
            keep = torch.ones(batch, length, device=shaped.device) if attention_mask is None else attention_mask
            # Additive: 0 where a query may attend, the dtype's minimum where the key is padding.
            blocked = (1.0 - keep.to(self.dtype))[:, None, None, :].expand(batch, 1, length, length)
            attention_mask = blocked * torch.finfo(self.dtype).min
        return super().forward(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                               **kwargs)
