// The float matrix products of the CPU forward and of the trainer, row-major throughout:
//
//   gemm_nn: out (N,M) (+)= a (N,K) . b (K,M)
//   gemm_nt: out (N,K)   = d (N,M) . w^T, w (K,M)
//   gemm_tn: out (K,M)  += a^T . d, a (N,K), d (N,M)
//
// Why not Eigen's GEMM: the products raspc runs are thin (K and M from 16 to a few hundred, N a
// batch's tokens), where Eigen's packing of both operands and its blocking are a fifth of the
// product's time and its kernel keeps fewer accumulators than the registers hold. These keep a
// block of rows times a panel of columns of the output in registers across the whole inner
// dimension, read `b`'s panel in place (it stays in L1/L2 while every row block passes), and
// broadcast `a`'s entries from memory: no packing and no heap allocation (the decoder's allocation
// test holds gemm_nn to that; gemm_nt transposes w into a buffer of the thread's that only grows).
//
// Each output entry is one multiply-add chain (fused where the target has FMA) over k in
// increasing order, started from the output's old value (accumulate) or zero, so a row's result
// depends on that row alone, never on N or on the rows around it.
#pragma once

namespace raspc {

void gemm_nn(float* out, const float* a, const float* b, int N, int K, int M, bool accumulate);
void gemm_nt(float* out, const float* d, const float* w, int N, int M, int K);
void gemm_tn(float* out, const float* a, const float* d, int N, int K, int M);

}  // namespace raspc
