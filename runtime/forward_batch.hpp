// What the CPU forwards (CpuBackend, VerificationBackend and the trainer's) share about a padded
// batch: the encoder's token ids and positions, and the capture of the residual stream.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/forward.hpp"

namespace raspc {

// Token ids and positions of a batch padded to result.time, (B*T) each: -1 (padding, which the
// encoder makes a zero row) beyond each sequence's length.
struct PaddedTokens {
  std::vector<int> tokens, positions;
  PaddedTokens(const std::vector<std::vector<int>>& batch, const ForwardResult& result)
      : tokens(size_t(result.batch) * result.time, -1), positions(tokens.size(), 0) {
    for (int b = 0; b < result.batch; ++b)
      for (int t = 0; t < result.lengths[b]; ++t) {
        tokens[size_t(b) * result.time + t] = batch[size_t(b)][size_t(t)];
        positions[size_t(b) * result.time + t] = t;
      }
  }
};

// Copies the residual stream x (B*T, C) into result.residual at `stage`, real positions only
// (result.residual sized (B, 2L+1, T, C) and zero-filled beforehand), for sequences [first, end)
// (end -1: to the batch's end).
inline void capture_residual_stage(ForwardResult& result, const float* x, int stage, int first = 0, int end = -1) {
  const int T = result.time, C = result.n_embd, stages = 2 * result.n_layer + 1;
  for (int b = first; b < (end < 0 ? result.batch : end); ++b)
    for (int t = 0; t < result.lengths[b]; ++t)
      std::memcpy(result.residual.data() + ((size_t(b) * stages + stage) * T + t) * C, x + (size_t(b) * T + t) * C,
                  C * sizeof(float));
}

}  // namespace raspc
