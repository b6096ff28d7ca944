// The CPU kernels compiled once per instruction set: the product (runtime/gemm_kernel.hpp) and the
// elementwise steps of the forward (runtime/vector_kernel.hpp), as one table per instruction set
// (runtime/kernels_avx512.cpp, kernels_avx2.cpp, kernels_generic.cpp). runtime/gemm.cpp chooses the
// table at run time; callers use runtime/gemm.hpp and runtime/vector_ops.hpp, never this.
//
// Nothing here but <cstddef>: the AVX files include this, and an inline function of the standard
// library compiled there with -mavx512f would be one symbol with the plain build's copy
// (runtime/gemm_kernel.hpp says why that matters).
#pragma once

#include <cstddef>

namespace raspc::kernel_detail {

struct KernelTable {
  // out (N,M) (+)= bias + a (N,K) . b (K,M), a's entry (n, k) at a[n * ars + k * acs], b's rows ldb
  // apart, bias (M) or nullptr.
  void (*product)(float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int N, int K, int M,
                  bool accumulate, const float* bias);
  // See runtime/vector_ops.hpp for each.
  void (*gelu)(float* out, float* th, const float* in, size_t n);
  void (*softmax_rows)(float* p, int n, int stride, int keys, bool causal, float scale);
  void (*layernorm_statistics)(const float* x, int N, int C, float epsilon, float* mean, float* rstd);
  void (*layernorm_rows)(float* out, float* mean, float* rstd, const float* x, const float* gain, const float* bias,
                         int N, int C, float epsilon);
};

extern const KernelTable kernels_generic;
#if defined(__x86_64__) || defined(_M_X64)
extern const KernelTable kernels_avx2;
extern const KernelTable kernels_avx512;
#endif

// The table of the instruction set in use (runtime/gemm.hpp's gemm_isa()).
const KernelTable& kernels();

}  // namespace raspc::kernel_detail
