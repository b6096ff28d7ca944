// Every device op of the CUDA backend against its CPU twin (runtime/cpu_backend.hpp), on shapes
// that exercise the kernels' edge cases: rows longer than a warp, heads of odd width, padding.
#ifdef RASPC_WITH_CUDA
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "runtime/cpu_backend.hpp"
#include "runtime/cuda/cuda_ops.hpp"
#include "tests/cuda/parity.hpp"

using namespace raspc;
using testing::require_close;

namespace {

std::vector<float> random_floats(size_t n, std::mt19937& rng, float scale = 1.0f, float offset = 0.0f) {
  std::normal_distribution<float> normal(offset, scale);
  std::vector<float> values(n);
  for (float& v : values) v = normal(rng);
  return values;
}

}  // namespace

TEST_CASE("cuda op: embeddings, zero on padded rows") {
  std::mt19937 rng(1);
  const int B = 3, T = 37, C = 40, V = 11, P = 40;
  const std::vector<int> lengths = {37, 0, 12};
  std::vector<float> wte = random_floats(size_t(V) * C, rng), wpe = random_floats(size_t(P) * C, rng);
  std::vector<int> tokens(size_t(B) * T, 0), cpu_tokens(size_t(B) * T, -1), positions(size_t(B) * T, 0);
  std::uniform_int_distribution<int> token(0, V - 1);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < lengths[b]; ++t) {
      tokens[size_t(b) * T + t] = cpu_tokens[size_t(b) * T + t] = token(rng);
      positions[size_t(b) * T + t] = t;
    }
  std::vector<float> cpu(size_t(B) * T * C);
  encoder_forward(cpu.data(), cpu_tokens.data(), positions.data(), wte.data(), wpe.data(), B * T, C);
  require_close(cuda_ops::embed(tokens, lengths, T, wte, wpe, C), cpu, "embeddings");
}

TEST_CASE("cuda op: LayerNorm, on rows away from zero mean") {
  std::mt19937 rng(2);
  for (int C : {8, 33, 100, 768}) {
    const int N = 37;
    // A mean of 5 makes the deviations differences of larger numbers. (Much larger means would
    // measure the CPU's sequential float sum, whose rounding then dominates, not the kernel.)
    std::vector<float> x = random_floats(size_t(N) * C, rng, 2.0f, 5.0f);
    std::vector<float> w = random_floats(C, rng, 0.3f, 1.0f), b = random_floats(C, rng, 0.3f);
    std::vector<float> cpu(x.size());
    layernorm_forward(cpu.data(), nullptr, nullptr, x.data(), w.data(), b.data(), N, C);
    require_close(cuda_ops::layernorm(x, w, b, C), cpu, "LayerNorm with C = " + std::to_string(C));
  }
}

TEST_CASE("cuda op: matrix products with and without bias, and the tied unembedding") {
  std::mt19937 rng(3);
  struct Shape {
    int M, K, N;
  };
  for (Shape s : {Shape{1, 64, 192}, Shape{33, 70, 45}, Shape{256, 96, 384}}) {
    std::vector<float> x = random_floats(size_t(s.M) * s.K, rng), w = random_floats(size_t(s.K) * s.N, rng);
    std::vector<float> bias = random_floats(s.N, rng);
    std::vector<float> cpu(size_t(s.M) * s.N);
    const std::string shape = std::to_string(s.M) + "x" + std::to_string(s.K) + "x" + std::to_string(s.N);
    matmul_forward(cpu.data(), x.data(), w.data(), bias.data(), s.M, s.K, s.N);
    require_close(cuda_ops::matmul(x, w, bias, s.M, s.K, s.N), cpu, "matmul with bias " + shape);
    matmul_forward(cpu.data(), x.data(), w.data(), nullptr, s.M, s.K, s.N);
    require_close(cuda_ops::matmul(x, w, {}, s.M, s.K, s.N), cpu, "matmul without bias " + shape);
    // Unembedding: x (M,K) against a (N,K) embedding, so V = N and C = K.
    std::vector<float> wte = random_floats(size_t(s.N) * s.K, rng), logits(size_t(s.M) * s.N);
    std::vector<float> wte_t(wte.size());  // (K,N), what the CPU's unembedding multiplies by
    for (int v = 0; v < s.N; ++v)
      for (int c = 0; c < s.K; ++c) wte_t[size_t(c) * s.N + v] = wte[size_t(v) * s.K + c];
    unembed_forward(logits.data(), x.data(), wte_t.data(), s.M, s.K, s.N);
    require_close(cuda_ops::unembed(x, wte, s.K, s.N), logits, "unembed " + shape);
  }
}

TEST_CASE("cuda op: GELU (tanh form) and ReLU") {
  std::mt19937 rng(4);
  std::vector<float> x = random_floats(5000, rng, 4.0f);
  x.insert(x.end(), {0.0f, -0.0f, 1e-30f, -1e-30f, 10.0f, -10.0f, 60.0f, -60.0f});
  std::vector<float> cpu(x.size());
  gelu_forward(cpu.data(), x.data(), x.size());
  require_close(cuda_ops::activation(x, Activation::Gelu), cpu, "GELU");
  relu_forward(cpu.data(), x.data(), x.size());
  CHECK(cuda_ops::activation(x, Activation::Relu) == cpu);  // exact: a comparison, no rounding
}

TEST_CASE("cuda op: the residual add, zero on padded rows") {
  std::mt19937 rng(5);
  const int T = 9, C = 24;
  const std::vector<int> lengths = {9, 4, 0};
  const size_t n = lengths.size() * T * C;
  std::vector<float> x = random_floats(n, rng), delta = random_floats(n, rng);
  std::vector<float> cpu = x;
  residual_forward(cpu.data(), delta.data(), n);
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int t = lengths[b]; t < T; ++t) std::fill_n(cpu.begin() + (b * T + t) * C, C, 0.0f);
  // Exact: one float addition per element on both sides.
  CHECK(cuda_ops::residual_add(x, delta, lengths, T, C) == cpu);
}

TEST_CASE("cuda op: masked attention over a padded batch, causal and bidirectional") {
  std::mt19937 rng(6);
  struct Shape {
    int T, C, NH;
    std::vector<int> lengths;
  };
  for (const Shape& s : {Shape{37, 24, 3, {37, 5, 0, 20}}, Shape{70, 96, 2, {70, 33}}, Shape{1, 8, 8, {1}}})
    for (bool causal : {true, false}) {
      const int B = int(s.lengths.size());
      // Scale 3 gives peaked and flat softmax rows alike.
      std::vector<float> qkv = random_floats(size_t(B) * s.T * 3 * s.C, rng, 3.0f);
      std::vector<float> out(size_t(B) * s.T * s.C), att(size_t(B) * s.NH * s.T * s.T);
      attention_forward(out.data(), att.data(), qkv.data(), s.lengths.data(), B, s.T, s.C, s.NH, causal);
      cuda_ops::AttentionResult cuda = cuda_ops::attention(qkv, s.lengths, s.T, s.C, s.NH, causal);
      const std::string shape = "T " + std::to_string(s.T) + ", C " + std::to_string(s.C) + ", heads " +
                                std::to_string(s.NH) + (causal ? ", causal" : ", bidirectional");
      require_close(cuda.out, out, "attention output, " + shape);
      require_close(cuda.pattern, att, "attention pattern, " + shape);
    }
}

TEST_CASE("cuda op: the decoder's attention of one query over cached keys") {
  std::mt19937 rng(7);
  for (int n_keys : {1, 29, 300}) {
    const int C = 24, NH = 4;
    std::vector<float> q = random_floats(C, rng, 3.0f);
    std::vector<float> k = random_floats(size_t(n_keys) * C, rng, 3.0f), v = random_floats(size_t(n_keys) * C, rng);
    std::vector<float> out(C), att(size_t(NH) * n_keys);
    attention_row(out.data(), att.data(), n_keys, q.data(), k.data(), v.data(), C, n_keys, C, NH);
    cuda_ops::AttentionResult cuda = cuda_ops::attention_one_query(q, k, v, C, NH);
    require_close(cuda.out, out, "one-query attention output over " + std::to_string(n_keys) + " keys");
    require_close(cuda.pattern, att, "one-query attention pattern over " + std::to_string(n_keys) + " keys");
  }
}

#endif  // RASPC_WITH_CUDA
