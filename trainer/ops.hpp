// The GPT-2 forward operations the trainer runs, each followed by its hand-written backward twin
// (llm.c style). Every op is templated on the scalar type so the gradient check can run the very
// same code in double precision.
//
// Layout: B sequences padded to T positions, row-major; N = B*T rows where a shape says (N,...).
// Padded positions (t >= lengths[b]) are masked out of attention as keys, and produce zeros as
// queries; the loss masks them, so their gradients are exactly zero.
// Backward functions accumulate (+=) into parameter gradients, as llm.c: the caller zeroes them
// once a step. The gradient of an op's input is written (=) where that op is its only source
// (matmul, unembedding, activations, attention), and accumulated by LayerNorm, whose input is a
// residual stream that also receives the residual connection's gradient: so the step never
// zero-fills the activations' gradients (7% of a step of the reference model).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "runtime/cpu_backend.hpp"
#include "runtime/forward_batch.hpp"
#include "runtime/gemm.hpp"
#include "runtime/vector_ops.hpp"

namespace raspc::ops {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MatrixView = Eigen::Map<RowMajor<T>>;
template <class T>
using ConstMatrixView = Eigen::Map<const RowMajor<T>>;
template <class T>
using VectorView = Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>;
template <class T>
using ConstVectorView = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;
// Row-major blocks whose rows are `Stride` elements apart (one head's columns of q|k|v).
using Stride = Eigen::OuterStride<>;
template <class T>
using StridedView = Eigen::Map<std::conditional_t<std::is_const_v<T>, const RowMajor<std::remove_const_t<T>>, RowMajor<T>>,
                               0, Stride>;
template <class T>
using ArrayView = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrayView = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// --- embeddings ----------------------------------------------------------------------------------

// out (B,T,C) = wte[tokens] (V,C) + wpe[t] (P,C); tokens (B,T)
template <class T>
void encoder_forward(T* out, const int* tokens, const T* wte, const T* wpe, int B, int Tn, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) {
      T* o = out + (size_t(b) * Tn + t) * C;
      const T* e = wte + size_t(tokens[b * Tn + t]) * C;
      const T* p = wpe + size_t(t) * C;
      for (int c = 0; c < C; ++c) o[c] = e[c] + p[c];
    }
}
template <class T>
void encoder_backward(T* dwte, T* dwpe, const T* dout, const int* tokens, int B, int Tn, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < Tn; ++t) {
      const T* d = dout + (size_t(b) * Tn + t) * C;
      T* de = dwte + size_t(tokens[b * Tn + t]) * C;
      T* dp = dwpe + size_t(t) * C;
      for (int c = 0; c < C; ++c) {
        de[c] += d[c];
        dp[c] += d[c];
      }
    }
}

// --- LayerNorm (epsilon 1e-5, as GPT-2) ------------------------------------------------------------

// out (N,C) = (inp - mean) * rstd * w + b; mean, rstd (N) are kept for the backward. In float the
// runtime's kernel (runtime/vector_ops.hpp, dispatched on the CPU's features); rows as Eigen arrays
// in double.
template <class T>
void layernorm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, int N, int C) {
  if constexpr (std::is_same_v<T, float>) return layernorm_rows(out, mean, rstd, inp, w, b, N, C, 1e-5f);
  const T eps = T(1e-5);
  ConstArrayView<T> gain(w, C), shift(b, C);
  for (int i = 0; i < N; ++i) {
    ConstArrayView<T> x(inp + size_t(i) * C, C);
    const T m = x.sum() / T(C);
    const T s = T(1) / std::sqrt((x - m).square().sum() / T(C) + eps);
    ArrayView<T>(out + size_t(i) * C, C) = (x - m) * s * gain + shift;
    mean[i] = m;
    rstd[i] = s;
  }
}
template <class T>
void layernorm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const T* mean,
                        const T* rstd, int N, int C) {
  ConstArrayView<T> gain(w, C);
  ArrayView<T> dgain(dw, C), dshift(db, C);
  // A row's normalised input and its gradient, allocated once (an .eval() a row allocated them
  // on the heap 2N times a call).
  Eigen::Array<T, Eigen::Dynamic, 1> norm(C), dnorm(C);
  for (int i = 0; i < N; ++i) {
    ConstArrayView<T> d(dout + size_t(i) * C, C), x(inp + size_t(i) * C, C);
    const T s = rstd[i];
    // dx = s * (dnorm - mean(dnorm) - norm * mean(dnorm * norm)), with dnorm = w * dout
    norm = (x - mean[i]) * s;
    dnorm = gain * d;
    const T dnorm_mean = dnorm.sum() / T(C), dnorm_norm_mean = (dnorm * norm).sum() / T(C);
    dshift += d;
    dgain += norm * d;
    ArrayView<T>(dinp + size_t(i) * C, C) += s * (dnorm - dnorm_mean - norm * dnorm_norm_mean);
  }
}

// --- affine maps (Hugging Face Conv1D: weight (IN,OUT)) -------------------------------------------
// In float the products are runtime/gemm.hpp's (1.3-1.6 times Eigen's on these thin shapes); the
// gradient check's double precision keeps Eigen's.

// out (N,OUT) = inp (N,IN) . w (IN,OUT) + bias (OUT). In float the product starts from the bias
// (runtime/gemm.hpp: no pass of its own over the output); in double the product adds onto the bias
// written first (Eigen's `=` would zero the output and the bias would take a second pass).
template <class T>
void matmul_forward(T* out, const T* inp, const T* w, const T* bias, int N, int IN, int OUT) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_nn(out, inp, w, N, IN, OUT, false, bias);
  } else {
    MatrixView<T> o(out, N, OUT);
    if (bias)
      o.rowwise() = ConstVectorView<T>(bias, OUT);
    else
      o.setZero();
    o.noalias() += ConstMatrixView<T>(inp, N, IN) * ConstMatrixView<T>(w, IN, OUT);
  }
}
template <class T>
void matmul_backward(T* dinp, T* dw, T* dbias, const T* dout, const T* inp, const T* w, int N, int IN,
                     int OUT) {
  ConstMatrixView<T> d(dout, N, OUT);
  if constexpr (std::is_same_v<T, float>) {
    gemm_nt(dinp, dout, w, N, OUT, IN);
    gemm_tn(dw, inp, dout, N, IN, OUT);
  } else {
    MatrixView<T>(dinp, N, IN).noalias() = d * ConstMatrixView<T>(w, IN, OUT).transpose();
    MatrixView<T>(dw, IN, OUT).noalias() += ConstMatrixView<T>(inp, N, IN).transpose() * d;
  }
  if (dbias) VectorView<T>(dbias, OUT) += d.colwise().sum();
}

// --- attention ---------------------------------------------------------------------------------------

// The softmax of each row of a head's (n, n) scores p, rows `stride` apart, over the row's keys:
// all n, or with causal those up to the row's own position; the masked weights are set to zero.
// The double-precision path's (the gradient check); float runs runtime/vector_ops.hpp's kernel.
template <class T>
void masked_softmax_rows(T* p, int n, int stride, bool causal) {
  for (int t = 0; t < n; ++t) {
    T* row_start = p + size_t(t) * stride;
    const int keys = causal ? t + 1 : n;
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> row(row_start, keys);
    row = (row - row.maxCoeff()).exp();
    row *= T(1) / row.sum();
    std::fill(row_start + keys, row_start + n, T(0));
  }
}

// qkv (B,T,3C): query | key | value, heads of d = C/H contiguous within each. att (B,H,T,T) holds
// the softmax weights [query][key]; out (B,T,C). Query t sees key k when k < lengths[b] and, with
// `causal`, k <= t. Scores are divided by sqrt(d). Each (sequence, head) is three small products
// over its real positions: in float the runtime's forward (its kernels dispatched on the CPU's
// features), in double Eigen's.
template <class T>
void attention_forward(T* out, T* att, const T* qkv, const int* lengths, bool causal, int B, int Tn, int C,
                       int H) {
  if constexpr (std::is_same_v<T, float>) {
    raspc::attention_forward(out, att, qkv, lengths, B, Tn, C, H, causal);
    return;
  }
  const int d = C / H;
  const T scale = T(1) / std::sqrt(T(d));
  for (int b = 0; b < B; ++b) {
    const int n = lengths[b];
    const T* seq = qkv + size_t(b) * Tn * 3 * C;
    for (int t = n; t < Tn; ++t) std::fill_n(out + (size_t(b) * Tn + t) * C, C, T(0));
    for (int h = 0; h < H; ++h) {
      StridedView<const T> q(seq + h * d, n, d, Stride(3 * C)), k(seq + C + h * d, n, d, Stride(3 * C)),
          v(seq + 2 * C + h * d, n, d, Stride(3 * C));
      T* a_bh = att + (size_t(b) * H + h) * Tn * Tn;
      std::fill_n(a_bh, size_t(Tn) * Tn, T(0));
      StridedView<T> a(a_bh, n, n, Stride(Tn));
      a.noalias() = (q * k.transpose()) * scale;
      masked_softmax_rows(a_bh, n, Tn, causal);
      StridedView<T>(out + size_t(b) * Tn * C + h * d, n, d, Stride(C)).noalias() = a * v;
    }
  }
}
// scratch (T*T) holds one head's dL/d(att).
template <class T>
void attention_backward(T* dqkv, T* scratch, const T* dout, const T* qkv, const T* att, const int* lengths,
                        bool causal, int B, int Tn, int C, int H) {
  (void)causal;  // the masked weights are zero in att, and so are their gradients
  const int d = C / H;
  const T scale = T(1) / std::sqrt(T(d));
  for (int b = 0; b < B; ++b) {
    const int n = lengths[b];
    const T* seq = qkv + size_t(b) * Tn * 3 * C;
    T* dseq = dqkv + size_t(b) * Tn * 3 * C;
    std::fill(dseq + size_t(n) * 3 * C, dseq + size_t(Tn) * 3 * C, T(0));  // padded rows
    for (int h = 0; h < H; ++h) {
      StridedView<const T> q(seq + h * d, n, d, Stride(3 * C)), k(seq + C + h * d, n, d, Stride(3 * C)),
          v(seq + 2 * C + h * d, n, d, Stride(3 * C));
      StridedView<T> dq(dseq + h * d, n, d, Stride(3 * C)), dk(dseq + C + h * d, n, d, Stride(3 * C)),
          dv(dseq + 2 * C + h * d, n, d, Stride(3 * C));
      StridedView<const T> a(att + (size_t(b) * H + h) * Tn * Tn, n, n, Stride(Tn));
      StridedView<const T> dy(dout + size_t(b) * Tn * C + h * d, n, d, Stride(C));
      StridedView<T> ds(scratch, n, n, Stride(n));
      // out = a v: dv = a^T dy, da = dy v^T
      if constexpr (std::is_same_v<T, float>) {  // runtime/gemm.hpp's kernel
        gemm_strided_tn(dv.data(), 3 * C, a.data(), Tn, dy.data(), C, n, n, d, false);
        gemm_strided_nt(ds.data(), n, dy.data(), C, v.data(), 3 * C, n, d, n);
      } else {
        dv.noalias() = a.transpose() * dy;
        ds.noalias() = dy * v.transpose();
      }
      // softmax: ds = a (da - sum_j a_j da_j), times the score scale
      for (int t = 0; t < n; ++t) {
        const T dot = a.row(t).dot(ds.row(t));
        ds.row(t) = (a.row(t).array() * (ds.row(t).array() - dot) * scale).matrix();
      }
      // score = q . k: dq = ds k, dk = ds^T q
      if constexpr (std::is_same_v<T, float>) {
        gemm_strided(dq.data(), 3 * C, ds.data(), n, k.data(), 3 * C, n, n, d, false);
        gemm_strided_tn(dk.data(), 3 * C, ds.data(), n, q.data(), 3 * C, n, n, d, false);
      } else {
        dq.noalias() = ds * k;
        dk.noalias() = ds.transpose() * q;
      }
    }
  }
}

// --- activations ---------------------------------------------------------------------------------------

// GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); in float the runtime's kernel
// (runtime/vector_ops.hpp), in double Eigen's vectorised tanh (glibc's scalar tanhf, and then a
// scalar expf, were a third and a tenth of a step). th (n) keeps the tanh for the backward, which
// would otherwise compute it again.
template <class T>
void gelu_forward(T* out, T* th, const T* inp, size_t n) {
  if constexpr (std::is_same_v<T, float>) return gelu_n(out, th, inp, n);
  const T k = std::sqrt(T(2) / T(M_PI));
  ConstArrayView<T> x(inp, Eigen::Index(n));
  ArrayView<T> t(th, Eigen::Index(n));
  t = (k * (x + T(0.044715) * x.cube())).tanh();
  ArrayView<T>(out, Eigen::Index(n)) = T(0.5) * x * (T(1) + t);
}
template <class T>
void gelu_backward(T* dinp, const T* inp, const T* th, const T* dout, size_t n) {
  const T k = std::sqrt(T(2) / T(M_PI));
  ConstArrayView<T> x(inp, Eigen::Index(n)), t(th, Eigen::Index(n)), d(dout, Eigen::Index(n));
  ArrayView<T>(dinp, Eigen::Index(n)) =
      (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t.square()) * k * (T(1) + T(3 * 0.044715) * x.square())) * d;
}
template <class T>
void relu_forward(T* out, const T* inp, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] > 0 ? inp[i] : T(0);
}
template <class T>
void relu_backward(T* dinp, const T* inp, const T* dout, size_t n) {
  for (size_t i = 0; i < n; ++i) dinp[i] = inp[i] > 0 ? dout[i] : T(0);
}

// --- residual ------------------------------------------------------------------------------------------

// out = a + b (n)
template <class T>
void residual_forward(T* out, const T* a, const T* b, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
// The backward of out = a + b is da = db = dout: the network passes dout on as both (no op).

// --- tied unembedding --------------------------------------------------------------------------------

// logits (N,V) = x (N,C) . wte^T (C,V)
template <class T>
void unembed_forward(T* logits, const T* x, const T* wte, int N, int C, int V) {
  if constexpr (std::is_same_v<T, float>)
    gemm_nt(logits, x, wte, N, C, V);
  else
    MatrixView<T>(logits, N, V).noalias() = ConstMatrixView<T>(x, N, C) * ConstMatrixView<T>(wte, V, C).transpose();
}
template <class T>
void unembed_backward(T* dx, T* dwte, const T* dlogits, const T* x, const T* wte, int N, int C, int V) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_nn(dx, dlogits, wte, N, V, C, false);
    gemm_tn(dwte, dlogits, x, N, V, C);
  } else {
    ConstMatrixView<T> d(dlogits, N, V);
    MatrixView<T>(dx, N, C).noalias() = d * ConstMatrixView<T>(wte, V, C);
    MatrixView<T>(dwte, V, C).noalias() += d.transpose() * ConstMatrixView<T>(x, N, C);
  }
}

// --- cross-entropy with per-position masks --------------------------------------------------------------

// probs (N,V) = softmax(logits); the loss is the mean of -log probs[target] over the positions whose
// target is >= 0 (a negative target masks the position out). Returns that mean (0 when none count).
template <class T>
T crossentropy_forward(T* probs, const T* logits, const int* targets, int N, int V) {
  T total = 0;
  int counted = 0;
  for (int i = 0; i < N; ++i) {
    const T* l = logits + size_t(i) * V;
    T* p = probs + size_t(i) * V;
    ConstArrayView<T> row(l, V);
    ArrayView<T> prob(p, V);
    const T best = row.maxCoeff();
    prob = (row - best).exp();  // Eigen's vectorised exp (the scalar one was 3% of a step)
    const T sum = prob.sum();
    prob /= sum;
    if (targets[i] >= 0) {
      // log-sum-exp form: no log(0) when a probability underflows
      total += std::log(sum) - (l[targets[i]] - best);
      ++counted;
    }
  }
  return counted ? total / counted : T(0);
}
// The positions whose target counts (>= 0).
inline int counted_targets(const int* targets, int N) {
  int counted = 0;
  for (int i = 0; i < N; ++i) counted += targets[i] >= 0;
  return counted;
}
// dlogits (N,V) = (probs - onehot(target)) / counted, zero at masked positions; counted is the
// whole batch's (these N rows may be a part of it).
template <class T>
void crossentropy_backward(T* dlogits, const T* probs, const int* targets, int N, int V, int counted) {
  const T inv = counted ? T(1) / counted : T(0);
  for (int i = 0; i < N; ++i) {
    T* d = dlogits + size_t(i) * V;
    const T* p = probs + size_t(i) * V;
    if (targets[i] < 0) {
      for (int v = 0; v < V; ++v) d[v] = 0;
      continue;
    }
    for (int v = 0; v < V; ++v) d[v] = p[v] * inv;
    d[targets[i]] -= inv;
  }
}

}  // namespace raspc::ops
