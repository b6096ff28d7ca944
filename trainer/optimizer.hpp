// AdamW with gradient clipping by global norm and a linear-warmup-then-cosine learning rate.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/model.hpp"

namespace raspc {

struct OptimizerSettings {
  float learning_rate = 1e-3f;
  float min_learning_rate_ratio = 0.1f;  // cosine decays to learning_rate * this
  int warmup_steps = 0;
  int total_steps = 1;
  float beta1 = 0.9f, beta2 = 0.99f, epsilon = 1e-8f;
  float weight_decay = 0.01f;  // on matrices and embeddings only, never on LayerNorm or biases
  float clip_norm = 1.0f;      // global gradient norm; 0 disables clipping
};

// The learning rate at step s (0-based): linear warmup over warmup_steps, then cosine decay to
// min_learning_rate_ratio * learning_rate at total_steps.
float scheduled_learning_rate(const OptimizerSettings& settings, int step);

class AdamW {
 public:
  AdamW(const ModelConfig& config, const OptimizerSettings& settings);
  // One update of `params` from `grads` (both in parameter_specs() layout) at step s (0-based).
  // Clips the gradients in place; returns their global norm before clipping.
  float update(float* params, float* grads, int step);

 private:
  OptimizerSettings settings_;
  std::vector<float> m_, v_;  // first and second moments, parameter_specs() layout
  struct Range {
    size_t offset, size;
    bool decay;
  };
  std::vector<Range> ranges_;  // one per parameter tensor
};

}  // namespace raspc
