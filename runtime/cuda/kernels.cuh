// The forward's operations on the device, one launcher each, shared by the backend, its decoder
// and the op-level parity test (cuda_ops.cu). All tensors are row-major float32 device pointers;
// every launcher enqueues on `stream` and returns without synchronising.
#pragma once

#include <cstddef>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "runtime/model.hpp"

namespace raspc::cuda {

// x (B,T,C) = wte[tokens[b,t]] + wpe[t] where t < lengths[b], 0 where padded.
// tokens (B,T), lengths (B) on the device.
void embed(float* x, const int* tokens, const int* lengths, const float* wte, const float* wpe,
           int B, int T, int C, cudaStream_t stream);
// x (C) = wte[token] + wpe[position]: the decoder's one new token.
void embed_token(float* x, int token, int position, const float* wte, const float* wpe, int C,
                 cudaStream_t stream);

// out (N,C) = (x - mean) / sqrt(var + 1e-5) * w + b per row, var the biased (1/C) variance.
void layernorm(float* out, const float* x, const float* w, const float* b, int N, int C,
               cudaStream_t stream);

// out (M,N) = x (M,K) . w (K,N) + bias (N); bias may be null. cuBLAS in pure float32 (no TF32).
void matmul(cublasHandle_t handle, float* out, const float* x, const float* w, const float* bias,
            int M, int K, int N, cudaStream_t stream);
// logits (M,V) = x (M,C) . wte^T, wte (V,C): the tied unembedding.
void unembed(cublasHandle_t handle, float* logits, const float* x, const float* wte, int M, int C,
             int V);

// x (n) = act(x) in place: GELU in GPT-2's tanh form, or ReLU.
void activation(float* x, size_t n, Activation act, cudaStream_t stream);

// x (B,T,C) += y where t < lengths[b]; padded rows of x become 0, so the stream stays zero there.
void residual_add(float* x, const float* y, const int* lengths, int B, int T, int C,
                  cudaStream_t stream);
// Rows t >= lengths[b] of x (B,T,W) become 0.
void zero_padded_rows(float* x, const int* lengths, int B, int T, int W, cudaStream_t stream);

// Multi-head attention of a padded batch, from the fused projection qkv (B,T,3C) (query, key,
// value column blocks, head h at columns [h*d, (h+1)*d) of each) to out (B,T,C), before c_proj.
// Scratch: q, k, v (B,H,T,d) each. pattern (B,H,T,T) receives the probabilities [query][key]:
// zero on masked keys and on padded queries (whose outputs are zero too).
void attention(cublasHandle_t handle, float* out, float* pattern, float* q, float* k, float* v,
               const float* qkv, const int* lengths, int B, int T, int C, int H, bool causal,
               cudaStream_t stream);

// The decoder's attention for one query q (C) over the first n_keys rows of the caches
// k_cache, v_cache (P,C) (head h in columns [h*d, (h+1)*d)) into out (C). scores (H,P) is
// scratch.
void attention_one_query(float* out, float* scores, const float* q, const float* k_cache,
                         const float* v_cache, int n_keys, int P, int C, int H,
                         cudaStream_t stream);

}  // namespace raspc::cuda
