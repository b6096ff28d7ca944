// The kernels (runtime/kernel_table.hpp) for AVX-512 (compiled with -mavx512f -mfma; called only where the CPU has
// both): 16 lanes, 32 vector registers, so 6 rows x 4 packets of accumulators (24) plus the
// panel's 4 packets and a broadcast.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "runtime/kernel_x86.hpp"

namespace raspc {
namespace {
struct Isa {
  using Vec = __m512;
  static constexpr int kLanes = 16, kRows = 6, kPanel = 4, kWideRows = 6, kWidePanel = 4;
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec madd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  // The first n < 16 lanes (the rest zero on loading, untouched on storing).
  static __mmask16 first(int n) { return __mmask16((1u << n) - 1u); }
  static Vec load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store_partial(float* p, Vec v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
  // The masked forms with every lane set: GCC 12 warns of the plain ones' _mm512_undefined_ps.
  static Vec max(Vec a, Vec b) { return _mm512_mask_max_ps(a, __mmask16(0xFFFF), a, b); }
  static Vec min(Vec a, Vec b) { return _mm512_mask_min_ps(a, __mmask16(0xFFFF), a, b); }
  static Vec sqrt(Vec v) { return _mm512_sqrt_ps(v); }
  // The lanes' sum and maximum, halving: 16 -> 8 -> 4 -> 2 -> 1. (Not with _mm512_reduce_add_ps or
  // _mm512_castps512_ps256, whose use of _mm256_undefined_pd GCC 12 warns of.)
  static __m256 low_half(Vec v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
  static __m256 high_half(Vec v) { return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15); }
  static float sum_lanes(Vec v) { return sum_lanes_256(_mm256_add_ps(low_half(v), high_half(v))); }
  static float max_lanes(Vec v) { return max_lanes_256(_mm256_max_ps(low_half(v), high_half(v))); }
};
}  // namespace
}  // namespace raspc

#define RASPC_KERNEL_TABLE kernels_avx512
#include "runtime/gemm_kernel.hpp"
#include "runtime/vector_kernel.hpp"
#endif
