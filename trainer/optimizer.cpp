#include "trainer/optimizer.hpp"

#include <algorithm>
#include <cmath>

namespace raspc {

float scheduled_learning_rate(const OptimizerSettings& s, int step) {
  if (step < s.warmup_steps) return s.learning_rate * float(step + 1) / float(s.warmup_steps);
  const float min_lr = s.learning_rate * s.min_learning_rate_ratio;
  const int decay_steps = std::max(1, s.total_steps - s.warmup_steps);
  const float progress = std::min(1.0f, float(step - s.warmup_steps) / float(decay_steps));
  return min_lr + 0.5f * (s.learning_rate - min_lr) * (1.0f + std::cos(float(M_PI) * progress));
}

AdamW::AdamW(const ModelConfig& config, const OptimizerSettings& settings) : settings_(settings) {
  const size_t n = parameter_count(config);
  m_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
  for (const ParameterSpec& spec : parameter_specs(config))
    ranges_.push_back({spec.offset, spec.size(), spec.shape.size() >= 2});
}

float AdamW::update(float* params, float* grads, int step) {
  double sum_squares = 0;
  for (size_t i = 0; i < m_.size(); ++i) sum_squares += double(grads[i]) * grads[i];
  const float norm = float(std::sqrt(sum_squares));
  if (settings_.clip_norm > 0 && norm > settings_.clip_norm) {
    const float scale = settings_.clip_norm / norm;
    for (size_t i = 0; i < m_.size(); ++i) grads[i] *= scale;
  }
  const float lr = scheduled_learning_rate(settings_, step);
  const float b1 = settings_.beta1, b2 = settings_.beta2;
  const float correction1 = 1.0f - std::pow(b1, float(step + 1));
  const float correction2 = 1.0f - std::pow(b2, float(step + 1));
  for (const Range& r : ranges_) {
    const float decay = r.decay ? settings_.weight_decay : 0.0f;
    for (size_t i = r.offset; i < r.offset + r.size; ++i) {
      m_[i] = b1 * m_[i] + (1 - b1) * grads[i];
      v_[i] = b2 * v_[i] + (1 - b2) * grads[i] * grads[i];
      const float m_hat = m_[i] / correction1, v_hat = v_[i] / correction2;
      params[i] -= lr * (m_hat / (std::sqrt(v_hat) + settings_.epsilon) + decay * params[i]);
    }
  }
  return norm;
}

}  // namespace raspc
