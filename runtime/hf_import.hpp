// A Hugging Face GPT-2 folder (what GPT2LMHeadModel.save_pretrained and transformers' Trainer
// write: config.json and model.safetensors, or model.safetensors.index.json and its shards) read
// into a raspc Model, so raspc's runtime, compare, view, inspect and probes run on models trained
// elsewhere.
//
// What a GPT-2 config can say and raspc's forward cannot do is refused, naming config.json: an
// activation other than tanh GELU (gelu_new, gelu_pytorch_tanh) or ReLU, a LayerNorm epsilon other
// than 1e-5, attention scaled otherwise than by 1/sqrt(d_head), and an output layer not tied to
// the token embedding (raspc's logits are ln_f(x) . wte^T). Tensors may be float32, float16,
// bfloat16 or float64 (read as float32), named with or without GPT2LMHeadModel's "transformer."
// prefix; the attention's mask buffers older transformers saved are skipped.
//
// A folder's config has no vocabulary: the texts of the token ids, BOS, the input symbols and the
// output come from the caller (raspc import hf reads them from the dataset card).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/model.hpp"

namespace raspc {

struct HfVocabulary {
  std::vector<std::string> vocab;  // by token id; as many as config.json's vocab_size
  int bos_id = 0;
  std::vector<int> input_ids;
  nlohmann::json output;  // metadata["output"]: {"encoding": "categorical", "token_ids": [...]}
  bool causal = false;    // how the model was trained: the mask raspc runs it with
};

// Reads the folder; every problem is a UserError naming the file it is in.
Model import_hf_gpt2(const std::string& folder, const HfVocabulary& vocabulary);

}  // namespace raspc
