// The float matrix products of the CPU forward and of the trainer, row-major throughout:
//
//   gemm_nn: out (N,M) (+)= bias + a (N,K) . b (K,M)
//   gemm_nt: out (N,K)   = d (N,M) . w^T, w (K,M)
//   gemm_tn: out (K,M)  += a^T . d, a (N,K), d (N,M)
//
// Why not a BLAS: the products raspc runs are thin (K and M from 16 to a few hundred, N a batch's
// tokens), where a library's packing of both operands is a large part of the product's time; the
// candidates (Eigen, OpenBLAS, BLIS, oneDNN, libxsmm) were measured against this kernel on these
// shapes (bench/RESULTS.md, "GEMM"). The kernel (runtime/gemm_kernel.hpp) keeps a block of rows
// times a panel of columns of the output in registers across the inner dimension; where many rows
// pass over a panel of b it copies the panel into a block on the stack first, and nothing is
// allocated on the heap (the decoder's allocation test holds gemm_nn to that; gemm_nt transposes w
// into a buffer of the thread's that only grows).
//
// It is compiled for AVX-512, for AVX2 with FMA and for any CPU (with runtime/vector_ops.hpp's
// elementwise kernels), and the best one the CPU runs is chosen at the first product (so a portable
// build, RASPC_NATIVE=OFF, and the Python module are as fast as a -march=native one). The environment variable RASPC_MAX_ISA (avx512, avx2 or generic)
// caps the choice: what a machine without AVX-512 would run, measured on one with it.
//
// Each output entry is one multiply-add chain over k in increasing order (fused on AVX2 and
// AVX-512), started from the output's old value (accumulate), the bias, or zero, so a row's result depends on
// that row alone, never on N or on the rows around it. The instruction set changes the last bits.
#pragma once

#include <string>

namespace raspc {

// With a bias (M), each entry's chain starts from bias (or from out + bias): the bias is added in the
// product instead of in a pass of its own over out, with the same bits.
void gemm_nn(float* out, const float* a, const float* b, int N, int K, int M, bool accumulate,
             const float* bias = nullptr);
void gemm_nt(float* out, const float* d, const float* w, int N, int M, int K);
void gemm_tn(float* out, const float* a, const float* d, int N, int K, int M);
// out (N,M) (+)= a (N,K) . b (K,M), each a block of a larger row-major array whose rows lie ldo, lda
// and ldb floats apart (a head's queries in a sequence's (T,3C) q|k|v, its columns of the output).
void gemm_strided(float* out, int ldo, const float* a, int lda, const float* b, int ldb, int N, int K, int M,
                  bool accumulate);
// out (N,M) = a (N,K) . b^T, b (M,K) with rows ldb apart (a head's queries times its keys): b copied
// transposed into a buffer of the thread's, as gemm_nt does (gemm_nt is its contiguous case).
void gemm_strided_nt(float* out, int ldo, const float* a, int lda, const float* b, int ldb, int N, int K, int M);
// out (N,M) (+)= a^T (N,K) . b (K,M), a (K,N) with rows lda apart: gemm_strided of a transposed in
// place (the trainer's attention backward).
void gemm_strided_tn(float* out, int ldo, const float* a, int lda, const float* b, int ldb, int N, int K, int M,
                     bool accumulate);

enum class GemmIsa { Generic, Avx2, Avx512 };
const char* gemm_isa_name(GemmIsa isa);  // "generic", "avx2", "avx512"
// Compiled into this build and run by this CPU (and its operating system).
bool gemm_isa_supported(GemmIsa isa);
// The kernel in use: the best supported one, capped by RASPC_MAX_ISA.
GemmIsa gemm_isa();
// What is wrong with RASPC_MAX_ISA ("" when it is unset or names a kernel). The command line refuses
// such a value before it starts; elsewhere the first product warns once on stderr and ignores it.
std::string gemm_environment_problem();
// Tests and benches: use `isa` from now on, in every thread; an unsupported one is a UserError.
void set_gemm_isa(GemmIsa isa);

}  // namespace raspc
