// Each device op of the CUDA backend, run alone on host data (upload, one launch, download), so
// the parity test can hold every op against its CPU twin in runtime/cpu_backend.hpp. No CUDA
// types here. Shapes are row-major; B sequences padded to T with lengths (B), C = n_embd,
// NH = n_head.
#pragma once

#include <vector>

#include "runtime/model.hpp"

namespace raspc::cuda_ops {

// (B,T,C) = wte[tokens] + wpe[t], zero on padded rows. tokens (B,T), wte (V,C), wpe (P,C).
std::vector<float> embed(const std::vector<int>& tokens, const std::vector<int>& lengths, int T,
                         const std::vector<float>& wte, const std::vector<float>& wpe, int C);
// (N,C) LayerNorm of x (N,C) with w, b (C).
std::vector<float> layernorm(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                             int C);
// (M,N) = x (M,K) . w (K,N) + bias (N); an empty bias means none.
std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                          int M, int K, int N);
// (M,V) = x (M,C) . wte^T, wte (V,C).
std::vector<float> unembed(const std::vector<float>& x, const std::vector<float>& wte, int C, int V);
std::vector<float> activation(const std::vector<float>& x, Activation act);
// x (B,T,C) + delta where t < lengths[b], 0 on padded rows.
std::vector<float> residual_add(const std::vector<float>& x, const std::vector<float>& delta,
                                const std::vector<int>& lengths, int T, int C);

struct AttentionResult {
  std::vector<float> out;      // (B,T,C), or (C) for one query
  std::vector<float> pattern;  // (B,NH,T,T) [query][key], or (NH,n_keys) for one query
};
// Masked attention of a padded batch from qkv (B,T,3C).
AttentionResult attention(const std::vector<float>& qkv, const std::vector<int>& lengths, int T, int C, int NH,
                          bool causal);
// The decoder's attention: query q (C) over keys k and values v (n_keys, C).
AttentionResult attention_one_query(const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, int C, int NH);

}  // namespace raspc::cuda_ops
