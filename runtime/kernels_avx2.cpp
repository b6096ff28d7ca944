// The kernels (runtime/kernel_table.hpp) for AVX2 with FMA (compiled with -mavx2 -mfma; called only where the CPU
// has both): 8 lanes, 16 vector registers, so 6 rows x 2 packets of accumulators (12) plus the
// panel's 2 packets and a broadcast; where the output has 3 packets or more to cover, 4 rows x 3
// packets (12, and 3 packets and a broadcast: all 16 registers), whose 7 loads a k step (3 of the
// panel, 4 broadcasts) against 6 x 2's 8 made the wide products 3-7% faster on an Intel Xeon (the
// forward's, the backward's, the verification's; 512^3), while 1 or 2 packets keep 6-row blocks:
// 4-row blocks of them were up to a fifth slower (an attention's p . v over 9 columns).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "runtime/kernel_x86.hpp"

namespace raspc {
namespace {
struct Isa {
  using Vec = __m256;
  static constexpr int kLanes = 8, kRows = 6, kPanel = 2, kWideRows = 4, kWidePanel = 3;
  static Vec load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec zero() { return _mm256_setzero_ps(); }
  static Vec broadcast(float x) { return _mm256_set1_ps(x); }
  static Vec madd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  // The first n < 8 lanes (the rest zero on loading, untouched on storing).
  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec load_partial(const float* p, int n) { return _mm256_maskload_ps(p, first(n)); }
  static void store_partial(float* p, Vec v, int n) { _mm256_maskstore_ps(p, first(n), v); }
  static Vec max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec sqrt(Vec v) { return _mm256_sqrt_ps(v); }
  // The lanes' sum and maximum, halving: 8 -> 4 -> 2 -> 1.
  static float sum_lanes(Vec v) { return sum_lanes_256(v); }
  static float max_lanes(Vec v) { return max_lanes_256(v); }
};
}  // namespace
}  // namespace raspc

#define RASPC_KERNEL_TABLE kernels_avx2
#include "runtime/gemm_kernel.hpp"
#include "runtime/vector_kernel.hpp"
#endif
