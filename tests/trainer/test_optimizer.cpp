// AdamW's schedule, weight decay mask and gradient clipping.
#include <catch2/catch.hpp>

#include <cmath>

#include "trainer/network.hpp"
#include "trainer/optimizer.hpp"

using namespace raspc;

TEST_CASE("the learning rate warms up linearly, then decays along a cosine to a tenth") {
  OptimizerSettings s;
  s.learning_rate = 1.0f;
  s.warmup_steps = 10;
  s.total_steps = 110;
  CHECK(scheduled_learning_rate(s, 0) == Approx(0.1f));
  CHECK(scheduled_learning_rate(s, 4) == Approx(0.5f));
  CHECK(scheduled_learning_rate(s, 9) == Approx(1.0f));
  CHECK(scheduled_learning_rate(s, 10) == Approx(1.0f));
  CHECK(scheduled_learning_rate(s, 60) == Approx(0.55f));  // halfway: 0.1 + 0.9 * (1 + cos(pi/2)) / 2
  CHECK(scheduled_learning_rate(s, 110) == Approx(0.1f));
  CHECK(scheduled_learning_rate(s, 500) == Approx(0.1f));
}

TEST_CASE("weight decay shrinks matrices and embeddings, never LayerNorm or biases") {
  Model model;
  model.config = {1, 2, 8, 16, 5, 7, false, true, Activation::Gelu};
  model.allocate();
  initialise_parameters(model, 3);
  for (size_t i = 0; i < model.storage.size(); ++i) model.storage[i] += 0.5f;  // biases nonzero too
  std::vector<float> params = model.storage, grads(params.size(), 0.0f);
  OptimizerSettings s;
  s.learning_rate = 0.1f;
  s.weight_decay = 0.5f;
  s.total_steps = 1;
  AdamW optimizer(model.config, s);
  // Zero gradients: the Adam term is exactly 0, so only decay moves a parameter.
  optimizer.update(params.data(), grads.data(), 0);
  for (const ParameterSpec& spec : parameter_specs(model.config)) {
    INFO(spec.name);
    const bool decays = spec.shape.size() == 2;
    for (size_t i = spec.offset; i < spec.offset + spec.size(); ++i) {
      const float before = model.storage[i];
      if (decays)
        // One multiply-add, which the compiler may or may not fuse: equal to within 1 ulp.
        CHECK(params[i] == Approx(before * (1 - 0.1 * 0.5)).epsilon(1e-6));
      else
        CHECK(params[i] == before);
    }
  }
}

TEST_CASE("gradients are clipped to the global norm") {
  Model model;
  model.config = {1, 1, 4, 0, 3, 5, true, false, Activation::Relu};
  model.allocate();
  std::vector<float> params(model.storage.size(), 0.0f), grads(params.size(), 3.0f);
  OptimizerSettings s;
  s.clip_norm = 2.0f;
  AdamW optimizer(model.config, s);
  const float norm = optimizer.update(params.data(), grads.data(), 0);
  CHECK(norm == Approx(3.0 * std::sqrt(double(grads.size()))));
  double after = 0;
  for (float g : grads) after += double(g) * g;
  // Float rounding of the scale factor over a few hundred elements: well under 1e-5 relative.
  CHECK(std::sqrt(after) == Approx(2.0).epsilon(1e-5));
}
