#include "runtime/verification_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "runtime/forward_batch.hpp"

namespace raspc {

namespace {

// A weight matrix (rows, cols), row-major, held sparse when few enough of its entries are nonzero
// for Eigen's dense-by-sparse product to beat its GEMM: at 1-3% nonzeros it took 0.2-0.7 of the
// GEMM's time (B*T = 8320 rows, 143..4352 columns), at 14% 2.5 times as long.
struct PrunedMatrix {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using SparseRows = Eigen::SparseMatrix<float, Eigen::RowMajor>;

  const float* dense = nullptr;  // the values when they live outside (set), else storage's
  std::vector<float> storage;    // the values when they are a gathered copy (set_copy)
  SparseRows sparse;
  bool is_sparse = false;

  void set(const float* values, int rows, int cols) {
    dense = values;
    size_t nonzero = 0;
    for (size_t i = 0; i < size_t(rows) * cols; ++i) nonzero += values[i] != 0.0f;
    is_sparse = double(nonzero) <= 0.04 * double(rows) * cols;
    if (is_sparse) sparse = Eigen::Map<const RowMatrix>(values, rows, cols).sparseView();
  }
  void set_copy(std::vector<float> values, int rows, int cols) {
    storage = std::move(values);
    set(storage.data(), rows, cols);
    dense = nullptr;  // storage.data(), looked up at each use: a copy of this matrix has its own
  }
  const float* values() const { return dense ? dense : storage.data(); }
  // out (N,cols) = in (N,rows) . this + bias (cols); bias may be null.
  void multiply(float* out, const float* in, const float* bias, int N, int rows, int cols) const {
    if (!is_sparse) {
      matmul_forward(out, in, values(), bias, N, rows, cols);
      return;
    }
    Eigen::Map<RowMatrix> y(out, N, cols);
    y.noalias() = Eigen::Map<const RowMatrix>(in, N, rows) * sparse;
    if (bias) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, cols);
  }
};

// A product restricted to the nonzero block of its weight W (R, OC):
//   out (N, cols) = in (N, rows) . W[rows, cols] + bias[cols]
// A reading block takes its input from a full-width activation, gathering the columns `rows`
// names; a writing block's input is already compact (its k-th column stands for W's row rows[k])
// and its output is added into the residual stream's columns `cols`.
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
    weight.set_copy(std::move(values), n_rows(), n_cols());
    for (int c : cols) bias.push_back(full_bias ? full_bias[c] : 0.0f);
  }
  Block() = default;

  // out (N, cols) = norm(x)[:, rows] . W + bias, x (N, width) the residual stream; `gathered`
  // holds N * rows floats. norm is LayerNorm with the rows' statistics `mean` and `rstd` and
  // `gain` and `shift`, computed for the gathered columns only; the identity when gain is null.
  void read(float* out, const float* x, int width, const float* mean, const float* rstd, const float* gain,
            const float* shift, float* gathered, int N) const {
    const int R = n_rows();
    for (int n = 0; n < N; ++n) {
      const float* from = x + size_t(n) * width;
      float* to = gathered + size_t(n) * R;
      if (gain) {
        const float m = mean[n], s = rstd[n];
        for (int r = 0; r < R; ++r) {
          const int c = rows[size_t(r)];
          to[r] = (from[c] - m) * s * gain[c] + shift[c];
        }
      } else {
        for (int r = 0; r < R; ++r) to[r] = from[rows[size_t(r)]];
      }
    }
    multiply(out, gathered, N);
  }
  // x[:, cols] += in . W + bias, in (N, rows) compact, x (N, width); `delta` holds N * cols floats.
  void write(float* x, int width, const float* in, float* delta, int N) const {
    const int K = n_cols();
    multiply(delta, in, N);
    for (int n = 0; n < N; ++n) {
      float* to = x + size_t(n) * width;
      const float* from = delta + size_t(n) * K;
      for (int k = 0; k < K; ++k) to[cols[size_t(k)]] += from[k];
    }
  }

 private:
  void multiply(float* out, const float* in, int N) const {
    if (cols.empty()) return;
    if (rows.empty()) {  // a constant: the bias alone
      for (int n = 0; n < N; ++n) std::copy(bias.begin(), bias.end(), out + size_t(n) * cols.size());
      return;
    }
    weight.multiply(out, in, bias.data(), N, n_rows(), n_cols());
  }
};

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

// Where one head's dimensions sit in a compact q|k|v row and in the compact attention output.
struct Head {
  int q = 0, k = 0, qk = 0;  // offsets of its query and key dimensions, and their count
  int v = 0, out = 0, nv = 0;  // offset of its value dimensions, of its output, and their count
};

}  // namespace

struct VerificationBackend::Plan {
  struct Layer {
    Block qkv;  // reads the normalised stream; columns: the heads' q dims, then their k dims, then v dims
    std::vector<Head> heads;
    int n_values = 0;  // compact attention output width
    Block attn_proj;   // reads the compact attention output; writes the stream
    Block fc;          // reads the normalised stream; columns: the live hidden units
    Block fc_proj;     // reads the live units; writes the stream
  };
  std::vector<Layer> layers;
  Block unembed;  // reads ln_f's output; columns: every token
  int widest = 0;  // the most floats a row of any compact activation takes
};

VerificationBackend::~VerificationBackend() = default;

VerificationBackend::VerificationBackend(const Model& model) : model_(model), dense_(model) {
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
}

ForwardResult VerificationBackend::forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options) {
  if (options.capture_attention || options.count_flops) return dense_.forward(batch, options);
  const ModelConfig& cfg = model_.config;
  const ParameterViews& w = model_.w;
  const Plan& plan = *plan_;
  const int B = int(batch.size()), C = cfg.n_embd, V = cfg.vocab_size, L = cfg.n_layer, stages = 2 * L + 1;
  ForwardResult result = begin_forward(cfg, batch);
  const int T = result.time;
  if (B == 0 || T == 0) return result;
  const size_t N = size_t(B) * T;
  const int n = int(N);

  const size_t W = size_t(std::max(plan.widest, 1));
  const size_t sizes[] = {N * C, N, N, N * W, N * W, N * W, N * W};
  size_t total = 0;
  for (size_t s : sizes) total += s;
  if (buffer_.size() < total) buffer_.resize(total);
  float* cursor = buffer_.data();
  auto take = [&](size_t count) { float* p = cursor; cursor += count; return p; };
  float* x = take(N * C);          // (N,C) the residual stream
  float* mean = take(N);           // (N) LayerNorm's row statistics
  float* rstd = take(N);
  float* gathered = take(N * W);   // (N,rows) a reading block's input columns
  float* compact = take(N * W);    // (N,cols) a block's output: q|k|v, or the hidden units
  float* hidden = take(N * W);     // (N,cols) attention's output, or the activated units
  float* delta = take(N * W);      // (N,cols) a writing block's output before the residual add

  const PaddedTokens padded(batch, result);
  if (options.capture_residual) result.residual.assign(size_t(B) * stages * T * C, 0.0f);
  auto capture_residual = [&](int stage) {
    if (options.capture_residual) capture_residual_stage(result, x, stage);
  };
  // Every row's LayerNorm statistics (as layernorm_forward computes them); the blocks normalise
  // only the columns they read.
  auto read = [&](const Block& block, float* out, const float* gain, const float* shift) {
    if (!cfg.layer_norm) return block.read(out, x, C, nullptr, nullptr, nullptr, nullptr, gathered, n);
    for (size_t row = 0; row < N; ++row) {
      Eigen::Map<const Eigen::ArrayXf> values(x + row * C, C);
      mean[row] = values.sum() / C;
      rstd[row] = 1.0f / std::sqrt((values - mean[row]).square().sum() / C + kLayerNormEpsilon);
    }
    block.read(out, x, C, mean, rstd, gain, shift, gathered, n);
  };

  encoder_forward(x, padded.tokens.data(), padded.positions.data(), w.wte, w.wpe, n, C);
  capture_residual(0);
  const float scale = 1.0f / std::sqrt(float(cfg.d_head()));
  std::vector<float> scores(size_t(T) * T);
  using RowMatrix = PrunedMatrix::RowMatrix;
  using Stride = Eigen::OuterStride<>;
  using Rows = Eigen::Map<const RowMatrix, 0, Stride>;
  using OutRows = Eigen::Map<RowMatrix, 0, Stride>;
  for (int l = 0; l < L; ++l) {
    const LayerWeights& lw = w.layers[l];
    const Plan::Layer& layer = plan.layers[size_t(l)];
    read(layer.qkv, compact, lw.ln_1_w, lw.ln_1_b);
    const int width = layer.qkv.n_cols(), NV = layer.n_values;
    std::fill_n(hidden, N * size_t(NV), 0.0f);  // padded queries stay zero
    for (int b = 0; b < B; ++b) {
      const int length = result.lengths[b];
      const float* seq = compact + size_t(b) * T * width;
      for (const Head& head : layer.heads) {
        if (head.nv == 0) continue;
        // As the dense forward's attention_forward: scores, a softmax a row, weighted values.
        Eigen::Map<RowMatrix> p(scores.data(), length, length);
        if (head.qk > 0)
          p.noalias() = (Rows(seq + head.q, length, head.qk, Stride(width)) *
                         Rows(seq + head.k, length, head.qk, Stride(width)).transpose()) *
                        scale;
        else
          p.setZero();  // every score a sum of products with a zero weight: uniform attention
        softmax_rows(p.data(), length, length, cfg.causal);
        OutRows(hidden + size_t(b) * T * NV + head.out, length, head.nv, Stride(NV)).noalias() =
            p * Rows(seq + head.v, length, head.nv, Stride(width));
      }
    }
    layer.attn_proj.write(x, C, hidden, delta, n);
    capture_residual(2 * l + 1);
    if (cfg.n_inner > 0) {
      read(layer.fc, compact, lw.ln_2_w, lw.ln_2_b);
      const size_t units = N * size_t(layer.fc.n_cols());
      if (cfg.activation == Activation::Gelu) gelu_forward(hidden, compact, units);
      else relu_forward(hidden, compact, units);
      layer.fc_proj.write(x, C, hidden, delta, n);
    }
    capture_residual(2 * l + 2);
  }
  result.logits.resize(N * V);
  read(plan.unembed, result.logits.data(), w.ln_f_w, w.ln_f_b);
  for (int b = 0; b < B; ++b)
    for (int t = result.lengths[b]; t < T; ++t)
      std::fill_n(result.logits.data() + (size_t(b) * T + t) * V, V, 0.0f);
  return result;
}

}  // namespace raspc
