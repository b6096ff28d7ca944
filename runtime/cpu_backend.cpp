#include "runtime/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Core>

#include "runtime/flops.hpp"
#include "runtime/forward_batch.hpp"
#include "runtime/gemm.hpp"
#include "runtime/vector_ops.hpp"
#include "support/diagnostics.hpp"
#include "support/parallel.hpp"

namespace raspc {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using ConstRowVectorMap = Eigen::Map<const Eigen::RowVectorXf>;

}  // namespace

double encoder_forward(float* out, const int* tokens, const int* positions, const float* wte, const float* wpe,
                       int N, int C) {
  double flops = 0;
  for (int n = 0; n < N; ++n) {
    float* o = out + size_t(n) * C;
    if (tokens[n] < 0) {
      std::fill(o, o + C, 0.0f);
      continue;
    }
    const float* te = wte + size_t(tokens[n]) * C;
    const float* pe = wpe + size_t(positions[n]) * C;
    for (int c = 0; c < C; ++c) o[c] = te[c] + pe[c];
    flops += C;
  }
  return flops;
}

double layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* w, const float* b,
                         int N, int C) {
  layernorm_rows(out, mean, rstd, in, w, b, N, C, kLayerNormEpsilon);
  // Per row: sum C; mean 1; variance 3C + 1; rstd 3 (add, sqrt, divide); normalise 4C.
  return double(N) * (8.0 * C + 5);
}

double matmul_forward(float* out, const float* in, const float* w, const float* bias, int N, int IC, int OC) {
  // The product starts each entry's chain from the bias (no pass of its own over the output).
  gemm_nn(out, in, w, N, IC, OC, false, bias);
  return 2.0 * N * IC * OC + (bias ? double(N) * OC : 0.0);
}

double matmul_residual_forward(float* x, const float* in, const float* w, const float* bias, int N, int IC, int OC) {
  gemm_nn(x, in, w, N, IC, OC, true, bias);  // from x + bias, as adding the bias first would start it
  // As matmul_forward and residual_forward count it.
  return 2.0 * N * IC * OC + (bias ? double(N) * OC : 0.0) + double(N) * OC;
}

double attention_row(float* out, float* att, int att_stride, const float* q, const float* k, const float* v,
                     int kv_stride, int n_keys, int C, int NH) {
  using StridedRows = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(float(hs));
  for (int h = 0; h < NH; ++h) {
    Eigen::Map<const Eigen::VectorXf> qh(q + h * hs, hs);
    Eigen::Map<Eigen::VectorXf> p(att + size_t(h) * att_stride, n_keys);
    StridedRows kh(k + h * hs, n_keys, hs, Eigen::OuterStride<>(kv_stride));  // (n_keys, hs)
    StridedRows vh(v + h * hs, n_keys, hs, Eigen::OuterStride<>(kv_stride));  // (n_keys, hs)
    p.noalias() = kh * qh;
    softmax_rows(p.data(), 1, n_keys, n_keys, false, scale);
    Eigen::Map<Eigen::VectorXf>(out + h * hs, hs).noalias() = vh.transpose() * p;
  }
  // Per head: scores (2hs + 1) n; softmax 5n + 1 (max, subtract, exp, sum, scale); values 2 hs n.
  return double(NH) * ((4.0 * hs + 6.0) * n_keys + 1.0);
}

double attention_forward(float* out, float* att, const float* qkv, const int* lengths, int B, int T, int C, int NH,
                         bool causal, float* scores) {
  const int C3 = 3 * C, hs = C / NH;
  const float scale = 1.0f / std::sqrt(float(hs));
  double flops = 0;
  std::fill_n(att, size_t(B) * NH * T * T, 0.0f);
  if (scores) std::fill_n(scores, size_t(B) * NH * T * T, -std::numeric_limits<float>::infinity());
  for (int b = 0; b < B; ++b) {
    const int n = lengths[b];
    const float* seq = qkv + size_t(b) * T * C3;  // (T,3C)
    std::fill_n(out + (size_t(b) * T + n) * C, size_t(T - n) * C, 0.0f);
    // A sequence's heads as two small products through the kernel (a query's scores and its
    // weighted values each depend on that query's row alone) around a softmax a row.
    for (int h = 0; h < NH; ++h) {
      const float* q = seq + h * hs;
      const float* k = seq + C + h * hs;
      const float* v = seq + 2 * C + h * hs;
      float* p = att + (size_t(b) * NH + h) * T * T;  // (n,n) rows T apart
      gemm_strided_nt(p, T, q, C3, k, C3, n, hs, n);  // q k^T, unscaled
      if (scores) {
        float* s = scores + (size_t(b) * NH + h) * T * T;
        for (int t = 0; t < n; ++t)
          for (int j = 0; j < (causal ? t + 1 : n); ++j) s[size_t(t) * T + j] = p[size_t(t) * T + j] * scale;
      }
      softmax_rows(p, n, T, n, causal, scale);
      // As attention_row counts a query over its keys.
      for (int t = 0; t < n; ++t) flops += (4.0 * hs + 6.0) * (causal ? t + 1 : n) + 1.0;
      // Causal rows hold zeros beyond their keys, so the product adds nothing for them.
      gemm_strided(out + size_t(b) * T * C + h * hs, C, p, T, v, C3, n, n, hs, false);
    }
  }
  return flops;
}

double gelu_forward(float* out, const float* in, size_t n) {
  gelu_n(out, in, n);  // runtime/vector_ops.hpp: the same bits for an element wherever it lies
  // cube 3, inner add and multiply 2, tanh 1, outer add and two multiplies 3.
  return 9.0 * n;
}

double relu_forward(float* out, const float* in, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  return double(n);
}

double residual_forward(float* x, const float* delta, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] += delta[i];
  return double(n);
}

double unembed_forward(float* logits, const float* x, const float* wte_t, int N, int C, int V) {
  gemm_nn(logits, x, wte_t, N, C, V, false);
  return 2.0 * N * C * V;
}

std::vector<float> transposed_embedding(const Model& model) {
  const int V = model.config.vocab_size, C = model.config.n_embd;
  std::vector<float> wte_t(size_t(C) * V);
  for (int v = 0; v < V; ++v)
    for (int c = 0; c < C; ++c) wte_t[size_t(c) * V + v] = model.w.wte[size_t(v) * C + c];
  return wte_t;
}

// --- interventions ---------------------------------------------------------------------------------

namespace {

// Every edit inside the model and its values the size it names; a caller's mistake otherwise.
void check_interventions(const Interventions& edits, const ModelConfig& cfg, int B, int T) {
  const int L = cfg.n_layer, C = cfg.n_embd, d = cfg.d_head();
  auto check = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("Interventions: " + what);
  };
  for (const ResidualPatch& p : edits.residual) {
    check(p.stage >= 0 && p.stage <= 2 * L, "a residual stage outside the model");
    for (int dim : p.dims) check(dim >= 0 && dim < C, "a residual dimension outside n_embd");
    check(p.values.size() >= size_t(p.per_sequence ? B : 1) * T * p.dims.size(),
          "fewer residual values than (sequences x) positions x dims");
  }
  for (const HeadPatch& p : edits.heads) {
    check(p.layer >= 0 && p.layer < L && p.head >= 0 && p.head < cfg.n_head, "a head outside the model");
    check(p.edit != HeadEdit::Replace || p.values.size() >= size_t(T) * d, "fewer head values than positions x d_head");
  }
  for (const MlpPatch& p : edits.mlps) {
    check(p.layer >= 0 && p.layer < L && cfg.n_inner > 0, "an MLP outside the model");
    check(p.values.empty() || p.values.size() >= size_t(T) * C, "fewer MLP values than positions x n_embd");
  }
}

// The patches below edit sequences [first, end) of the batch; x, att_out, qkv and out are the whole
// batch's.
void patch_residual(float* x, const Interventions& edits, int stage, const ForwardResult& r, int first, int end) {
  const int C = r.n_embd, T = r.time;
  for (const ResidualPatch& p : edits.residual) {
    if (p.stage != stage) continue;
    const size_t D = p.dims.size();
    for (int b = first; b < end; ++b) {
      const float* table = p.values.data() + (p.per_sequence ? size_t(b) * T * D : 0);  // (T,D)
      for (int t = 0; t < r.lengths[b]; ++t)
        for (size_t k = 0; k < D; ++k) x[(size_t(b) * T + t) * C + p.dims[k]] = table[size_t(t) * D + k];
    }
  }
}

// att_out (B,T,C) heads side by side; qkv (B,T,3C) for BOS's value.
void patch_heads(float* att_out, const float* qkv, const Interventions& edits, int layer, const ForwardResult& r,
                 int first, int end) {
  const int C = r.n_embd, T = r.time, d = C / r.n_head;
  for (const HeadPatch& p : edits.heads) {
    if (p.layer != layer) continue;
    for (int b = first; b < end; ++b)
      for (int t = 0; t < r.lengths[b]; ++t) {
        float* z = att_out + (size_t(b) * T + t) * C + size_t(p.head) * d;
        const float* bos_value = qkv + size_t(b) * T * 3 * C + 2 * C + size_t(p.head) * d;
        for (int j = 0; j < d; ++j)
          z[j] = p.edit == HeadEdit::Zero ? 0.0f : p.edit == HeadEdit::Bos ? bos_value[j] : p.values[size_t(t) * d + j];
      }
  }
}

void patch_mlp(float* out, const Interventions& edits, int layer, const ForwardResult& r, int first, int end) {
  const int C = r.n_embd, T = r.time;
  for (const MlpPatch& p : edits.mlps) {
    if (p.layer != layer) continue;
    for (int b = first; b < end; ++b)
      for (int t = 0; t < r.lengths[b]; ++t)
        for (int c = 0; c < C; ++c)
          out[(size_t(b) * T + t) * C + c] = p.values.empty() ? 0.0f : p.values[size_t(t) * C + c];
  }
}

}  // namespace

// --- the batched forward ------------------------------------------------------------------------

ForwardResult CpuBackend::forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options) {
  const ModelConfig& cfg = model_.config;
  const ParameterViews& w = model_.w;
  const int B = int(batch.size()), C = cfg.n_embd, NH = cfg.n_head, I = cfg.n_inner, V = cfg.vocab_size;
  const int L = cfg.n_layer, stages = 2 * L + 1;

  ForwardResult result = begin_forward(cfg, batch);
  const int T = result.time;
  if (B == 0 || T == 0) return result;
  const size_t N = size_t(B) * T;

  // One allocation for every activation of this call (llm.c style views), its start 64-byte
  // aligned: Eigen's vectorised loops (LayerNorm's sums, the softmax) start their packets where the
  // address allows, so the same layout gives the same bits in every call, process and thread count.
  const size_t sizes[] = {N * C, N * C, N * 3 * C, N * C, N * I, N * I, size_t(B) * NH * T * T};
  size_t total = kBufferAlignment;
  for (size_t s : sizes) total += s;
  if (buffer_.size() < total) buffer_.resize(total);
  float* cursor = buffer_.data();
  while (reinterpret_cast<uintptr_t>(cursor) % (kBufferAlignment * sizeof(float)) != 0) ++cursor;
  auto take = [&](size_t n) { float* p = cursor; cursor += n; return p; };
  float* const x = take(N * C);           // (B,T,C) the residual stream
  float* const ln = take(N * C);          // (B,T,C) LayerNorm output
  float* const qkv = take(N * 3 * C);     // (B,T,3C)
  float* const att_out = take(N * C);     // (B,T,C)
  float* const fc = take(N * I);          // (B,T,I)
  float* const act = take(N * I);         // (B,T,I)
  float* const att = take(size_t(B) * NH * T * T);  // (B,NH,T,T)

  const PaddedTokens padded(batch, result);

  // Everything the result holds is allocated before the threads start (they only write into it).
  if (options.capture_residual) result.residual.assign(size_t(B) * stages * T * C, 0.0f);
  if (options.capture_attention) result.attention.assign(size_t(B) * L * NH * T * T, 0.0f);
  std::vector<float> layer_scores;  // (B,NH,T,T): one layer's, copied into result.scores (B,L,NH,T,T)
  if (options.capture_scores) {
    result.scores.assign(size_t(B) * L * NH * T * T, 0.0f);
    layer_scores.resize(size_t(B) * NH * T * T);
  }
  if (options.capture_outputs) {
    result.z.assign(size_t(B) * L * T * C, 0.0f);
    result.mlp_out.assign(size_t(B) * L * T * C, 0.0f);
  }
  if (options.capture_final) result.final.resize(N * C);
  if (options.capture_last_resid) result.last_resid.resize(N * C);
  result.logits.resize(N * V);
  const Interventions* edits = options.interventions && !options.interventions->empty() ? options.interventions : nullptr;
  if (edits) check_interventions(*edits, cfg, B, T);
  // (B,L,T,C) views of one layer's rows for sequence b.
  auto layer_rows = [&](std::vector<float>& all, int b, int l) { return all.data() + (size_t(b) * L + l) * T * C; };

  // Sequences [first, end) through the whole model: every step is a row's or a sequence's own (the
  // products are row by row, runtime/gemm.hpp; attention and the softmax a sequence's), at the same
  // addresses as in a one-thread run, so how the batch is split changes no bit of the result.
  auto forward_sequences = [&](int first, int end) {
    const int Bc = end - first, Nc = Bc * T;
    const size_t r0 = size_t(first) * T;  // first row
    auto capture_residual = [&](int stage) {
      if (edits) patch_residual(x, *edits, stage, result, first, end);
      if (options.capture_residual) capture_residual_stage(result, x, stage, first, end);
    };
    double flops = encoder_forward(x + r0 * C, padded.tokens.data() + r0, padded.positions.data() + r0, w.wte, w.wpe,
                                   Nc, C);
    capture_residual(0);
    for (int l = 0; l < L; ++l) {
      const LayerWeights& lw = w.layers[l];
      const float* in = x;
      if (cfg.layer_norm) {
        flops += layernorm_forward(ln + r0 * C, nullptr, nullptr, x + r0 * C, lw.ln_1_w, lw.ln_1_b, Nc, C);
        in = ln;
      }
      flops += matmul_forward(qkv + r0 * 3 * C, in + r0 * C, lw.attn_w, lw.attn_b, Nc, C, 3 * C);
      const size_t first_pattern = size_t(first) * NH * T * T;
      flops += attention_forward(att_out + r0 * C, att + first_pattern, qkv + r0 * 3 * C, result.lengths.data() + first,
                                 Bc, T, C, NH, cfg.causal,
                                 options.capture_scores ? layer_scores.data() + first_pattern : nullptr);
      if (edits) patch_heads(att_out, qkv, *edits, l, result, first, end);
      if (options.capture_outputs)
        for (int b = first; b < end; ++b)
          std::copy_n(att_out + size_t(b) * T * C, size_t(T) * C, layer_rows(result.z, b, l));
      flops += matmul_residual_forward(x + r0 * C, att_out + r0 * C, lw.attn_proj_w, lw.attn_proj_b, Nc, C, C);
      capture_residual(2 * l + 1);
      for (int b = first; b < end; ++b) {
        const size_t from = size_t(b) * NH * T * T, to = (size_t(b) * L + l) * NH * T * T;
        if (options.capture_attention) std::copy_n(att + from, size_t(NH) * T * T, result.attention.data() + to);
        if (options.capture_scores)
          std::copy_n(layer_scores.data() + from, size_t(NH) * T * T, result.scores.data() + to);
      }
      if (I > 0) {
        in = x;
        if (cfg.layer_norm) {
          flops += layernorm_forward(ln + r0 * C, nullptr, nullptr, x + r0 * C, lw.ln_2_w, lw.ln_2_b, Nc, C);
          in = ln;
        }
        flops += matmul_forward(fc + r0 * I, in + r0 * C, lw.fc_w, lw.fc_b, Nc, C, I);
        const size_t n = size_t(Nc) * I;
        flops += cfg.activation == Activation::Gelu ? gelu_forward(act + r0 * I, fc + r0 * I, n)
                                                    : relu_forward(act + r0 * I, fc + r0 * I, n);
        if (edits || options.capture_outputs) {
          // The MLP's output on its own (hook_mlp_out), then added: the fused product cannot be edited.
          float* out = ln;  // (B,T,C): free again once fc is computed
          flops += matmul_forward(out + r0 * C, act + r0 * I, lw.fc_proj_w, lw.fc_proj_b, Nc, I, C);
          if (edits) patch_mlp(out, *edits, l, result, first, end);
          if (options.capture_outputs)
            for (int b = first; b < end; ++b)
              std::copy_n(out + size_t(b) * T * C, size_t(T) * C, layer_rows(result.mlp_out, b, l));
          flops += residual_forward(x + r0 * C, out + r0 * C, size_t(Nc) * C);
        } else {
          flops += matmul_residual_forward(x + r0 * C, act + r0 * I, lw.fc_proj_w, lw.fc_proj_b, Nc, I, C);
        }
      }
      capture_residual(2 * l + 2);
    }
    if (options.capture_last_resid) std::copy_n(x + r0 * C, size_t(Nc) * C, result.last_resid.data() + r0 * C);
    const float* final_stream = x;
    if (cfg.layer_norm) {
      flops += layernorm_forward(ln + r0 * C, nullptr, nullptr, x + r0 * C, w.ln_f_w, w.ln_f_b, Nc, C);
      final_stream = ln;
    }
    if (options.capture_final) std::copy_n(final_stream + r0 * C, size_t(Nc) * C, result.final.data() + r0 * C);
    flops += unembed_forward(result.logits.data() + r0 * V, final_stream + r0 * C, wte_t_.data(), Nc, C, V);
    for (int b = first; b < end; ++b)
      for (int t = result.lengths[b]; t < T; ++t)
        std::fill_n(result.logits.data() + (size_t(b) * T + t) * V, V, 0.0f);
    return flops;
  };

  // A thread only for work that pays for starting it: a chunk of at least kFlopsPerThread.
  const double work = double(B) * forward_flops(cfg, T);
  const int chunks = std::max(1, std::min({threads_, B, int(work / kFlopsPerThread)}));
  std::vector<double> flops(size_t(chunks), 0.0);
  for_each_chunk(B, chunks, [&](int k, int first, int end) { flops[size_t(k)] = forward_sequences(first, end); });
  if (options.count_flops)
    for (double f : flops) result.flops += f;
  return result;
}

std::unique_ptr<Decoder> CpuBackend::decoder() {
  if (!model_.config.causal)
    fail_at(Span{}, "this model is bidirectional, so it cannot decode token by token with a KV cache (every "
                    "position sees later ones); run it with `raspc run` instead");
  return std::make_unique<CpuDecoder>(model_);
}

// --- the KV-cached decoder -------------------------------------------------------------------------

CpuDecoder::CpuDecoder(const Model& model) : model_(model) {
  const ModelConfig& cfg = model.config;
  const size_t C = cfg.n_embd, I = cfg.n_inner, P = cfg.n_positions, V = cfg.vocab_size, NH = cfg.n_head;
  buffer_.assign(4 * C + 2 * I + NH * P + V + C * V + size_t(cfg.n_layer) * P * 3 * C, 0.0f);
  float* cursor = buffer_.data();
  auto take = [&](size_t n) { float* p = cursor; cursor += n; return p; };
  x_ = take(C);
  ln_ = take(C);
  att_out_ = take(C);
  delta_ = take(C);
  fc_ = take(I);
  act_ = take(I);
  att_ = take(NH * P);
  logits_ = take(V);
  wte_t_ = take(C * V);
  const std::vector<float> wte_t = transposed_embedding(model);
  std::copy(wte_t.begin(), wte_t.end(), wte_t_);
  for (int l = 0; l < cfg.n_layer; ++l) qkv_cache_.push_back(take(P * 3 * C));
}

const float* CpuDecoder::step(int token) {
  const ModelConfig& cfg = model_.config;
  const ParameterViews& w = model_.w;
  const int C = cfg.n_embd, NH = cfg.n_head, I = cfg.n_inner, V = cfg.vocab_size, P = cfg.n_positions;
  if (position_ >= P)
    fail_at(Span{}, "the decoder already holds " + std::to_string(P) +
                        " tokens, the model's maximum; reset it or keep a shorter window");
  check_token(cfg, token);
  const int t = position_;
  double flops = encoder_forward(x_, &token, &t, w.wte, w.wpe, 1, C);
  for (int l = 0; l < cfg.n_layer; ++l) {
    const LayerWeights& lw = w.layers[l];
    const float* in = x_;
    if (cfg.layer_norm) {
      flops += layernorm_forward(ln_, nullptr, nullptr, x_, lw.ln_1_w, lw.ln_1_b, 1, C);
      in = ln_;
    }
    float* cache = qkv_cache_[l];  // (P,3C)
    float* row = cache + size_t(t) * 3 * C;
    flops += matmul_forward(row, in, lw.attn_w, lw.attn_b, 1, C, 3 * C);
    flops += attention_row(att_out_, att_, P, row, cache + C, cache + 2 * C, 3 * C, t + 1, C, NH);
    flops += matmul_forward(delta_, att_out_, lw.attn_proj_w, lw.attn_proj_b, 1, C, C);
    flops += residual_forward(x_, delta_, C);
    if (I > 0) {
      in = x_;
      if (cfg.layer_norm) {
        flops += layernorm_forward(ln_, nullptr, nullptr, x_, lw.ln_2_w, lw.ln_2_b, 1, C);
        in = ln_;
      }
      flops += matmul_forward(fc_, in, lw.fc_w, lw.fc_b, 1, C, I);
      flops += cfg.activation == Activation::Gelu ? gelu_forward(act_, fc_, I) : relu_forward(act_, fc_, I);
      flops += matmul_forward(delta_, act_, lw.fc_proj_w, lw.fc_proj_b, 1, I, C);
      flops += residual_forward(x_, delta_, C);
    }
  }
  const float* final_stream = x_;
  if (cfg.layer_norm) {
    flops += layernorm_forward(ln_, nullptr, nullptr, x_, w.ln_f_w, w.ln_f_b, 1, C);
    final_stream = ln_;
  }
  flops += unembed_forward(logits_, final_stream, wte_t_, 1, C, V);
  last_step_flops_ = flops;
  ++position_;
  return logits_;
}

}  // namespace raspc
