#include "runtime/vector_ops.hpp"

#include "runtime/kernel_table.hpp"

namespace raspc {

void gelu_n(float* out, const float* in, size_t n) { kernel_detail::kernels().gelu(out, nullptr, in, n); }

void gelu_n(float* out, float* th, const float* in, size_t n) { kernel_detail::kernels().gelu(out, th, in, n); }

void softmax_rows(float* p, int n, int stride, int keys, bool causal, float scale) {
  kernel_detail::kernels().softmax_rows(p, n, stride, keys, causal, scale);
}

void layernorm_statistics(const float* x, int N, int C, float epsilon, float* mean, float* rstd) {
  kernel_detail::kernels().layernorm_statistics(x, N, C, epsilon, mean, rstd);
}

void layernorm_rows(float* out, float* mean, float* rstd, const float* x, const float* gain, const float* bias, int N,
                    int C, float epsilon) {
  kernel_detail::kernels().layernorm_rows(out, mean, rstd, x, gain, bias, N, C, epsilon);
}

}  // namespace raspc
