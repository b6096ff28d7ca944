// The elementwise steps of the CPU forward (runtime/vector_ops.hpp: GELU, a softmax row, LayerNorm),
// written once over an instruction set's vectors with GCC's vector operators and compiled with the
// product in each of runtime/kernels_*.cpp, so a portable build runs them as wide as the CPU allows
// (Eigen's, compiled with the build's own flags, were SSE2 there: 0.6 of a native forward).
// The same rules as runtime/gemm_kernel.hpp: an anonymous namespace, nothing of the standard library.
// Included after runtime/gemm_kernel.hpp, with RASPC_KERNEL_TABLE defined as the name of the table
// this file then defines (kernels_avx512, kernels_avx2 or kernels_generic).
//
// Each element or row takes the same operations wherever it lies: rows run in whole vectors from
// their first element, the last vector partial (masked loads and stores; the softmax stores its last
// floats one at a time, store_exactly), and sums and maxima over a row go vector by vector in a
// fixed order, then over the lanes by halving (Isa::sum_lanes). So a
// row's result depends on the row alone, never on its address, its neighbours or the thread count;
// the instruction set changes the last bits (lane counts and fused multiply-adds differ).
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
// The same, the last n < kLanes floats one at a time: a masked store counts as a whole vector for
// store forwarding, so a load of the floats just past it (the next row's first, where rows lie side
// by side) waits until it completes; a float's store covers its own four bytes (a softmax row of 33
// keys took 56 ns with the masked store, 29 with rows apart).
inline void store_exactly(float* p, Vec v, int n) {
  if (n >= kLanes) return Isa::store(p, v);
  for (int i = 0; i < n; ++i) p[i] = v[i];
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

// One level of the lanes' halving (Isa::sum_lanes) for two vectors at once: in blocks of 2h lanes,
// lane i + h is added to lane i, as sum_lanes pairs them; the results of t's blocks fill the even
// blocks of h lanes, u's the odd ones. Lane `lane` of the result reads lane halving_source of t|u
// (u's lanes numbered from kLanes), and its `upper` partner h further on.
constexpr int halving_source(int h, bool upper, int lane) {
  const int block = lane / h;
  return (block / 2) * 2 * h + lane % h + (upper ? h : 0) + (block % 2 ? kLanes : 0);
}
// The lane of the result of halve_rows that holds row r's value: its bits reversed. Level h puts
// the results of vectors 2i and 2i + 1 in the blocks of h lanes of even and odd index, so the
// lowest bit of the vector's index becomes the lane's bit of weight h; the levels run from h =
// kLanes / 2 down to 1, the vectors' indices halving at each.
constexpr int halved_lane_of_row(int row) {
  int lane = 0;
  for (int h = kLanes / 2; h >= 1; h /= 2, row /= 2) lane += (row % 2) * h;
  return lane;
}
// Lane numbers as a parameter pack: the shuffles take their lanes as constants (the form GCC and
// Clang both accept).
template <int... I>
struct LaneList {};
template <int N, int... I>
struct MakeLaneList : MakeLaneList<N - 1, N - 1, I...> {};
template <int... I>
struct MakeLaneList<0, I...> {
  using type = LaneList<I...>;
};
using AllLanes = typename MakeLaneList<kLanes>::type;

template <int h, int... I>
inline Vec halve_pair(Vec t, Vec u, LaneList<I...>) {
  return __builtin_shufflevector(t, u, halving_source(h, false, I)...) +
         __builtin_shufflevector(t, u, halving_source(h, true, I)...);
}
template <int h>
inline void halve_level(Vec* v) {
  for (int i = 0; i < h; ++i) v[i] = halve_pair<h>(v[2 * i], v[2 * i + 1], AllLanes{});  // 2h vectors into h
  if constexpr (h > 1) halve_level<h / 2>(v);
}
template <int... I>
inline Vec rows_in_order(Vec v, LaneList<I...>) {
  return __builtin_shufflevector(v, v, halved_lane_of_row(I)...);
}
// The sum of each of kLanes vectors' lanes, lane r of the result row r's: the same pairs in the
// same order as Isa::sum_lanes of each, so the same bits, in kLanes - 1 shuffled pairs where one
// row alone takes log2(kLanes) dependent steps. v is overwritten.
__attribute__((always_inline)) inline Vec halve_rows(Vec* v) {
  halve_level<kLanes / 2>(v);
  return rows_in_order(v[0], AllLanes{});
}

// row[0, keys) = softmax(scale * row[0, keys)); row[keys, width) = 0, for a row of NV vectors
// ((NV - 1) kLanes < keys <= NV kLanes), held in registers from the load to the store (a row
// stored and read back through partial vectors waited on the store).
template <int NV>
inline void softmax_short_row(float* row, int keys, int width, Vec scale) {
  Vec v[NV];
  for (int i = 0; i < NV; ++i) v[i] = scale * load_filled(row + i * kLanes, keys - i * kLanes, -__builtin_inff());
  Vec largest = v[0];
  for (int i = 1; i < NV; ++i) largest = Isa::max(largest, v[i]);
  const Vec max = splat(Isa::max_lanes(largest));
  Vec sum = splat(0.0f);
  for (int i = 0; i < NV; ++i) {
    v[i] = exp_nonpositive(v[i] - max);  // 0 in the lanes past the keys
    sum += v[i];
  }
  const Vec inverse = splat(1.0f / Isa::sum_lanes(sum));
  // Whole vectors as far as the row's width goes: their lanes past the keys hold 0 already (a causal
  // row's first rows would otherwise clear most of the row one float at a time).
  for (int i = 0; i < NV; ++i)
    if (const int reach = width - i * kLanes; reach > 0) store_exactly(row + i * kLanes, v[i] * inverse, reach);
  for (int j = NV * kLanes; j < width; j += kLanes) store_exactly(row + j, splat(0.0f), width - j);
}

// The same for a row of any length, in three passes over memory.
inline void softmax_long_row(float* row, int keys, int width, Vec scale) {
  const float negative_infinity = -__builtin_inff();
  Vec largest = splat(negative_infinity);
  for (int j = 0; j < keys; j += kLanes)
    largest = Isa::max(largest, scale * load_filled(row + j, keys - j, negative_infinity));
  const Vec max = splat(Isa::max_lanes(largest));
  Vec sum = splat(0.0f), last = sum;
  const int whole = keys / kLanes * kLanes;  // the last, partial vector stays in `last` (store_exactly)
  for (int j = 0; j < keys; j += kLanes) {
    const Vec e = exp_nonpositive(scale * load_filled(row + j, keys - j, negative_infinity) - max);
    sum += e;
    if (j < whole) Isa::store(row + j, e);
    else last = e;
  }
  const Vec inverse = splat(1.0f / Isa::sum_lanes(sum));
  for (int j = 0; j < whole; j += kLanes) Isa::store(row + j, Isa::load(row + j) * inverse);
  if (whole < keys) store_exactly(row + whole, last * inverse, keys - whole);
  for (int j = keys; j < width; j += kLanes) store_exactly(row + j, splat(0.0f), width - j);
}

constexpr int kShortRow = 8;  // vectors: 128 keys with AVX-512, 64 with AVX2

// Rows [first, first + count) of NV vectors each, two side by side: a row is a chain of dependent steps (maximum,
// exp, sum, divide), and two at once let the core overlap them.
template <int NV>
inline void short_rows(float* p, int stride, int first, int count, int keys, int width, Vec scale,
                       int (*keys_of)(int, int, int), int n) {
  int t = first;
  for (; t + 1 < first + count; t += 2) {
    softmax_short_row<NV>(p + size_t(t) * stride, keys_of(t, n, keys), width, scale);
    softmax_short_row<NV>(p + size_t(t + 1) * stride, keys_of(t + 1, n, keys), width, scale);
  }
  if (t < first + count) softmax_short_row<NV>(p + size_t(t) * stride, keys_of(t, n, keys), width, scale);
}

template <int NV = 1>
inline void short_rows_of(int vectors, float* p, int stride, int first, int count, int keys, int width, Vec scale,
                          int (*keys_of)(int, int, int), int n) {
  if constexpr (NV < kShortRow)
    if (vectors > NV) return short_rows_of<NV + 1>(vectors, p, stride, first, count, keys, width, scale, keys_of, n);
  short_rows<NV>(p, stride, first, count, keys, width, scale, keys_of, n);
}

inline int causal_keys(int t, int n, int keys) { return keys - n + 1 + t; }
inline int all_keys(int, int, int keys) { return keys; }

// Rows t < n of p, `stride` apart: row t over its first `keys` entries, or with causal over
// keys - n + 1 + t (the keys up to its own position), the rest of the `keys` zero. Rows of the
// same number of vectors go together (a causal head's rows grow a key a row).
void softmax_rows(float* p, int n, int stride, int keys, bool causal, float scale) {
  int (*const keys_of)(int, int, int) = causal ? &causal_keys : &all_keys;
  const Vec s = splat(scale);
  for (int t = 0; t < n;) {
    const int vectors = (keys_of(t, n, keys) + kLanes - 1) / kLanes;
    if (vectors > kShortRow) {
      softmax_long_row(p + size_t(t) * stride, keys_of(t, n, keys), keys, s);
      ++t;
      continue;
    }
    int end = t + 1;
    while (end < n && (keys_of(end, n, keys) + kLanes - 1) / kLanes == vectors) ++end;
    short_rows_of(vectors, p, stride, t, end - t, keys, keys, s, keys_of, n);
    t = end;
  }
}

// A row's C entries (each minus `shift`, squared when `squares`) summed into one vector over four
// accumulators: vector k of the row into accumulator k mod 4, then (a0 + a1) + (a2 + a3), so a wide
// row's additions are four chains instead of one. Its lanes' sum is the row's.
template <bool squares>
inline Vec row_partial_sum(const float* x, int C, float shift) {
  const Vec m = splat(shift);
  auto term = [&](Vec v) { return squares ? (v - m) * (v - m) : v - m; };
  Vec a0 = splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
  int c = 0;
  for (; c + 4 * kLanes <= C; c += 4 * kLanes) {
    a0 += term(Isa::load(x + c));
    a1 += term(Isa::load(x + c + kLanes));
    a2 += term(Isa::load(x + c + 2 * kLanes));
    a3 += term(Isa::load(x + c + 3 * kLanes));
  }
  // The rest, fewer than 4 kLanes entries: four vectors at most, the last one partial (its other
  // lanes `shift`: a zero term).
  if (c < C) a0 += term(load_filled(x + c, C - c, shift));
  if ((c += kLanes) < C) a1 += term(load_filled(x + c, C - c, shift));
  if ((c += kLanes) < C) a2 += term(load_filled(x + c, C - c, shift));
  if ((c += kLanes) < C) a3 += term(load_filled(x + c, C - c, shift));
  return (a0 + a1) + (a2 + a3);
}

// A row's mean and 1 / sqrt(variance + epsilon) over its C entries.
inline void row_statistics(const float* x, int C, float epsilon, float* mean, float* rstd) {
  const float m = Isa::sum_lanes(row_partial_sum<false>(x, C, 0.0f)) / float(C);
  *mean = m;
  *rstd = 1.0f / __builtin_sqrtf(Isa::sum_lanes(row_partial_sum<true>(x, C, m)) / float(C) + epsilon);
}

// The statistics of rows [0, count) of C (count <= kLanes) into mean and rstd (kLanes each), the
// same bits as row_statistics of each: the rows' sums are halved together (halve_rows), where one
// row at a time is a chain of two halvings, a square root and a division. Fewer than 4 rows (the
// decoder's one) go one at a time, which is then the faster.
inline void group_statistics(const float* x, int count, int C, float epsilon, float* mean, float* rstd) {
  if (count < 4) {
    for (int r = 0; r < count; ++r) row_statistics(x + size_t(r) * C, C, epsilon, mean + r, rstd + r);
    return;
  }
  Vec sums[kLanes];
  for (int r = 0; r < kLanes; ++r) sums[r] = r < count ? row_partial_sum<false>(x + size_t(r) * C, C, 0.0f) : splat(0.0f);
  Isa::store(mean, halve_rows(sums) / splat(float(C)));
  for (int r = 0; r < kLanes; ++r)
    sums[r] = r < count ? row_partial_sum<true>(x + size_t(r) * C, C, mean[r]) : splat(0.0f);
  Isa::store(rstd, splat(1.0f) / Isa::sqrt(halve_rows(sums) / splat(float(C)) + splat(epsilon)));
}

// The statistics of N rows of C, kLanes rows at a time.
void layernorm_statistics(const float* x, int N, int C, float epsilon, float* mean, float* rstd) {
  for (int n = 0; n < N; n += kLanes) {
    const int count = N - n < kLanes ? N - n : kLanes;
    float m[kLanes], s[kLanes];
    group_statistics(x + size_t(n) * C, count, C, epsilon, m, s);
    for (int r = 0; r < count; ++r) mean[n + r] = m[r], rstd[n + r] = s[r];
  }
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
  for (int n = 0; n < N; n += kLanes) {
    const int count = N - n < kLanes ? N - n : kLanes;
    float m[kLanes], s[kLanes];
    group_statistics(x + size_t(n) * C, count, C, epsilon, m, s);
    for (int r = 0; r < count; ++r) {
      layernorm_row(out + size_t(n + r) * C, x + size_t(n + r) * C, gain, bias, C, m[r], s[r]);
      if (mean) mean[n + r] = m[r];
      if (rstd) rstd[n + r] = s[r];
    }
  }
}

}  // namespace vector_kernel
}  // namespace
}  // namespace raspc

// This instruction set's table (runtime/kernel_table.hpp), named by the including file.
#include "runtime/kernel_table.hpp"

namespace raspc::kernel_detail {
extern const KernelTable RASPC_KERNEL_TABLE = {&gemm_kernel::product, &vector_kernel::gelu_n, &vector_kernel::softmax_rows,
                                               &vector_kernel::layernorm_statistics, &vector_kernel::layernorm_rows};
}  // namespace raspc::kernel_detail
