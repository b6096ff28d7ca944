#include "runtime/gemm.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace raspc {

// Named, inside the anonymous namespace: the unity build compiles this file with others of runtime/.
namespace {
namespace gemm_kernel {

// Eigen's widest float packet for the target (16 lanes with AVX-512, 8 with AVX, 4 with SSE) and
// its multiply-add (fused where the target has FMA).
using Packet = Eigen::internal::packet_traits<float>::type;
// (g++ warns that a vector type's alignment attribute is dropped in a template argument; Eigen's
// own packet code does the same, and nothing here depends on it.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
constexpr int kLanes = Eigen::internal::unpacket_traits<Packet>::size;
#pragma GCC diagnostic pop
// A register block: kRows rows times kPanel packets of columns, plus the panel's packets and a
// broadcast, within the target's vector registers (32 with AVX-512, 16 below).
constexpr int kRows = kLanes == 16 ? 6 : 4;
constexpr int kPanel = kLanes == 16 ? 4 : 2;
// The inner dimension in blocks of kDepth: a panel of b (kDepth x kPanel*kLanes floats, 32 KB with
// AVX-512) stays in L1 while every row block of the output passes over it.
constexpr int kDepth = 128;

// out[R rows, P packets] (+)= a[R rows, K] . b[K, P packets], a's entry (r, k) at a[r * ars + k * acs]
// (a itself, or the transpose of a row-major matrix without copying it).
template <int R, int P>
void block(float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int K, bool accumulate) {
  using Eigen::internal::pmadd;
  using Eigen::internal::pset1;
  using Eigen::internal::ploadu;
  Packet acc[R][P];
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < P; ++p)
      acc[r][p] = accumulate ? ploadu<Packet>(out + size_t(r) * ldo + p * kLanes) : pset1<Packet>(0.0f);
  for (int k = 0; k < K; ++k) {
    Packet bk[P];
    for (int p = 0; p < P; ++p) bk[p] = ploadu<Packet>(b + size_t(k) * ldb + p * kLanes);
    for (int r = 0; r < R; ++r) {
      const Packet ar = pset1<Packet>(a[size_t(r) * ars + size_t(k) * acs]);
      for (int p = 0; p < P; ++p) acc[r][p] = pmadd(ar, bk[p], acc[r][p]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < P; ++p) Eigen::internal::pstoreu(out + size_t(r) * ldo + p * kLanes, acc[r][p]);
}

using BlockFunction = void (*)(float*, int, const float*, int, int, const float*, int, int, bool);

template <int P, int... R>
constexpr std::array<BlockFunction, sizeof...(R)> blocks_of(std::integer_sequence<int, R...>) {
  return {&block<R + 1, P>...};
}

// blocks[P - 1][R - 1]
template <int... P>
constexpr auto all_blocks(std::integer_sequence<int, P...>) {
  return std::array<std::array<BlockFunction, kRows>, sizeof...(P)>{
      blocks_of<P + 1>(std::make_integer_sequence<int, kRows>())...};
}
constexpr auto kBlocks = all_blocks(std::make_integer_sequence<int, kPanel>());

// out (N,M) (+)= a (N,K) . b (K,M), a's entry (n, k) at a[n * ars + k * acs], b's rows ldb apart.
void product(float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int N, int K, int M,
             bool accumulate) {
  if (K == 0) {
    if (!accumulate)
      for (int n = 0; n < N; ++n) std::fill_n(out + size_t(n) * ldo, M, 0.0f);
    return;
  }
  const int whole = M / kLanes * kLanes;
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    const int depth = std::min(kDepth, K - k0);
    const bool add = accumulate || k0 > 0;
    for (int j = 0; j < whole;) {
      const int packets = std::min(kPanel, (whole - j) / kLanes);
      const auto& by_rows = kBlocks[size_t(packets - 1)];
      for (int r = 0; r < N; r += kRows) {
        const int rows = std::min(kRows, N - r);
        by_rows[size_t(rows - 1)](out + size_t(r) * ldo + j, ldo, a + size_t(r) * ars + size_t(k0) * acs, ars, acs,
                                  b + size_t(k0) * ldb + j, ldb, depth, add);
      }
      j += packets * kLanes;
    }
    if (whole == M) continue;
    // The columns past the last whole packet: b's depth x tail block padded with zeros to a packet,
    // and each row block's out likewise, on the stack; the padding's products are thrown away.
    const int tail = M - whole;
    alignas(64) float panel[kDepth * kLanes];
    for (int k = 0; k < depth; ++k)
      for (int c = 0; c < kLanes; ++c) panel[k * kLanes + c] = c < tail ? b[size_t(k0 + k) * ldb + whole + c] : 0.0f;
    alignas(64) float part[kRows * kLanes];
    for (int r = 0; r < N; r += kRows) {
      const int rows = std::min(kRows, N - r);
      for (int i = 0; i < rows; ++i)
        for (int c = 0; c < kLanes; ++c) part[i * kLanes + c] = add && c < tail ? out[size_t(r + i) * ldo + whole + c] : 0.0f;
      kBlocks[0][size_t(rows - 1)](part, kLanes, a + size_t(r) * ars + size_t(k0) * acs, ars, acs, panel, kLanes, depth,
                                   add);
      for (int i = 0; i < rows; ++i) std::copy_n(part + i * kLanes, tail, out + size_t(r + i) * ldo + whole);
    }
  }
}

// to (cols, rows) = from (rows, cols)^T, into a buffer of the calling thread's that only grows.
const float* transposed(const float* from, int rows, int cols) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < size_t(rows) * cols) buffer.resize(size_t(rows) * cols);
  Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(buffer.data(), cols, rows) =
      Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(from, rows, cols)
          .transpose();
  return buffer.data();
}

}  // namespace gemm_kernel
}  // namespace

using gemm_kernel::product;
using gemm_kernel::transposed;

void gemm_nn(float* out, const float* a, const float* b, int N, int K, int M, bool accumulate) {
  product(out, M, a, K, 1, b, M, N, K, M, accumulate);
}

void gemm_nt(float* out, const float* d, const float* w, int N, int M, int K) {
  product(out, K, d, M, 1, transposed(w, K, M), K, N, M, K, false);
}

void gemm_tn(float* out, const float* a, const float* d, int N, int K, int M) {
  product(out, M, a, 1, K, d, M, K, N, M, true);
}

}  // namespace raspc
