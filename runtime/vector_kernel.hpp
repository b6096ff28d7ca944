// The elementwise steps of the CPU forward (runtime/vector_ops.hpp: GELU, a softmax row, LayerNorm),
// written once over an instruction set's vectors with GCC's vector operators and compiled with the
// product in each of runtime/kernels_*.cpp, so a portable build runs them as wide as the CPU allows
// (Eigen's, compiled with the build's own flags, were SSE2 there: 0.6 of a native forward).
// The same rules as runtime/gemm_kernel.hpp: an anonymous namespace, nothing of the standard library.
//
// Each element or row takes the same operations wherever it lies: rows run in whole vectors from
// their first element, the last vector partial (masked loads and stores), and sums and maxima over a
// row add vector by vector, then the lanes in order. So a row's result depends on the row alone,
// never on its address, its neighbours or the thread count; the instruction set changes the last
// bits (lane counts and fused multiply-adds differ).
#pragma once

#include <cstddef>

namespace raspc {
namespace {
namespace vector_kernel {

using Vec = Isa::Vec;
typedef int Ints __attribute__((vector_size(sizeof(Vec))));
constexpr int kLanes = Isa::kLanes;

inline Vec splat(float x) { return Isa::broadcast(x); }
inline Vec bits_as_floats(Ints i) { return (Vec)i; }  // GCC's vector casts keep the bits
inline Ints floats_as_bits(Vec v) { return (Ints)v; }

// v's lanes [0, n), the others `fill`.
inline Vec first_lanes(Vec v, int n, float fill) {
  Ints lane;
  for (int i = 0; i < kLanes; ++i) lane[i] = i;
  return lane < n ? v : splat(fill);
}
// Lanes [0, n) of the vector at p, the others `fill`.
inline Vec load_filled(const float* p, int n, float fill) {
  if (n >= kLanes) return Isa::load(p);
  return first_lanes(Isa::load_partial(p, n), n, fill);
}
inline void store_first(float* p, Vec v, int n) {
  if (n >= kLanes) Isa::store(p, v);
  else Isa::store_partial(p, v, n);
}
// e^x for x in [-87.3, 88], within 1-2 units in the last place: x = n ln 2 + r with |r| <= ln 2 / 2,
// e^r by Cephes' degree-7 polynomial for expf, times 2^n written into the exponent.
inline Vec exp_in_range(Vec x) {
  // Adding 1.5 * 2^23 rounds x / ln 2 to the nearest integer n, which is then the float's low bits.
  const Vec shifter = splat(12582912.0f);
  const Vec shifted = x * splat(1.44269504088896341f) + shifter;
  const Vec n = shifted - shifter;
  // ln 2 in two parts (Cody and Waite), the first with few enough bits that n times it is exact.
  const Vec r = (x - n * splat(0.693359375f)) + n * splat(2.12194440e-4f);
  Vec p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * (r * r) + r + splat(1.0f);
  const Ints two_to_n = (floats_as_bits(shifted) - floats_as_bits(shifter) + 127) << 23;
  return p * bits_as_floats(two_to_n);
}
// e^x for x <= 0: exactly 0 below -87.3, where e^x leaves float's normal range (and at -infinity).
inline Vec exp_nonpositive(Vec x) {
  const Vec lowest = splat(-87.3f);
  const Ints underflows = x < lowest;
  const Vec e = exp_in_range(Isa::max(x, lowest));
  return underflows ? splat(0.0f) : e;
}

// GELU, tanh form: 0.5 x (1 + tanh(y)), y = sqrt(2/pi) (x + 0.044715 x^3), computed as
// x (1 / (1 + e^-2y)) (no cancellation where GELU is small), e^-2y clamped to [e^-18, e^18]. Where
// |y| >= 9 the tanh form rounds tanh to +-1 in float: exactly 0 below (selected), and above,
// 1 + e^-18 rounds to 1, so exactly x. (The compiler's MLPs keep every pre-activation 0 or at least
// 10 from it, where GELU is then ReLU exactly.)
// With th, tanh y = 2 (1 + tanh y) / 2 - 1 too (the trainer's backward reads it).
inline Vec gelu(Vec x, Vec* th = nullptr) {
  // z = -2y = x (-2 sqrt(2/pi) - 2 sqrt(2/pi) 0.044715 x^2)
  const Vec z = x * (splat(-1.5957691216057308f) + splat(-0.07135481627260025f) * (x * x));
  const Vec e = exp_in_range(Isa::min(Isa::max(z, splat(-18.0f)), splat(18.0f)));
  const Vec half_one_plus_tanh = splat(1.0f) / (splat(1.0f) + e);
  const Ints off = z >= splat(18.0f);
  if (th) *th = off ? splat(-1.0f) : splat(2.0f) * half_one_plus_tanh - splat(1.0f);
  return off ? splat(0.0f) : x * half_one_plus_tanh;
}

// out (n) = GELU(in), and with th (not null) tanh y into th (n).
void gelu_n(float* out, float* th, const float* in, size_t n) {
  Vec t;
  Vec* const tanh_out = th ? &t : nullptr;
  for (size_t i = 0; i < n; i += kLanes) {
    const int count = n - i < size_t(kLanes) ? int(n - i) : kLanes;
    store_first(out + i, gelu(load_filled(in + i, count, 0.0f), tanh_out), count);
    if (th) store_first(th + i, t, count);
  }
}

// row[0, keys) = softmax(scale * row[0, keys)); row[keys, width) = 0.
inline void softmax_row(float* row, int keys, int width, float scale) {
  const float negative_infinity = -__builtin_inff();
  const Vec s = splat(scale);
  if (keys <= kLanes) {  // most rows at the lengths compiled models run at: one vector or two
    const Vec v = s * load_filled(row, keys, negative_infinity);
    const Vec e = exp_nonpositive(v - splat(Isa::max_lanes(v)));  // 0 in the lanes past the keys
    store_first(row, e * splat(1.0f / Isa::sum_lanes(e)), keys);
  } else if (keys <= 2 * kLanes) {
    const Vec v0 = s * Isa::load(row), v1 = s * load_filled(row + kLanes, keys - kLanes, negative_infinity);
    const Vec max = splat(Isa::max_lanes(Isa::max(v0, v1)));
    const Vec e0 = exp_nonpositive(v0 - max), e1 = exp_nonpositive(v1 - max);
    const Vec inverse = splat(1.0f / Isa::sum_lanes(e0 + e1));
    Isa::store(row, e0 * inverse);
    store_first(row + kLanes, e1 * inverse, keys - kLanes);
  } else {
    Vec largest = splat(negative_infinity);
    for (int j = 0; j < keys; j += kLanes) {
      const Vec v = s * load_filled(row + j, keys - j, negative_infinity);
      largest = Isa::max(v, largest);
    }
    const Vec max = splat(Isa::max_lanes(largest));
    Vec sum = splat(0.0f);
    for (int j = 0; j < keys; j += kLanes) {
      const Vec e = exp_nonpositive(s * load_filled(row + j, keys - j, negative_infinity) - max);
      sum += e;
      store_first(row + j, e, keys - j);
    }
    const Vec inverse = splat(1.0f / Isa::sum_lanes(sum));
    for (int j = 0; j < keys; j += kLanes) {
      const int n = keys - j;
      store_first(row + j, load_filled(row + j, n, 0.0f) * inverse, n);
    }
  }
  for (int j = keys; j < width; ++j) row[j] = 0.0f;
}

// Rows t < n of p, `stride` apart: row t over its first `keys` entries, or with causal over
// keys - n + 1 + t (the keys up to its own position), the rest of the `keys` zero.
void softmax_rows(float* p, int n, int stride, int keys, bool causal, float scale) {
  auto keys_of = [&](int t) { return causal ? keys - n + 1 + t : keys; };
  const float negative_infinity = -__builtin_inff();
  const Vec s = splat(scale);
  int t = 0;
  // Rows of one vector two at a time, as softmax_row takes them: a row is a chain of dependent
  // steps (maximum, exp, sum, divide), and two side by side let the core overlap them.
  for (; t + 1 < n && keys_of(t + 1) <= kLanes; t += 2) {
    float* row0 = p + size_t(t) * stride;
    float* row1 = row0 + stride;
    const int keys0 = keys_of(t), keys1 = keys_of(t + 1);
    const Vec v0 = s * load_filled(row0, keys0, negative_infinity), v1 = s * load_filled(row1, keys1, negative_infinity);
    const Vec e0 = exp_nonpositive(v0 - splat(Isa::max_lanes(v0)));
    const Vec e1 = exp_nonpositive(v1 - splat(Isa::max_lanes(v1)));
    store_first(row0, e0 * splat(1.0f / Isa::sum_lanes(e0)), keys0);
    store_first(row1, e1 * splat(1.0f / Isa::sum_lanes(e1)), keys1);
    for (int j = keys0; j < keys; ++j) row0[j] = 0.0f;
    for (int j = keys1; j < keys; ++j) row1[j] = 0.0f;
  }
  for (; t < n; ++t) softmax_row(p + size_t(t) * stride, keys_of(t), keys, scale);
}

// A row's mean and 1 / sqrt(variance + epsilon) over its C entries.
inline void layernorm_statistics(const float* x, int C, float epsilon, float* mean, float* rstd) {
  Vec sum = splat(0.0f);
  for (int c = 0; c < C; c += kLanes) sum += load_filled(x + c, C - c, 0.0f);
  const float m = Isa::sum_lanes(sum) / float(C);
  const Vec mv = splat(m);
  Vec squares = splat(0.0f);
  for (int c = 0; c < C; c += kLanes) {
    const Vec d = load_filled(x + c, C - c, m) - mv;
    squares += d * d;
  }
  *mean = m;
  *rstd = 1.0f / __builtin_sqrtf(Isa::sum_lanes(squares) / float(C) + epsilon);
}

// out = (x - mean) * rstd * gain + bias over a row of C.
inline void layernorm_row(float* out, const float* x, const float* gain, const float* bias, int C, float mean, float rstd) {
  const Vec m = splat(mean), s = splat(rstd);
  for (int c = 0; c < C; c += kLanes) {
    const int n = C - c;
    store_first(out + c,
                (load_filled(x + c, n, 0.0f) - m) * s * load_filled(gain + c, n, 0.0f) + load_filled(bias + c, n, 0.0f),
                n);
  }
}

// N rows of C: out = (x - mean) * rstd * gain + bias, the statistics into mean and rstd (N) when
// they are not null.
void layernorm_rows(float* out, float* mean, float* rstd, const float* x, const float* gain, const float* bias, int N,
                    int C, float epsilon) {
  for (int n = 0; n < N; ++n) {
    float m, s;
    layernorm_statistics(x + size_t(n) * C, C, epsilon, &m, &s);
    layernorm_row(out + size_t(n) * C, x + size_t(n) * C, gain, bias, C, m, s);
    if (mean) mean[n] = m;
    if (rstd) rstd[n] = s;
  }
}

}  // namespace vector_kernel
}  // namespace
}  // namespace raspc
