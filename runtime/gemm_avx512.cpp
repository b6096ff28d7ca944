// runtime/gemm_kernel.hpp for AVX-512 (compiled with -mavx512f -mfma; called only where the CPU has
// both): 16 lanes, 32 vector registers, so 6 rows x 4 packets of accumulators (24) plus the
// panel's 4 packets and a broadcast.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace raspc {
namespace {
struct Isa {
  using Vec = __m512;
  static constexpr int kLanes = 16, kRows = 6, kPanel = 4;
  static Vec load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec zero() { return _mm512_setzero_ps(); }
  static Vec broadcast(float x) { return _mm512_set1_ps(x); }
  static Vec madd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  // The first n < 16 lanes (the rest zero on loading, untouched on storing).
  static __mmask16 first(int n) { return __mmask16((1u << n) - 1u); }
  static Vec load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store_partial(float* p, Vec v, int n) { _mm512_mask_storeu_ps(p, first(n), v); }
};
}  // namespace
}  // namespace raspc

#define RASPC_GEMM_PRODUCT product_avx512
#include "runtime/gemm_kernel.hpp"
#endif
