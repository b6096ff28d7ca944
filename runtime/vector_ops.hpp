// The elementwise steps of the CPU forward, compiled with the product for each instruction set and
// dispatched with it (runtime/gemm.hpp: the best the CPU runs, capped by RASPC_MAX_ISA), so a
// portable build and the Python module run them as wide as a -march=native build.
//
// Each row (or, for GELU, each element) takes the same operations wherever it lies in memory and
// whatever surrounds it: a sequence's activations have the same bits alone, in a batch and on any
// thread count. The instruction set changes the last bits. runtime/vector_kernel.hpp has the code.
#pragma once

#include <cstddef>

namespace raspc {

// GELU, tanh form, elementwise (out may be in): exactly x where tanh rounds to 1 in float and
// exactly 0 where it rounds to -1.
void gelu_n(float* out, const float* in, size_t n);
// The same, and tanh(sqrt(2/pi) (x + 0.044715 x^3)) into th (n): what GELU's backward reads.
void gelu_n(float* out, float* th, const float* in, size_t n);
// Rows t < n of p, `stride` floats apart: row t = softmax(scale * row t) over its first `keys`
// entries, or with causal over keys - n + 1 + t (a query's keys up to its own position); the rest of
// the `keys` entries set to 0.
void softmax_rows(float* p, int n, int stride, int keys, bool causal, float scale);
// N rows of C: each row's mean and 1 / sqrt(variance + epsilon) into mean and rstd (N).
void layernorm_statistics(const float* x, int N, int C, float epsilon, float* mean, float* rstd);
// N rows of C: out = (x - mean) * rstd * gain + bias, with each row's statistics as above, also
// written to mean and rstd (N) when they are not null.
void layernorm_rows(float* out, float* mean, float* rstd, const float* x, const float* gain, const float* bias, int N,
                    int C, float epsilon);

}  // namespace raspc
