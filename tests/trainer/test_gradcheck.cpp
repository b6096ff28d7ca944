// The hand-written backward against central finite differences, in double precision, for every
// parameter tensor of small models of several shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "trainer/network.hpp"

using namespace raspc;

namespace {

struct Shape {
  const char* name;
  int layers, heads, embd, inner;
  bool causal, layer_norm;
  Activation activation;
};

// A model with weights large enough (N(0, 0.5)) that every nonlinearity is exercised; the default
// N(0, 0.02) initialisation would leave softmax and GELU nearly linear.
Model random_model(const Shape& s, unsigned seed) {
  Model m;
  m.config.n_layer = s.layers;
  m.config.n_head = s.heads;
  m.config.n_embd = s.embd;
  m.config.n_inner = s.inner;
  m.config.n_positions = 6;
  m.config.vocab_size = 7;
  m.config.causal = s.causal;
  m.config.layer_norm = s.layer_norm;
  m.config.activation = s.activation;
  m.allocate();
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (float& x : m.storage) x = normal(rng);
  return m;
}

}  // namespace

TEST_CASE("every parameter's gradient matches central finite differences") {
  const Shape shapes[] = {
      {"LayerNorm, bidirectional, GELU", 2, 2, 8, 12, false, true, Activation::Gelu},
      {"LayerNorm, causal, ReLU", 1, 2, 8, 8, true, true, Activation::Relu},
      {"no LayerNorm, bidirectional, ReLU", 2, 1, 6, 10, false, false, Activation::Relu},
      {"no LayerNorm, causal, GELU, no MLP", 2, 3, 6, 0, true, false, Activation::Gelu},
  };
  for (const Shape& shape : shapes) {
    DYNAMIC_SECTION(shape.name) {
      Model model = random_model(shape, 7);
      const int B = 3, T = 6;
      Network<double> net(model, B);
      // Three sequences padded to 6 positions (lengths 6, 4, 2); masked targets (-1) at position 0
      // (BOS), in the padding and at one real position.
      const std::vector<int> lengths = {6, 4, 2};
      std::vector<int> tokens(B * T), targets(B * T, -1);
      std::mt19937 rng(3);
      for (int b = 0; b < B; ++b)
        for (int t = 0; t < T; ++t) {
          tokens[b * T + t] = t == 0 ? 0 : int(rng() % 7);
          if (t > 0 && t < lengths[b] && !(b == 0 && t == 3)) targets[b * T + t] = int(rng() % 7);
        }
      net.forward(tokens.data(), lengths.data(), targets.data(), B, T);
      net.backward();

      // Central differences with h = 1e-5 in double: truncation error ~h^2 * f''' ~ 1e-10 and
      // rounding ~1e-16 / h ~ 1e-11, both far under the 1e-6 relative tolerance.
      const double h = 1e-5;
      for (const ParameterSpec& spec : parameter_specs(model.config)) {
        double diff2 = 0, norm2 = 0;
        for (size_t i = spec.offset; i < spec.offset + spec.size(); ++i) {
          const double saved = net.params[i];
          net.params[i] = saved + h;
          const double up = net.forward(tokens.data(), lengths.data(), targets.data(), B, T);
          net.params[i] = saved - h;
          const double down = net.forward(tokens.data(), lengths.data(), targets.data(), B, T);
          net.params[i] = saved;
          const double numeric = (up - down) / (2 * h);
          diff2 += (numeric - net.grads[i]) * (numeric - net.grads[i]);
          norm2 += numeric * numeric + net.grads[i] * net.grads[i];
        }
        INFO(spec.name);
        // wpe rows past every length, and wte rows of unused tokens, have exactly zero gradient.
        if (norm2 == 0) continue;
        CHECK(std::sqrt(diff2 / norm2) < 1e-6);
      }
      // Padding positions (sequence 2, positions 2..5) have no effect on the loss.
      const double loss = net.forward(tokens.data(), lengths.data(), targets.data(), B, T);
      for (int t = 2; t < T; ++t) tokens[2 * T + t] = 5;
      CHECK(net.forward(tokens.data(), lengths.data(), targets.data(), B, T) == loss);
    }
  }
}
