// The CPU forward (Eigen, row-major float32) and its Decoder.
//
// Each op of the GPT-2 forward is a free function over raw row-major buffers, with its shapes in
// a comment, so the trainer can write the backward twin of each and compare against it. N is the
// number of rows (B*T), C = n_embd, NH = n_head, I = n_inner, V = vocab_size. Every op returns the
// floating-point operations it performed; runtime/flops.hpp derives the same count from the
// config alone, and a test checks that they agree (the forward's own count is the ground truth).
//
// Counting conventions (one FLOP each): add, multiply, compare, divide, exp, tanh, sqrt.
#pragma once

#include <memory>
#include <vector>

#include "runtime/forward.hpp"
#include "runtime/model.hpp"
#include "support/parallel.hpp"

namespace raspc {

constexpr float kLayerNormEpsilon = 1e-5f;

// out (N,C) = wte[tokens[n]] + wpe[positions[n]]; a row whose token is negative (padding) is zero.
double encoder_forward(float* out, const int* tokens, const int* positions, const float* wte, const float* wpe,
                       int N, int C);

// out (N,C) = (in - mean) * rstd * w + b per row, rstd = 1/sqrt(var + 1e-5) (biased variance).
// mean, rstd (N) receive the row statistics when not null (the backward needs them).
double layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* w, const float* b,
                         int N, int C);

// out (N,OC) = in (N,IC) . w (IC,OC) + bias (OC); bias may be null.
double matmul_forward(float* out, const float* in, const float* w, const float* bias, int N, int IC, int OC);
// x (N,OC) += in (N,IC) . w (IC,OC) + bias (OC): a projection and the residual add after it, the
// product accumulating into the stream (no intermediate); counted as matmul_forward and
// residual_forward count the two.
double matmul_residual_forward(float* x, const float* in, const float* w, const float* bias, int N, int IC, int OC);

// One query row of multi-head attention over n_keys keys.
//   out (C): the heads' weighted sums of values, concatenated
//   att (NH, att_stride): row h receives head h's probabilities over the n_keys keys
//   q (C): the query; k, v: n_keys rows of C floats, `kv_stride` floats apart
// Scores are q.k / sqrt(d_head), softmax over the keys.
double attention_row(float* out, float* att, int att_stride, const float* q, const float* k, const float* v,
                     int kv_stride, int n_keys, int C, int NH);

// Masked multi-head attention over a padded batch.
//   out (B,T,C), att (B,NH,T,T) [query][key], qkv (B,T,3C) with columns [q | k | v], lengths (B)
// Query t of sequence b sees keys j < lengths[b] (and j <= t when causal). Rows of padded queries
// (t >= lengths[b]) are zero in out and att. With `scores` (B,NH,T,T), also the scores before the
// softmax, -infinity where a key is masked (and in padded rows).
double attention_forward(float* out, float* att, const float* qkv, const int* lengths, int B, int T, int C, int NH,
                         bool causal, float* scores = nullptr);

// out (n) = GELU(in) in its tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
double gelu_forward(float* out, const float* in, size_t n);
// out (n) = max(in, 0).
double relu_forward(float* out, const float* in, size_t n);

// x (n) += delta (n): the residual connection.
double residual_forward(float* x, const float* delta, size_t n);

// logits (N,V) = x (N,C) . wte_t (C,V), wte_t the embedding transposed (the tied unembedding; no
// bias): one product by rows like every other (runtime/gemm.hpp), so a row's logits never depend
// on the rows computed with it.
double unembed_forward(float* logits, const float* x, const float* wte_t, int N, int C, int V);
// wte_t (C,V) = the model's wte (V,C) transposed, what unembed_forward multiplies by.
std::vector<float> transposed_embedding(const Model& model);

class CpuBackend : public Backend {
 public:
  // Every weight is multiplied, zero or not, as GPT-2 would (a benchmark of the model's cost must
  // pay for them all); the compiler's verification runs runtime/verification_backend.hpp, which
  // skips them.
  //
  // A forward splits its batch's sequences over `threads` threads (0: every core), where the batch
  // is work enough to pay for them; the result is the same to the last bit for every thread count.
  explicit CpuBackend(const Model& model, int threads = 1)
      : model_(model), threads_(threads > 0 ? threads : available_cores()), wte_t_(transposed_embedding(model)) {}
  ForwardResult forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options = {}) override;
  std::unique_ptr<Decoder> decoder() override;
  std::string name() const override { return "cpu"; }

 private:
  // The first activation of a forward starts at a multiple of kBufferAlignment floats (64 bytes).
  static constexpr size_t kBufferAlignment = 16;
  // The floating-point operations that pay for a thread of the forward: starting and joining one
  // costs ~50 us, and 10^7 operations take ~200 us at the forward's rate on one core.
  static constexpr double kFlopsPerThread = 1e7;
  const Model& model_;
  int threads_ = 1;
  std::vector<float> wte_t_;  // (C,V)
  // Every activation of a forward, reused by the next call (so a backend serves one thread at a
  // time): zero-filling and page-faulting in a fresh (B*T*n_inner) buffer per call cost ~20% of
  // a forward of a 4352-wide MLP.
  std::vector<float> buffer_;
};

// The KV-cached decoder. Every buffer it uses is allocated once, in the constructor.
class CpuDecoder : public Decoder {
 public:
  explicit CpuDecoder(const Model& model);
  void reset() override { position_ = 0; }
  const float* step(int token) override;
  int position() const override { return position_; }
  // FLOPs the last step performed (the runtime/flops.hpp check).
  double last_step_flops() const { return last_step_flops_; }

 private:
  const Model& model_;
  int position_ = 0;
  double last_step_flops_ = 0;
  std::vector<float> buffer_;  // the one allocation; the views below point into it
  float* x_ = nullptr;         // (C) residual stream of the current token
  float* ln_ = nullptr;        // (C)
  float* att_out_ = nullptr;   // (C)
  float* delta_ = nullptr;     // (C) a sub-layer's output before the residual add
  float* fc_ = nullptr;        // (I)
  float* act_ = nullptr;       // (I)
  float* att_ = nullptr;       // (NH,P) probabilities of the current query
  float* logits_ = nullptr;    // (V)
  float* wte_t_ = nullptr;     // (C,V) the embedding transposed, what the unembedding multiplies by
  std::vector<float*> qkv_cache_;  // per layer (P,3C): every fed token's q|k|v
};

}  // namespace raspc
