// What the AVX2 and AVX-512 kernel files (runtime/kernels_avx2.cpp, kernels_avx512.cpp) share: the
// sum and the maximum of a 256-bit vector's lanes, halving 8 -> 4 -> 2 -> 1. In an anonymous
// namespace and with nothing but <immintrin.h>, as runtime/gemm_kernel.hpp says why.
#pragma once

#include <immintrin.h>

namespace raspc {
namespace {

inline float sum_lanes_256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

inline float max_lanes_256(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

}  // namespace
}  // namespace raspc
