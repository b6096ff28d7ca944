// Random GPT-2 models for the runtime tests, the numpy cross-check and the bench.
#pragma once

#include <random>
#include <string>

#include "runtime/model.hpp"

namespace raspc::testing {

// Weights drawn from N(0, scale^2); LayerNorm gains around 1 and biases around 0 so every
// LayerNorm is exercised without being the identity. Token i is the string "t<i>"; token 0 is BOS
// when with_bos.
inline Model make_random_model(const ModelConfig& config, uint32_t seed, float scale = 0.3f, bool with_bos = false) {
  Model model;
  model.config = config;
  for (int i = 0; i < config.vocab_size; ++i) model.vocab.push_back("t" + std::to_string(i));
  model.bos_id = with_bos ? 0 : -1;
  for (int c = 0; c < config.n_embd; ++c) model.residual_labels.push_back("d" + std::to_string(c));
  model.allocate();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (float& w : model.storage) w = normal(rng);
  auto around_one = [&](float* p) {
    for (int c = 0; c < config.n_embd; ++c) p[c] = 1.0f + normal(rng);
  };
  if (config.layer_norm) {
    for (const LayerWeights& layer : model.w.layers) {
      around_one(layer.ln_1_w);
      if (layer.ln_2_w) around_one(layer.ln_2_w);
    }
    around_one(model.w.ln_f_w);
  }
  return model;
}

// A random token sequence of `length` non-BOS tokens.
inline std::vector<int> random_tokens(const Model& model, int length, std::mt19937& rng) {
  int first = model.bos_id >= 0 ? 1 : 0;
  std::uniform_int_distribution<int> token(first, model.config.vocab_size - 1);
  std::vector<int> tokens;
  for (int i = 0; i < length; ++i) tokens.push_back(token(rng));
  return tokens;
}

}  // namespace raspc::testing
