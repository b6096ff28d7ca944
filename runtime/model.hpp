// A GPT-2 decoder: its configuration, its vocabulary, the labels of its residual dimensions, and
// all of its parameters in one allocation with named views (llm.c style).
//
// Layout is Hugging Face GPT-2's (Conv1D weights are [in, out], row-major float32):
//   wte (V,C)  wpe (P,C)
//   per layer l: ln_1 w,b (C) | attn.c_attn w (C,3C) b (3C) | attn.c_proj w (C,C) b (C)
//                ln_2 w,b (C) | mlp.c_fc w (C,I) b (I)      | mlp.c_proj w (I,C) b (C)
//   ln_f w,b (C)
// Logits are ln_f(x) . wte^T (tied, no output bias). Scores are divided by sqrt(d_head).
// With layer_norm == false, the ln_* tensors are absent and LayerNorm is the identity.
// With n_inner == 0 the blocks have no MLP and the mlp.* tensors are absent.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace raspc {

enum class Activation { Gelu, Relu };  // GELU is the tanh form, as GPT-2

struct ModelConfig {
  int n_layer = 1;
  int n_head = 1;
  int n_embd = 8;       // C; n_embd % n_head == 0, d_head = n_embd / n_head
  int n_inner = 32;     // I, the MLP width (0: no MLP)
  int n_positions = 16; // P, the maximum sequence length the model accepts (BOS included)
  int vocab_size = 2;   // V
  bool causal = true;
  bool layer_norm = true;
  Activation activation = Activation::Gelu;

  int d_head() const { return n_embd / n_head; }
};

// A config from its sizes (tests, benches and the trainer's shapes).
ModelConfig make_config(int n_layer, int n_head, int n_embd, int n_inner, int n_positions, int vocab_size,
                        bool causal = true, bool layer_norm = true, Activation activation = Activation::Gelu);

struct ParameterSpec {
  std::string name;          // Hugging Face GPT-2 name, e.g. "transformer.h.0.attn.c_attn.weight"
  std::vector<size_t> shape;
  size_t offset = 0;         // in floats, into Model::storage
  size_t size() const;
};
// Every parameter tensor of a config, in storage order.
std::vector<ParameterSpec> parameter_specs(const ModelConfig& config);

struct LayerWeights {
  float* ln_1_w = nullptr;       // (C)
  float* ln_1_b = nullptr;       // (C)
  float* attn_w = nullptr;       // (C,3C): columns [0,C) query, [C,2C) key, [2C,3C) value
  float* attn_b = nullptr;       // (3C)
  float* attn_proj_w = nullptr;  // (C,C)
  float* attn_proj_b = nullptr;  // (C)
  float* ln_2_w = nullptr;       // (C)
  float* ln_2_b = nullptr;       // (C)
  float* fc_w = nullptr;         // (C,I)
  float* fc_b = nullptr;         // (I)
  float* fc_proj_w = nullptr;    // (I,C)
  float* fc_proj_b = nullptr;    // (C)
};

// Views into one float buffer laid out as parameter_specs() says. Used for the parameters and,
// in the trainer, for gradients and optimizer moments of the same shape.
struct ParameterViews {
  float* wte = nullptr;   // (V,C)
  float* wpe = nullptr;   // (P,C)
  std::vector<LayerWeights> layers;
  float* ln_f_w = nullptr;  // (C)
  float* ln_f_b = nullptr;  // (C)
};
ParameterViews make_views(const ModelConfig& config, float* base);
size_t parameter_count(const ModelConfig& config);

struct Model {
  ModelConfig config;
  // Token strings by id. bos_id is the BOS token's id, or -1 when the model has none (the hand-set
  // (aab)* model). input_ids are the tokens a user may give as input (all non-BOS tokens when
  // empty); compiled models also have output-only tokens (e.g. counts).
  std::vector<std::string> vocab;
  int bos_id = -1;
  std::vector<int> input_ids;
  // One label per residual dimension ("tokens:a", "hist:3", "one", "bos"); "" where unlabelled
  // (trained models label dimensions "d0", "d1", ...).
  std::vector<std::string> residual_labels;
  // Everything else the file carries: "mode", "program" (source), "output" (how to read the
  // output: {"encoding": "categorical"} or {"encoding": "numerical", "dim": k, ...}),
  // compiler and trainer reports. Stored as-is in the safetensors __metadata__.
  nlohmann::json metadata = nlohmann::json::object();

  std::vector<float> storage;  // all parameters, parameter_specs() order
  ParameterViews w;            // views into storage

  // Sizes storage for config (zeros) and sets the views.
  void allocate();
  int token_id(const std::string& token) const;  // -1 if absent
};

}  // namespace raspc
