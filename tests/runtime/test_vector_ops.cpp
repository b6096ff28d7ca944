// The elementwise kernels of runtime/vector_ops.hpp (GELU, the softmax rows, LayerNorm) on every
// instruction set this CPU runs: against double precision, exactly where the compiler relies on
// exactness, and with the same bits wherever a row lies in memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "runtime/vector_ops.hpp"
#include "tests/runtime/each_kernel.hpp"

using namespace raspc;
using testing::for_each_kernel;

namespace {

double gelu_reference(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

std::vector<float> random_values(size_t n, float spread, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-spread, spread);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

constexpr double kUlp = 1.0 / (1 << 23);  // 2^-23, float's spacing at 1

}  // namespace

TEST_CASE("GELU is the tanh form within float rounding, and exactly ReLU 10 or more from 0") {
  for_each_kernel([] {
    std::vector<float> x;
    for (int i = -24000; i <= 24000; ++i) x.push_back(float(i) / 2000.0f);  // [-12, 12]
    std::vector<float> g(x.size());
    gelu_n(g.data(), x.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = gelu_reference(x[i]);
      // y = sqrt(2/pi) (x + 0.044715 x^3) carries a few units of float rounding, and e^-2y, which
      // GELU is proportional to where it is small, multiplies that relative error by |2y| <= 18:
      // 64 units of the value. And the tanh form itself rounds 1 + tanh y to a multiple of 2^-24
      // (exactly 0 past y = -9, as the kernel gives): half of that times |x| / 2.
      INFO("x = " << x[i] << ": " << g[i] << " against " << want);
      REQUIRE(std::fabs(g[i] - want) <= 64 * kUlp * std::fabs(want) + kUlp / 4 * std::fabs(x[i]));
    }
    // The compiler's MLPs keep every pre-activation 0 or at least 10 from it (compiler/lower_mlp.cpp):
    // there GELU must be ReLU exactly, so a unit that is off writes nothing at all.
    const std::vector<float> exact = {0.0f, 10.0f, -10.0f, 10.5f, -10.5f, 123.25f, -123.25f, 4096.0f, -4096.0f, -1e30f};
    std::vector<float> out(exact.size());
    gelu_n(out.data(), exact.data(), exact.size());
    for (size_t i = 0; i < exact.size(); ++i) {
      INFO("x = " << exact[i]);
      CHECK(out[i] == std::max(exact[i], 0.0f));
    }
  });
}

TEST_CASE("the softmax rows are the double-precision softmax, over each row's keys, zero after them") {
  for_each_kernel([] {
    std::mt19937 rng(6);
    // Rows held in registers (up to 8 vectors) and longer ones, for 4, 8 and 16 lanes.
    for (int keys : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 70, 129, 200})
      for (bool causal : {false, true}) {
        const int n = causal ? keys : 3, stride = keys + 5;
        const float scale = 0.25f;
        std::vector<float> p = random_values(size_t(n) * stride, 40.0f, rng);
        const std::vector<float> before = p;
        softmax_rows(p.data(), n, stride, keys, causal, scale);
        for (int t = 0; t < n; ++t) {
          const int seen = causal ? keys - n + 1 + t : keys;
          const float* in = before.data() + size_t(t) * stride;
          const float* row = p.data() + size_t(t) * stride;
          double max = -INFINITY, sum = 0;
          for (int j = 0; j < seen; ++j) max = std::max(max, double(scale) * in[j]);
          for (int j = 0; j < seen; ++j) sum += std::exp(double(scale) * in[j] - max);
          INFO("keys " << keys << (causal ? ", causal" : "") << ", row " << t);
          for (int j = 0; j < seen; ++j) {
            const double want = std::exp(double(scale) * in[j] - max) / sum;
            // exp within 2 units, its argument's rounding (|argument| <= 20 here: 20 units), the
            // sum's (keys units) and the division: within (keys + 32) units of the weight, and
            // weights below float's normal range may be 0.
            REQUIRE(std::fabs(row[j] - want) <= (keys + 32) * kUlp * want + 1.2e-38);
          }
          for (int j = seen; j < keys; ++j) REQUIRE(row[j] == 0.0f);
          for (int j = keys; j < stride; ++j) REQUIRE(row[j] == in[j]);  // past the keys: untouched
        }
      }
    // A single key weighs exactly 1, and a key 90 below the row's largest exactly 0.
    std::vector<float> one = {3.5f};
    softmax_rows(one.data(), 1, 1, 1, false, 1.0f);
    CHECK(one[0] == 1.0f);
    std::vector<float> far = {0.0f, -90.0f, 0.0f};
    softmax_rows(far.data(), 1, 3, 3, false, 1.0f);
    CHECK(far[1] == 0.0f);
    CHECK(far[0] == 0.5f);
  });
}

TEST_CASE("LayerNorm's rows are the double-precision normalisation, and their statistics are the rows'") {
  for_each_kernel([] {
    std::mt19937 rng(7);
    // Every way a row ends for 4, 8 and 16 lanes: whole blocks of four vectors, then up to three
    // whole vectors and a partial one (15, 31, 61 and 63 leave four vectors after the blocks).
    for (int C : {1, 3, 8, 15, 16, 17, 31, 61, 63, 64, 100, 127}) {
      const int N = 37;  // the statistics go a lane's worth of rows at a time: whole groups and a partial one
      const std::vector<float> x = random_values(size_t(N) * C, 3.0f, rng), gain = random_values(size_t(C), 2.0f, rng),
                               bias = random_values(size_t(C), 1.0f, rng);
      std::vector<float> out(x.size()), mean(N), rstd(N);
      layernorm_rows(out.data(), mean.data(), rstd.data(), x.data(), gain.data(), bias.data(), N, C, 1e-5f);
      for (int n = 0; n < N; ++n) {
        const float* row = x.data() + size_t(n) * C;
        double m = 0, var = 0;
        for (int c = 0; c < C; ++c) m += row[c];
        m /= C;
        for (int c = 0; c < C; ++c) var += (row[c] - m) * (row[c] - m);
        const double s = 1.0 / std::sqrt(var / C + 1e-5);
        float m1, s1;
        layernorm_statistics(row, 1, C, 1e-5f, &m1, &s1);
        INFO("C " << C << ", row " << n);
        CHECK(m1 == mean[size_t(n)]);
        CHECK(s1 == rstd[size_t(n)]);
        // Sums of C terms: within C units of their magnitudes (|x| <= 3), and the normalised
        // entries within a few units of their size times the gain.
        REQUIRE(std::fabs(mean[size_t(n)] - m) <= 2 * C * kUlp * 3.0 + 1e-7);
        REQUIRE(std::fabs(rstd[size_t(n)] - s) <= (2 * C + 8) * kUlp * s);
        for (int c = 0; c < C; ++c) {
          const double want = (row[c] - m) * s * gain[size_t(c)] + bias[size_t(c)];
          REQUIRE(std::fabs(out[size_t(n) * C + c] - want) <=
                  (4 * C + 16) * kUlp * (std::fabs((row[c] - m) * s * gain[size_t(c)]) + std::fabs(bias[size_t(c)]) + 1));
        }
      }
    }
  });
}

// What makes a sequence's activations the same bits alone, in any batch and on any thread count.
TEST_CASE("GELU, a softmax row and a LayerNorm row give the same bits wherever they lie in memory") {
  for_each_kernel([] {
    std::mt19937 rng(4);
    const std::vector<float> in = random_values(301, 8.0f, rng);
    std::vector<float> whole(in.size());
    gelu_n(whole.data(), in.data(), in.size());
    for (size_t first : {1, 2, 5, 15, 16, 17, 33})
      for (size_t count : {1, 3, 16, 31, 200}) {
        std::vector<float> part(count);
        gelu_n(part.data(), in.data() + first, count);
        INFO("GELU of elements " << first << " to " << first + count - 1);
        CHECK(std::equal(part.begin(), part.end(), whole.begin() + long(first)));
      }
    const std::vector<float> gain = random_values(70, 2.0f, rng), bias = random_values(70, 1.0f, rng);
    for (int length : {5, 16, 23, 70}) {
      const std::vector<float> row(in.begin(), in.begin() + length);
      std::vector<float> soft = row, norm(row.size());
      softmax_rows(soft.data(), 1, length, length, false, 0.5f);
      layernorm_rows(norm.data(), nullptr, nullptr, row.data(), gain.data(), bias.data(), 1, length, 1e-5f);
      for (int offset : {1, 3, 8, 13, 16, 17}) {
        std::vector<float> shifted(size_t(offset + length), 0.0f), out(shifted.size());
        std::copy(row.begin(), row.end(), shifted.begin() + offset);
        layernorm_rows(out.data() + offset, nullptr, nullptr, shifted.data() + offset, gain.data(), bias.data(), 1,
                       length, 1e-5f);
        softmax_rows(shifted.data() + offset, 1, length, length, false, 0.5f);
        INFO("a row of " << length << " at offset " << offset);
        CHECK(std::equal(soft.begin(), soft.end(), shifted.begin() + offset));
        CHECK(std::equal(norm.begin(), norm.end(), out.begin() + offset));
      }
    }
  });
}
