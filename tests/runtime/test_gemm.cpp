// The float products of runtime/gemm.hpp against a double-precision reference, on shapes that take
// every path: whole register blocks and the rows and packets left over, the wide tiles of a kernel
// that has them (AVX2's 4 x 3 packets, and the 2 + 2 packets it takes instead of 3 + 1: M = 37, 200),
// the columns past the last whole packet, an inner dimension across several depth blocks, and empty
// ones.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <random>
#include <vector>

#include "runtime/gemm.hpp"
#include "tests/runtime/each_kernel.hpp"

using namespace raspc;
using testing::for_each_kernel;

namespace {

struct Shape {
  int N, K, M;
};
const Shape kShapes[] = {{1, 1, 1},   {1, 64, 192}, {5, 7, 15},   {6, 16, 16},  {7, 130, 17},
                         {13, 300, 70}, {83, 300, 70}, {25, 64, 200}, {29, 40, 37}, {544, 64, 64}, {3, 0, 20},  {0, 5, 9}};

std::vector<float> random_values(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// One product's operands for a shape, drawn in this order: a (N,K), b (K,M), an output to start
// from (N,M) and a bias (M).
struct Operands {
  std::vector<float> a, b, start, bias;
};
Operands random_operands(const Shape& s, std::mt19937& rng) {
  Operands o;
  o.a = random_values(size_t(s.N) * s.K, rng);
  o.b = random_values(size_t(s.K) * s.M, rng);
  o.start = random_values(size_t(s.N) * s.M, rng);
  o.bias = random_values(size_t(s.M), rng);
  return o;
}

// A float sum of K products, each rounded once, and a starting value: within K * 2^-24 of the sum
// of the magnitudes of its terms, by the standard bound (gamma_K) on a chain of fused
// multiply-adds; twice that leaves room for the start and the bound's second-order terms.
double allowed(int K, double magnitude) { return 2.0 * (K + 1) * std::ldexp(1.0, -24) * magnitude + 1e-30; }

}  // namespace

TEST_CASE("gemm_nn, gemm_nt and gemm_tn give the double-precision products within float rounding") {
  for_each_kernel([] {
  std::mt19937 rng(7);
  for (const Shape& s : kShapes) {
    INFO("N " << s.N << ", K " << s.K << ", M " << s.M);
    const Operands o = random_operands(s, rng);
    const std::vector<float> &a = o.a, &b = o.b, &start = o.start, &bias = o.bias;
    for (bool accumulate : {false, true})
      for (bool with_bias : {false, true}) {
        std::vector<float> out = start;
        gemm_nn(out.data(), a.data(), b.data(), s.N, s.K, s.M, accumulate, with_bias ? bias.data() : nullptr);
        for (int n = 0; n < s.N; ++n)
          for (int m = 0; m < s.M; ++m) {
            double want = accumulate ? start[size_t(n) * s.M + m] : 0.0, magnitude = std::fabs(want);
            if (with_bias) want += bias[size_t(m)], magnitude += std::fabs(bias[size_t(m)]);
            for (int k = 0; k < s.K; ++k) {
              const double term = double(a[size_t(n) * s.K + k]) * b[size_t(k) * s.M + m];
              want += term;
              magnitude += std::fabs(term);
            }
            INFO("nn, accumulate " << accumulate << ", bias " << with_bias << ", entry " << n << "," << m);
            REQUIRE(std::fabs(out[size_t(n) * s.M + m] - want) <= allowed(s.K, magnitude));
          }
      }
    // gemm_nt: out (N,K) = a (N,K') . w^T with w (M', K'): here d = a (N,K), w = b^T's shape (M,K).
    const std::vector<float> w = random_values(size_t(s.M) * s.K, rng);
    std::vector<float> nt(size_t(s.N) * s.M, 99.0f);
    gemm_nt(nt.data(), a.data(), w.data(), s.N, s.K, s.M);
    for (int n = 0; n < s.N; ++n)
      for (int m = 0; m < s.M; ++m) {
        double want = 0, magnitude = 0;
        for (int k = 0; k < s.K; ++k) {
          const double term = double(a[size_t(n) * s.K + k]) * w[size_t(m) * s.K + k];
          want += term;
          magnitude += std::fabs(term);
        }
        INFO("nt, entry " << n << "," << m);
        REQUIRE(std::fabs(nt[size_t(n) * s.M + m] - want) <= allowed(s.K, magnitude));
      }
    // gemm_tn: out (K,M) += a^T (K,N) . d (N,M)
    const std::vector<float> d = random_values(size_t(s.N) * s.M, rng), before = random_values(size_t(s.K) * s.M, rng);
    std::vector<float> tn = before;
    gemm_tn(tn.data(), a.data(), d.data(), s.N, s.K, s.M);
    for (int k = 0; k < s.K; ++k)
      for (int m = 0; m < s.M; ++m) {
        double want = before[size_t(k) * s.M + m], magnitude = std::fabs(want);
        for (int n = 0; n < s.N; ++n) {
          const double term = double(a[size_t(n) * s.K + k]) * d[size_t(n) * s.M + m];
          want += term;
          magnitude += std::fabs(term);
        }
        INFO("tn, entry " << k << "," << m);
        REQUIRE(std::fabs(tn[size_t(k) * s.M + m] - want) <= allowed(s.N, magnitude));
      }
  }
  });
}

// gemm_strided, gemm_strided_nt and gemm_strided_tn read and write blocks of larger arrays (a
// head's columns of a sequence's q|k|v): the block's entries, and nothing around them, which keeps
// its own values.
TEST_CASE("the strided products give the double-precision products of blocks inside larger arrays") {
  for_each_kernel([] {
    std::mt19937 rng(11);
    for (const Shape& s : {Shape{9, 16, 9}, Shape{16, 9, 16}, Shape{7, 33, 20}, Shape{1, 5, 3}}) {
      const int lda = s.K + 5, ldb = s.M + 3, ldo = s.M + 7, lda_t = s.N + 4, ldb_t = s.K + 2;
      const std::vector<float> a = random_values(size_t(s.N) * lda, rng), b = random_values(size_t(s.K) * ldb, rng),
                               a_t = random_values(size_t(s.K) * lda_t, rng), b_t = random_values(size_t(s.M) * ldb_t, rng),
                               start = random_values(size_t(s.N) * ldo, rng);
      enum Form { nn, tn, nt };
      for (Form form : {nn, tn, nt})
        for (bool accumulate : {false, true}) {
          if (form == nt && accumulate) continue;  // gemm_strided_nt writes, as gemm_nt
          std::vector<float> out = start;
          if (form == tn)
            gemm_strided_tn(out.data(), ldo, a_t.data(), lda_t, b.data(), ldb, s.N, s.K, s.M, accumulate);
          else if (form == nt)
            gemm_strided_nt(out.data(), ldo, a.data(), lda, b_t.data(), ldb_t, s.N, s.K, s.M);
          else
            gemm_strided(out.data(), ldo, a.data(), lda, b.data(), ldb, s.N, s.K, s.M, accumulate);
          for (int n = 0; n < s.N; ++n)
            for (int m = 0; m < ldo; ++m) {
              const size_t at = size_t(n) * ldo + m;
              INFO((form == tn ? "tn" : form == nt ? "nt" : "nn") << (accumulate ? ", accumulating" : "") << ", entry "
                                                                   << n << "," << m);
              if (m >= s.M) {
                REQUIRE(out[at] == start[at]);  // beyond the block: untouched
                continue;
              }
              double want = accumulate ? start[at] : 0.0, magnitude = std::fabs(want);
              for (int k = 0; k < s.K; ++k) {
                const double left = form == tn ? a_t[size_t(k) * lda_t + n] : a[size_t(n) * lda + k];
                const double right = form == nt ? b_t[size_t(m) * ldb_t + k] : b[size_t(k) * ldb + m];
                const double term = left * right;
                want += term;
                magnitude += std::fabs(term);
              }
              REQUIRE(std::fabs(out[at] - want) <= allowed(s.K, magnitude));
            }
        }
    }
  });
}

// What makes a sequence's logits from the batched forward the same bits in any batch (every other
// step of the forward is a row's or a sequence's own): a row's product does not depend on the rows
// computed with it, whether b's panels are copied (from 12 register blocks of rows: all N = 83 at
// once) or read in place (the 1, 2 and 7 rows alone).
TEST_CASE("gemm_nn gives a row the same bits whatever rows are computed with it") {
  for_each_kernel([] {
  std::mt19937 rng(3);
  const int N = 83, K = 150, M = 83;
  const std::vector<float> a = random_values(size_t(N) * K, rng), b = random_values(size_t(K) * M, rng);
  std::vector<float> all(size_t(N) * M);
  gemm_nn(all.data(), a.data(), b.data(), N, K, M, false);
  for (int first = 0; first < N; first += 5)
    for (int rows : {1, 2, 7}) {
      if (first + rows > N) continue;
      std::vector<float> some(size_t(rows) * M);
      gemm_nn(some.data(), a.data() + size_t(first) * K, b.data(), rows, K, M, false);
      INFO("rows " << first << " to " << first + rows - 1);
      CHECK(std::equal(some.begin(), some.end(), all.begin() + size_t(first) * M));
    }
  });
}

// The forward's bias: started in the product, each entry's chain is the one that adding the bias
// to the output first would start (so the models' outputs did not move when it moved there).
TEST_CASE("gemm_nn with a bias gives the bits of the bias added before the product") {
  for_each_kernel([] {
  std::mt19937 rng(5);
  for (const Shape& s : kShapes) {
    INFO("N " << s.N << ", K " << s.K << ", M " << s.M);
    const Operands o = random_operands(s, rng);
    std::vector<float> fused(o.start.size()), first(o.start.size());
    for (bool accumulate : {false, true}) {
      fused = o.start;
      gemm_nn(fused.data(), o.a.data(), o.b.data(), s.N, s.K, s.M, accumulate, o.bias.data());
      for (size_t i = 0; i < first.size(); ++i) {
        const float b_i = o.bias[i % size_t(s.M)];
        first[i] = accumulate ? o.start[i] + b_i : b_i;
      }
      gemm_nn(first.data(), o.a.data(), o.b.data(), s.N, s.K, s.M, true);
      INFO("accumulate " << accumulate);
      CHECK(std::equal(fused.begin(), fused.end(), first.begin()));
    }
  }
  });
}

TEST_CASE("RASPC_MAX_ISA is checked: a kernel's name or nothing") {
  const char* saved = std::getenv("RASPC_MAX_ISA");
  const std::string restore = saved ? saved : "";
  setenv("RASPC_MAX_ISA", "avx2", 1);
  CHECK(gemm_environment_problem() == "");
  setenv("RASPC_MAX_ISA", "", 1);
  CHECK(gemm_environment_problem() == "");
  setenv("RASPC_MAX_ISA", "sse4", 1);
  CHECK(gemm_environment_problem() == "RASPC_MAX_ISA is 'sse4', which is not one of avx512, avx2 or generic");
  if (saved) setenv("RASPC_MAX_ISA", restore.c_str(), 1);
  else unsetenv("RASPC_MAX_ISA");
}
