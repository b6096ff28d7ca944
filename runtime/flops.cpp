#include "runtime/flops.hpp"

namespace raspc {

double flops_per_token(const ModelConfig& config, int context) {
  const double C = config.n_embd, H = config.n_head, I = config.n_inner, V = config.vocab_size;
  const double n = context;
  const double layer_norm = config.layer_norm ? 8 * C + 5 : 0;
  double per_layer = layer_norm + (2 * C * 3 * C + 3 * C) + (4 * C * n + 6 * H * n + H) + (2 * C * C + C) + C;
  if (config.n_inner > 0) {
    const double activation = config.activation == Activation::Gelu ? 9 : 1;
    per_layer += layer_norm + (2 * C * I + I) + activation * I + (2 * I * C + C) + C;
  }
  return C + config.n_layer * per_layer + layer_norm + 2 * C * V;
}

double forward_flops(const ModelConfig& config, int length) {
  if (!config.causal) return length * flops_per_token(config, length);
  double total = 0;
  for (int t = 1; t <= length; ++t) total += flops_per_token(config, t);
  return total;
}

}  // namespace raspc
