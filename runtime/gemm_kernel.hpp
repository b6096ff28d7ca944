// The register-blocked float product of runtime/gemm.hpp, written once over an instruction set's
// vector operations and compiled three times (kernels_avx512.cpp, kernels_avx2.cpp,
// kernels_generic.cpp), each with its own target flags; runtime/gemm.cpp picks one at run time from
// the CPU's features (runtime/kernel_table.hpp).
//
// Only for those three files, each of which defines `struct Isa` (in an anonymous namespace) before
// including this. Everything here is in an anonymous namespace too, and the AVX files
// include nothing but <immintrin.h> (not even runtime/gemm.hpp, which brings <string>): an inline
// function of external linkage (std::min, std::fill_n, an Eigen packet op) compiled with -mavx512f
// in one file and plainly in another is one symbol to the linker, which may keep the AVX-512 copy
// for every caller, and a machine without AVX-512 would then die of an illegal instruction in code
// that was meant to be portable.
//
// The kernel: a block of Isa::kRows rows times a panel of Isa::kPanel packets of columns of the
// output (or, where the output is wide enough, Isa::kWideRows rows times Isa::kWidePanel packets)
// stays in registers across the inner dimension; `b`'s panel is read in place (it stays in L1/L2
// while every row block passes) and `a`'s entries are broadcast from memory. Each output entry is
// one multiply-add chain over k in increasing order, started from the output's old value
// (accumulate) or zero, so a row's result depends on that row alone, never on N, M, the tile that
// computed it or the rows around. An Isa with one tile gives its numbers twice.
#pragma once

#include <cstddef>

namespace raspc {
namespace {
namespace gemm_kernel {

using Vec = Isa::Vec;
constexpr int kLanes = Isa::kLanes;
// The inner dimension in blocks of kDepth: a panel of b (kDepth x kPanel*kLanes floats, 32 KB with
// AVX-512) stays in L1 while every row block of the output passes over it.
constexpr int kDepth = 128;

inline int smaller(int x, int y) { return x < y ? x : y; }

// A panel of b is copied into consecutive rows where at least this many rows of the output pass
// over it: the copy costs about what one block of rows reads of the panel, and measured on an Intel
// Xeon it paid from a dozen blocks of 6 rows (the square 512 product and the forward's 1,024-row
// ones: 135 -> 170 and 156 -> 177 GFLOP/s with AVX-512) but cost a tenth of the backward's a^T . d
// over 64 rows (a fifth with AVX2's 4-row tiles, had the threshold followed their height).
constexpr int kPackRows = 72;
constexpr int kMostPackets = Isa::kWidePanel > Isa::kPanel ? Isa::kWidePanel : Isa::kPanel;

// The rows of a tile of `packets` packets: the wide tile's where it is that wide, else the narrow one's.
constexpr int rows_of_tile(int packets) { return packets > Isa::kPanel ? Isa::kWideRows : Isa::kRows; }

// How many packets the next panel covers, `left` whole packets remaining: a wide one where it fits
// and does not leave a single packet that two narrow panels would have shared (AVX2: 4 packets as
// 2 + 2, not 3 + 1, whose last panel would run 4-row blocks of one packet); else a narrow one.
constexpr int panel_packets(int left) {
  if (Isa::kWidePanel > Isa::kPanel && left >= Isa::kWidePanel && left - Isa::kWidePanel != 1)
    return Isa::kWidePanel;
  return left < Isa::kPanel ? left : Isa::kPanel;
}

// Where a chain starts: the output's old value (accumulate), the bias, their sum (one rounding, as
// adding the bias first would give), or zero.
inline Vec start(const float* out, bool accumulate, const float* bias) {
  if (bias) return accumulate ? Isa::load(out) + Isa::load(bias) : Isa::load(bias);
  return accumulate ? Isa::load(out) : Isa::zero();
}
inline Vec start_partial(const float* out, bool accumulate, const float* bias, int width) {
  if (bias)
    return accumulate ? Isa::load_partial(out, width) + Isa::load_partial(bias, width) : Isa::load_partial(bias, width);
  return accumulate ? Isa::load_partial(out, width) : Isa::zero();
}

// out[R rows, P packets] (+)= a[R rows, K] . b[K, P packets], a's entry (r, k) at a[r * ars + k * acs]
// (a itself, or the transpose of a row-major matrix without copying it).
template <int R, int P>
void block(float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int K, bool accumulate,
           const float* bias) {
  Vec acc[R][P];
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < P; ++p)
      acc[r][p] = start(out + size_t(r) * ldo + p * kLanes, accumulate, bias ? bias + p * kLanes : nullptr);
  // Four k steps a loop turn: the loop's own counter, pointer and compare instructions otherwise
  // take ports the multiply-adds need (measured 2-5% on every product, both AVX kernels).
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) {
    Vec bk[P];
    for (int p = 0; p < P; ++p) bk[p] = Isa::load(b + size_t(k) * ldb + p * kLanes);
    for (int r = 0; r < R; ++r) {
      const Vec ar = Isa::broadcast(a[size_t(r) * ars + size_t(k) * acs]);
      for (int p = 0; p < P; ++p) acc[r][p] = Isa::madd(ar, bk[p], acc[r][p]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int p = 0; p < P; ++p) Isa::store(out + size_t(r) * ldo + p * kLanes, acc[r][p]);
}

// out[R rows, `width` < kLanes columns] (+)= a[R rows, K] . b[K, width]: the columns past the last
// whole packet, read and written with the instruction set's partial loads and stores, each entry
// the same multiply-add chain as in a whole packet.
template <int R>
void partial_block(float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int K,
                   bool accumulate, const float* bias, int width) {
  Vec acc[R];
  for (int r = 0; r < R; ++r) acc[r] = start_partial(out + size_t(r) * ldo, accumulate, bias, width);
  for (int k = 0; k < K; ++k) {
    const Vec bk = Isa::load_partial(b + size_t(k) * ldb, width);
    for (int r = 0; r < R; ++r) acc[r] = Isa::madd(Isa::broadcast(a[size_t(r) * ars + size_t(k) * acs]), bk, acc[r]);
  }
  for (int r = 0; r < R; ++r) Isa::store_partial(out + size_t(r) * ldo, acc[r], width);
}
template <int R = Isa::kRows>
void partial_block_of_rows(int rows, float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb,
                           int K, bool accumulate, const float* bias, int width) {
  if constexpr (R > 1)
    if (rows < R) return partial_block_of_rows<R - 1>(rows, out, ldo, a, ars, acs, b, ldb, K, accumulate, bias, width);
  partial_block<R>(out, ldo, a, ars, acs, b, ldb, K, accumulate, bias, width);
}

// block<rows, packets> for packets in 1..kMostPackets and rows in 1..rows_of_tile(packets), chosen
// at run time.
template <int P, int R = rows_of_tile(P)>
void block_of_rows(int rows, float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int K,
                   bool accumulate, const float* bias) {
  if constexpr (R > 1)
    if (rows < R) return block_of_rows<P, R - 1>(rows, out, ldo, a, ars, acs, b, ldb, K, accumulate, bias);
  block<R, P>(out, ldo, a, ars, acs, b, ldb, K, accumulate, bias);
}
template <int P = kMostPackets>
void block_of(int packets, int rows, float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb,
              int K, bool accumulate, const float* bias) {
  if constexpr (P > 1)
    if (packets < P) return block_of<P - 1>(packets, rows, out, ldo, a, ars, acs, b, ldb, K, accumulate, bias);
  block_of_rows<P>(rows, out, ldo, a, ars, acs, b, ldb, K, accumulate, bias);
}

// out (N,M) (+)= bias + a (N,K) . b (K,M), a's entry (n, k) at a[n * ars + k * acs], b's rows ldb
// apart, bias (M) or nullptr.
void product(float* out, int ldo, const float* a, int ars, int acs, const float* b, int ldb, int N, int K, int M,
             bool accumulate, const float* bias) {
  if (K == 0) {
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < M; ++m) {
        float& o = out[size_t(n) * ldo + m];
        o = bias ? (accumulate ? o + bias[m] : bias[m]) : (accumulate ? o : 0.0f);
      }
    return;
  }
  const int whole = M / kLanes * kLanes;
  // kDepth x kMostPackets packets: 32 KB with AVX-512, on the stack (no thread_local: this is also
  // in the Python module, loaded with dlopen).
  alignas(64) float packed_panel[kDepth * kMostPackets * kLanes];
  for (int k0 = 0; k0 < K; k0 += kDepth) {
    const int depth = smaller(kDepth, K - k0);
    const bool add = accumulate || k0 > 0;
    const float* first_bias = k0 == 0 ? bias : nullptr;  // later depth blocks continue the chains
    for (int j = 0; j < whole;) {
      const int packets = panel_packets((whole - j) / kLanes);
      const int tile_rows = rows_of_tile(packets);
      const float* panel = b + size_t(k0) * ldb + j;
      int panel_ld = ldb;
      if (N >= kPackRows) {
        // Many row blocks pass over this panel: copied once into consecutive rows, it keeps no two
        // of its rows a power-of-two stride apart, where b's rows (256 to 4,096 bytes apart) fall
        // into the same few L1 sets and evict each other. The arithmetic is the same: each output
        // entry is still one multiply-add chain over k, so no row's bits change.
        const int width = packets * kLanes;
        for (int k = 0; k < depth; ++k)
          for (int c = 0; c < width; c += kLanes)
            Isa::store(packed_panel + k * width + c, Isa::load(panel + size_t(k) * ldb + c));
        panel = packed_panel;
        panel_ld = width;
      }
      for (int r = 0; r < N; r += tile_rows)
        block_of(packets, smaller(tile_rows, N - r), out + size_t(r) * ldo + j, ldo,
                 a + size_t(r) * ars + size_t(k0) * acs, ars, acs, panel, panel_ld, depth, add,
                 first_bias ? first_bias + j : nullptr);
      j += packets * kLanes;
    }
    if (whole == M) continue;
    for (int r = 0; r < N; r += Isa::kRows)
      partial_block_of_rows(smaller(Isa::kRows, N - r), out + size_t(r) * ldo + whole, ldo,
                            a + size_t(r) * ars + size_t(k0) * acs, ars, acs, b + size_t(k0) * ldb + whole, ldb, depth,
                            add, first_bias ? first_bias + whole : nullptr, M - whole);
  }
}

}  // namespace gemm_kernel
}  // namespace
}  // namespace raspc
