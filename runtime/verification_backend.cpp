#include "runtime/verification_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "runtime/forward_batch.hpp"
#include "runtime/gemm.hpp"
#include "runtime/row_memo.hpp"
#include "runtime/vector_ops.hpp"

namespace raspc {

// The parts of VerificationBackend::Plan: a named namespace, since a class of the header holds them.
namespace verification_plan {

// A weight block's values, row-major (rows, cols), and for a block with few enough nonzeros
// (4% or less) the same in compressed rows, which a row's product then walks instead.
struct PrunedMatrix {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using SparseRows = Eigen::SparseMatrix<float, Eigen::RowMajor>;

  std::vector<float> values;
  SparseRows sparse;
  bool is_sparse = false;

  void set(std::vector<float> dense, int rows, int cols) {
    values = std::move(dense);
    size_t nonzero = 0;
    for (float v : values) nonzero += v != 0.0f;
    is_sparse = double(nonzero) <= 0.04 * double(rows) * cols;
    if (is_sparse) sparse = Eigen::Map<const RowMatrix>(values.data(), rows, cols).sparseView();
  }
};

// A product restricted to the nonzero block of its weight W (R, OC), one row at a time:
//   out (cols) = in (rows) . W[rows, cols] + bias[cols]
// A reading block takes its input from a row of the residual stream, gathering (and normalising)
// the columns `rows` names; a writing block's input is already compact (its k-th column stands
// for W's row rows[k]) and its output is added into the residual stream's columns `cols`.
//
// A row's product is a fused multiply-add a term, in the order of W's rows, skipping the input's
// zeros (a product with zero adds nothing): its result depends on that row alone, never on the
// batch around it, which is what lets RowMemo hand back an earlier row's result for the same input.
struct Block {
  std::vector<int> rows, cols;
  std::vector<float> bias;  // (cols)
  PrunedMatrix weight;      // (rows, cols)

  int n_rows() const { return int(rows.size()); }
  int n_cols() const { return int(cols.size()); }

  Block(const float* w, int OC, std::vector<int> block_rows, std::vector<int> block_cols, const float* full_bias)
      : rows(std::move(block_rows)), cols(std::move(block_cols)) {
    std::vector<float> values(rows.size() * cols.size());
    for (size_t r = 0; r < rows.size(); ++r)
      for (size_t c = 0; c < cols.size(); ++c) values[r * cols.size() + c] = w[size_t(rows[r]) * OC + cols[c]];
    weight.set(std::move(values), n_rows(), n_cols());
    for (int c : cols) bias.push_back(full_bias ? full_bias[c] : 0.0f);
  }
  Block() = default;

  // to (rows) = norm(x)[rows], x one row (width) of the residual stream; norm is LayerNorm with the
  // row's statistics `mean` and `rstd` and `gain` and `shift`, or the identity when gain is null.
  void gather(float* to, const float* x, float mean, float rstd, const float* gain, const float* shift) const {
    const int R = n_rows();
    if (gain)
      for (int r = 0; r < R; ++r) {
        const int c = rows[size_t(r)];
        to[r] = (x[c] - mean) * rstd * gain[c] + shift[c];
      }
    else
      for (int r = 0; r < R; ++r) to[r] = x[rows[size_t(r)]];
  }
  // out (cols) = in (rows) . W + bias
  void multiply(float* out, const float* in) const {
    const int R = n_rows(), K = n_cols();
    std::copy(bias.begin(), bias.end(), out);
    if (weight.is_sparse) {
      for (int r = 0; r < R; ++r) {
        const float s = in[r];
        if (s == 0.0f) continue;
        for (PrunedMatrix::SparseRows::InnerIterator it(weight.sparse, r); it; ++it)
          out[it.index()] = std::fma(s, it.value(), out[it.index()]);
      }
      return;
    }
    for (int r = 0; r < R; ++r) {
      const float s = in[r];
      if (s == 0.0f) continue;
      const float* w = weight.values.data() + size_t(r) * K;
      for (int k = 0; k < K; ++k) out[k] = std::fma(s, w[k], out[k]);
    }
  }
  // The same for N rows at once (Eigen's GEMM, or its sparse product): for the products a memo
  // does not pay for, where a row at a time would lose the GEMM's speed.
  void multiply_rows(float* out, const float* in, int N) const {
    const int R = n_rows(), K = n_cols();
    if (K == 0) return;
    if (R == 0) {  // a constant: the bias alone
      for (int n = 0; n < N; ++n) std::copy(bias.begin(), bias.end(), out + size_t(n) * K);
      return;
    }
    if (!weight.is_sparse) {
      matmul_forward(out, in, weight.values.data(), bias.data(), N, R, K);
      return;
    }
    Eigen::Map<PrunedMatrix::RowMatrix> y(out, N, K);
    y.noalias() = Eigen::Map<const PrunedMatrix::RowMatrix>(in, N, R) * weight.sparse;
    y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias.data(), K);
  }
  // x[cols] += delta (cols), x one row of the residual stream.
  void scatter_add(float* x, const float* delta) const {
    const int K = n_cols();
    for (int k = 0; k < K; ++k) x[cols[size_t(k)]] += delta[k];
  }
};

// Where one head's dimensions sit in a compact q|k|v row and in the compact attention output.
struct Head {
  int q = 0, k = 0, qk = 0;  // offsets of its query and key dimensions, and their count
  int v = 0, out = 0, nv = 0;  // offset of its value dimensions, of its output, and their count
};

}  // namespace verification_plan

namespace {

bool column_nonzero(const float* w, int R, int OC, int col, const float* bias) {
  if (bias && bias[col] != 0.0f) return true;
  for (int r = 0; r < R; ++r)
    if (w[size_t(r) * OC + col] != 0.0f) return true;
  return false;
}

bool row_nonzero(const float* w, int OC, int row) {
  for (int c = 0; c < OC; ++c)
    if (w[size_t(row) * OC + c] != 0.0f) return true;
  return false;
}

// The rows of W (R, OC) with a nonzero in one of `cols`.
std::vector<int> rows_meeting(const float* w, int R, int OC, const std::vector<int>& cols) {
  std::vector<int> rows;
  for (int r = 0; r < R; ++r)
    for (int c : cols)
      if (w[size_t(r) * OC + c] != 0.0f) {
        rows.push_back(r);
        break;
      }
  return rows;
}

// The columns of W (., OC) with a nonzero in one of `rows`, or a nonzero bias.
std::vector<int> cols_meeting(const float* w, int OC, const std::vector<int>& rows, const float* bias) {
  std::vector<int> cols;
  for (int c = 0; c < OC; ++c) {
    bool nonzero = bias && bias[c] != 0.0f;
    for (size_t k = 0; k < rows.size() && !nonzero; ++k) nonzero = w[size_t(rows[k]) * OC + c] != 0.0f;
    if (nonzero) cols.push_back(c);
  }
  return cols;
}

}  // namespace

struct VerificationBackend::Plan {
  using Block = verification_plan::Block;
  using Head = verification_plan::Head;
  using RowMemo = verification_plan::RowMemo;
  struct Layer {
    Block qkv;  // reads the normalised stream; columns: the heads' q dims, then their k dims, then v dims
    std::vector<Head> heads;
    int n_values = 0;  // compact attention output width
    Block attn_proj;   // reads the compact attention output; writes the stream
    Block fc;          // reads the normalised stream; columns: the live hidden units
    Block fc_proj;     // reads the live units; writes the stream
    // By input row: q|k|v by the gathered ln_1 columns; the attention projection's output by the
    // heads' compact output; the MLP's output (both products and the activation) by the gathered
    // ln_2 columns. In the backend's VerificationMemos.
    RowMemo *qkv_memo = nullptr, *proj_memo = nullptr, *mlp_memo = nullptr;
  };
  std::vector<Layer> layers;
  Block unembed;  // reads ln_f's output; columns: every token
  RowMemo* unembed_memo = nullptr;  // the logits by the gathered ln_f columns
  RowMemo::Scratch scratch;         // what this backend's lookups need of their own
  int widest = 0;  // the most floats a row of any compact activation takes
  // The most floats a row of each (N, width) buffer of a call takes: q|k|v, the heads' output, and
  // what the products of all rows at once need where a block is not memoised (its gathered input,
  // the MLP's hidden units, its output). Each its own: one width for all five made dyck3's
  // buffers 295 MB a thread at 16, and touching them first was a fifth of its verification.
  int qkv_width = 0, values_width = 0, gathered_width = 0, hidden_width = 0, delta_width = 0;
  // Every buffer starts on Eigen's alignment: the blocks' and the attention's products here are
  // Eigen's, whose vectorised paths may start where the address allows, so a result could
  // otherwise depend on where the allocator put the buffer, and two backends would differ.
  // (LayerNorm, GELU and the softmax are runtime/vector_ops.hpp's: the same bits at any address.)
  using Buffer = std::vector<float, Eigen::aligned_allocator<float>>;
  Buffer activations;  // every activation of a call, reused by the next one
  Buffer units;        // one row's hidden units
  Buffer scores;       // one head's scores over a sequence
};

VerificationMemos::~VerificationMemos() = default;

void VerificationMemos::prepare(size_t rows) {
  for (const auto& memo : memos_) memo->prepare(rows);
}

VerificationBackend::~VerificationBackend() = default;

std::shared_ptr<VerificationMemos> VerificationBackend::share_memos() {
  memos_->shared_ = true;
  return memos_;
}

VerificationBackend::VerificationBackend(const Model& model, std::shared_ptr<VerificationMemos> shared)
    : model_(model), dense_(model), memos_(std::move(shared)) {
  using namespace verification_plan;
  const ModelConfig& cfg = model.config;
  const int C = cfg.n_embd, I = cfg.n_inner, NH = cfg.n_head, hs = cfg.d_head(), V = cfg.vocab_size;
  plan_ = std::make_unique<Plan>();
  Plan& plan = *plan_;
  plan.layers.reserve(size_t(cfg.n_layer));
  auto widen = [&](const Block& b) { plan.widest = std::max({plan.widest, b.n_rows(), b.n_cols()}); };
  for (int l = 0; l < cfg.n_layer; ++l) {
    const LayerWeights& lw = model.w.layers[l];
    Plan::Layer& layer = plan.layers.emplace_back();
    std::vector<int> q_cols, k_cols, v_cols, value_rows;
    for (int h = 0; h < NH; ++h) {
      Head head;
      head.q = int(q_cols.size());
      head.k = int(k_cols.size());
      head.v = int(v_cols.size());
      head.out = head.v;
      for (int i = 0; i < hs; ++i) {
        const int d = h * hs + i;
        if (column_nonzero(lw.attn_w, C, 3 * C, d, lw.attn_b) && column_nonzero(lw.attn_w, C, 3 * C, C + d, lw.attn_b)) {
          q_cols.push_back(d);
          k_cols.push_back(C + d);
        }
        if (column_nonzero(lw.attn_w, C, 3 * C, 2 * C + d, lw.attn_b) && row_nonzero(lw.attn_proj_w, C, d)) {
          v_cols.push_back(2 * C + d);
          value_rows.push_back(d);
        }
      }
      head.qk = int(q_cols.size()) - head.q;
      head.nv = int(v_cols.size()) - head.v;
      layer.heads.push_back(head);
    }
    const int nq = int(q_cols.size());
    for (Head& head : layer.heads) {
      head.k += nq;
      head.v += 2 * nq;
    }
    layer.n_values = int(v_cols.size());
    std::vector<int> qkv_cols = q_cols;
    qkv_cols.insert(qkv_cols.end(), k_cols.begin(), k_cols.end());
    qkv_cols.insert(qkv_cols.end(), v_cols.begin(), v_cols.end());
    layer.qkv = Block(lw.attn_w, 3 * C, rows_meeting(lw.attn_w, C, 3 * C, qkv_cols), qkv_cols, lw.attn_b);
    layer.attn_proj = Block(lw.attn_proj_w, C, value_rows, cols_meeting(lw.attn_proj_w, C, value_rows, lw.attn_proj_b),
                            lw.attn_proj_b);
    widen(layer.qkv);
    widen(layer.attn_proj);
    if (I > 0) {
      // The hidden units that can contribute (GELU and ReLU of 0 are 0, so a unit that reads
      // nothing and has no bias adds nothing; nor does one whose output row is zero).
      std::vector<int> live;
      for (int j = 0; j < I; ++j)
        if (column_nonzero(lw.fc_w, C, I, j, lw.fc_b) && row_nonzero(lw.fc_proj_w, C, j)) live.push_back(j);
      layer.fc = Block(lw.fc_w, I, rows_meeting(lw.fc_w, C, I, live), live, lw.fc_b);
      layer.fc_proj = Block(lw.fc_proj_w, C, live, cols_meeting(lw.fc_proj_w, C, live, lw.fc_proj_b), lw.fc_proj_b);
      widen(layer.fc);
      widen(layer.fc_proj);
    }
  }
  std::vector<float> unembedding(size_t(C) * V);  // wte^T (C,V)
  for (int v = 0; v < V; ++v)
    for (int c = 0; c < C; ++c) unembedding[size_t(c) * V + v] = model.w.wte[size_t(v) * C + c];
  std::vector<int> tokens(static_cast<size_t>(V));
  for (int v = 0; v < V; ++v) tokens[size_t(v)] = v;
  plan.unembed = Block(unembedding.data(), V, rows_meeting(unembedding.data(), C, V, tokens), tokens, nullptr);
  widen(plan.unembed);
  if (!memos_) {
    memos_ = std::make_shared<VerificationMemos>();
    auto add = [&](int key_width, int value_width, double cost) {
      memos_->memos_.push_back(std::make_unique<RowMemo>(key_width, value_width, cost));
    };
    for (const Plan::Layer& layer : plan.layers) {
      add(layer.qkv.n_rows(), layer.qkv.n_cols(), double(layer.qkv.n_rows()) * layer.qkv.n_cols());
      add(layer.attn_proj.n_rows(), layer.attn_proj.n_cols(), double(layer.attn_proj.n_rows()) * layer.attn_proj.n_cols());
      const double units = layer.fc.n_cols();  // each: a multiply-add a row read and written, and its activation
      add(layer.fc.n_rows(), layer.fc_proj.n_cols(), I > 0 ? units * (layer.fc.n_rows() + layer.fc_proj.n_cols() + 10) : 0.0);
    }
    add(plan.unembed.n_rows(), V, double(plan.unembed.n_rows()) * V);
    // 256 MB of memos in all (shared by every thread), 32 MB each at most.
    const auto& memos = memos_->memos_;
    const size_t enabled = size_t(std::count_if(memos.begin(), memos.end(), [](const auto& m) { return m->enabled(); }));
    for (const auto& memo : memos) memo->set_budget(std::min(size_t(32) << 20, (size_t(256) << 20) / std::max<size_t>(1, enabled)));
  }
  if (memos_->memos_.size() != 3 * plan.layers.size() + 1)
    throw std::logic_error("VerificationBackend: memos shared from a backend of another model");
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    plan.layers[l].qkv_memo = memos_->memos_[3 * l].get();
    plan.layers[l].proj_memo = memos_->memos_[3 * l + 1].get();
    plan.layers[l].mlp_memo = memos_->memos_[3 * l + 2].get();
  }
  plan.unembed_memo = memos_->memos_.back().get();
  plan.units.assign(size_t(std::max(plan.widest, 1)), 0.0f);
  for (const Plan::Layer& layer : plan.layers) {
    plan.qkv_width = std::max(plan.qkv_width, layer.qkv.n_cols());
    plan.values_width = std::max(plan.values_width, layer.n_values);
    plan.gathered_width = std::max(plan.gathered_width, layer.qkv.n_rows());
    if (!layer.proj_memo->enabled()) plan.delta_width = std::max(plan.delta_width, layer.attn_proj.n_cols());
    if (I > 0) plan.gathered_width = std::max(plan.gathered_width, layer.fc.n_rows());
    if (I > 0 && !layer.mlp_memo->enabled()) {
      plan.hidden_width = std::max(plan.hidden_width, layer.fc.n_cols());
      plan.delta_width = std::max(plan.delta_width, layer.fc_proj.n_cols());
    }
  }
  plan.gathered_width = std::max(plan.gathered_width, plan.unembed.n_rows());
}

double VerificationBackend::sequence_flops(int tokens) const {
  using namespace verification_plan;
  const Plan& plan = *plan_;
  const double T = tokens, C = model_.config.n_embd;
  auto product = [](const Block& b) {
    return 2.0 * (b.weight.is_sparse ? double(b.weight.sparse.nonZeros()) : double(b.n_rows()) * b.n_cols());
  };
  const double norm = model_.config.layer_norm ? 4.0 * C : 0.0;  // a row's mean and variance
  double per_token = norm + product(plan.unembed), attention = 0;
  for (const Plan::Layer& layer : plan.layers) {
    per_token += 2 * norm + product(layer.qkv) + product(layer.attn_proj) + product(layer.fc) + product(layer.fc_proj);
    for (const Head& head : layer.heads) attention += 2.0 * T * T * (head.qk + head.nv) + 5.0 * T * T;
  }
  return T * per_token + attention;
}

ForwardResult VerificationBackend::forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options) {
  using namespace verification_plan;
  if (options.capture_attention || options.capture_scores || options.capture_final || options.count_flops ||
      options.capture_outputs || options.interventions)
    return dense_.forward(batch, options);
  const ModelConfig& cfg = model_.config;
  const ParameterViews& w = model_.w;
  Plan& plan = *plan_;
  const int B = int(batch.size()), C = cfg.n_embd, V = cfg.vocab_size, L = cfg.n_layer, stages = 2 * L + 1;
  ForwardResult result = begin_forward(cfg, batch);
  const int T = result.time;
  if (B == 0 || T == 0) return result;
  const size_t N = size_t(B) * T;
  if (!memos_->shared_) memos_->prepare(N);

  const size_t sizes[] = {N * C,
                          N * size_t(plan.qkv_width),
                          N * size_t(plan.values_width),
                          N * size_t(plan.gathered_width),
                          N * size_t(plan.hidden_width),
                          N * size_t(plan.delta_width),
                          N, N};
  size_t total = 0;
  for (size_t s : sizes) total += s;
  if (plan.activations.size() < total) plan.activations.resize(total);
  float* cursor = plan.activations.data();
  auto take = [&](size_t count) { float* p = cursor; cursor += count; return p; };
  float* x = take(N * C);        // (N,C) the residual stream
  float* compact = take(N * size_t(plan.qkv_width));        // (N,cols) q|k|v
  float* heads = take(N * size_t(plan.values_width));       // (N,values) attention's compact output
  float* gathered = take(N * size_t(plan.gathered_width));  // (N,rows) a block's gathered input (its memo's keys), all rows at once
  float* hidden = take(N * size_t(plan.hidden_width));      // (N,units) the MLP's hidden units, likewise
  float* delta = take(N * size_t(plan.delta_width));        // (N,cols) a writing block's output, likewise
  float* means = take(N);        // (N) the rows' LayerNorm statistics at the current LayerNorm
  float* rstds = take(N);
  float* units = plan.units.data();

  const PaddedTokens padded(batch, result);
  if (options.capture_residual) result.residual.assign(size_t(B) * stages * T * C, 0.0f);
  auto capture_residual = [&](int stage) {
    if (options.capture_residual) capture_residual_stage(result, x, stage);
  };
  // The rows' full-width LayerNorm statistics as layernorm_forward computes them, before a
  // LayerNorm's rows are gathered (a row's own update after its gather changes no other row's).
  auto normalise_rows = [&] {
    if (cfg.layer_norm) layernorm_statistics(x, int(N), C, kLayerNormEpsilon, means, rstds);
  };
  // Every row's gathered (and, with LayerNorm, normalised) columns for `block` into `gathered`.
  auto gather_all = [&](const Block& block, const float* gain, const float* shift) {
    for (size_t n = 0; n < N; ++n) {
      float* to = gathered + n * block.n_rows();
      if (cfg.layer_norm) block.gather(to, x + n * C, means[n], rstds[n], gain, shift);
      else block.gather(to, x + n * C, 0.0f, 1.0f, nullptr, nullptr);
    }
  };
  auto activate = [&](float* units_out, size_t count) {
    if (cfg.activation == Activation::Gelu) gelu_forward(units_out, units_out, count);
    else relu_forward(units_out, units_out, count);
  };

  encoder_forward(x, padded.tokens.data(), padded.positions.data(), w.wte, w.wpe, int(N), C);
  capture_residual(0);
  const float scale = 1.0f / std::sqrt(float(cfg.d_head()));
  if (plan.scores.size() < size_t(T) * T) plan.scores.resize(size_t(T) * T);
  float* scores = plan.scores.data();
  for (int l = 0; l < L; ++l) {
    const LayerWeights& lw = w.layers[l];
    Plan::Layer& layer = plan.layers[size_t(l)];
    const int width = layer.qkv.n_cols(), NV = layer.n_values;
    normalise_rows();
    gather_all(layer.qkv, lw.ln_1_w, lw.ln_1_b);
    if (layer.qkv_memo->enabled())
      layer.qkv_memo->find_rows(
          gathered, size_t(layer.qkv.n_rows()), N, plan.scratch, [&](float* out, const float* in) { layer.qkv.multiply(out, in); },
          [&](size_t n, const float* qkv) { std::copy_n(qkv, width, compact + n * width); });
    else
      layer.qkv.multiply_rows(compact, gathered, int(N));
    std::fill_n(heads, N * size_t(NV), 0.0f);  // padded queries stay zero
    for (int b = 0; b < B; ++b) {
      const int length = result.lengths[b];
      const float* seq = compact + size_t(b) * T * width;
      for (const Head& head : layer.heads) {
        if (head.nv == 0) continue;
        // As the dense forward's attention_forward, through the same kernel: scores, a softmax a
        // row, weighted values (the compact columns drop only terms with a zero weight, which add
        // exactly 0 to a chain). Eigen's products here cost a tenth of sort's verification at 64.
        if (head.qk > 0)
          gemm_strided_nt(scores, length, seq + head.q, width, seq + head.k, width, length, head.qk, length);
        else
          std::fill_n(scores, size_t(length) * length, 0.0f);  // every score a sum of products with a zero weight: uniform attention
        softmax_rows(scores, length, length, length, cfg.causal, scale);
        gemm_strided(heads + size_t(b) * T * NV + head.out, NV, scores, length, seq + head.v, width, length, length,
                     head.nv, false);
      }
    }
    if (layer.proj_memo->enabled()) {
      layer.proj_memo->find_rows(
          heads, size_t(NV), N, plan.scratch, [&](float* out, const float* in) { layer.attn_proj.multiply(out, in); },
          [&](size_t n, const float* out) { layer.attn_proj.scatter_add(x + n * C, out); });
    } else {
      layer.attn_proj.multiply_rows(delta, heads, int(N));
      for (size_t n = 0; n < N; ++n) layer.attn_proj.scatter_add(x + n * C, delta + n * layer.attn_proj.n_cols());
    }
    capture_residual(2 * l + 1);
    if (cfg.n_inner > 0) {
      const size_t n_units = size_t(layer.fc.n_cols());
      normalise_rows();
      // Every row gathered before any is updated: a row's update changes no other row.
      gather_all(layer.fc, lw.ln_2_w, lw.ln_2_b);
      if (layer.mlp_memo->enabled()) {
        layer.mlp_memo->find_rows(
            gathered, size_t(layer.fc.n_rows()), N, plan.scratch,
            [&](float* out, const float* in) {
              layer.fc.multiply(units, in);
              activate(units, n_units);
              layer.fc_proj.multiply(out, units);
            },
            [&](size_t n, const float* out) { layer.fc_proj.scatter_add(x + n * C, out); });
      } else {
        layer.fc.multiply_rows(hidden, gathered, int(N));
        activate(hidden, N * n_units);
        layer.fc_proj.multiply_rows(delta, hidden, int(N));
        for (size_t n = 0; n < N; ++n) layer.fc_proj.scatter_add(x + n * C, delta + n * layer.fc_proj.n_cols());
      }
    }
    capture_residual(2 * l + 2);
  }
  if (options.capture_last_resid) result.last_resid.assign(x, x + N * C);
  result.logits.resize(N * V);
  normalise_rows();
  gather_all(plan.unembed, w.ln_f_w, w.ln_f_b);
  if (plan.unembed_memo->enabled())
    plan.unembed_memo->find_rows(
        gathered, size_t(plan.unembed.n_rows()), N, plan.scratch, [&](float* out, const float* in) { plan.unembed.multiply(out, in); },
        [&](size_t n, const float* logits) { std::copy_n(logits, V, result.logits.data() + n * V); });
  else
    plan.unembed.multiply_rows(result.logits.data(), gathered, int(N));
  for (int b = 0; b < B; ++b)  // a padded position's logits are zero
    std::fill_n(result.logits.data() + (size_t(b) * T + size_t(result.lengths[b])) * V,
                size_t(T - result.lengths[b]) * V, 0.0f);
  return result;
}

}  // namespace raspc
