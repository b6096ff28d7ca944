// How the MLP lookups are built (compiler/lower_mlp.cpp, compiler/infer.cpp): steps that point away
// from a base level, so the values far from a threshold are written exactly, and fused tables too
// large for a model split at the maps inside them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "compile_helpers.hpp"
#include "runtime/forward.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

int dimension(const Model& model, const std::string& label) {
  auto it = std::find(model.residual_labels.begin(), model.residual_labels.end(), label);
  REQUIRE(it != model.residual_labels.end());
  return int(it - model.residual_labels.begin());
}

}  // namespace

TEST_CASE("a threshold's step is off on the far side of its base: an indicator's 0s and 1s are exact") {
  // The sign of a prefix mean of +-1 at max length 64: one step, at half of 1/63 below 0. It starts
  // from the side where the mean is not negative, so there (every balanced or rising prefix) the
  // step is off and the output is the bias alone, bit for bit; started from -1, as the steps were
  // built before, it was on there with pre-activations up to 1,300, whose float32 rounding left
  // 1e-4 in the indicator (at max length 1,024, 2e-3: dyck1 mismatched).
  const std::vector<Value> ab = {Value::of_string("a"), Value::of_string("b")};
  CompileOptions o = test_options(ab, 64, Mode::Causal);
  o.verify = false;
  CompileResult r = compile_program(
      program_from_text("m = aggregate(select(indices, indices, <=), indicator(tokens == \"a\") - "
                        "indicator(tokens == \"b\"));\nnegative = (indices + 1) * m < 0;\nnegative;\n"),
      o);
  const int is_true = dimension(r.model, "negative:True"), is_false = dimension(r.model, "negative:False");
  std::mt19937 random(7);
  std::vector<std::vector<int>> batch;
  for (int b = 0; b < 40; ++b) {
    std::vector<int> ids{r.model.bos_id};
    for (int t = 0; t < 64; ++t) ids.push_back(r.model.token_id(random() % 2 ? "a" : "b"));
    batch.push_back(std::move(ids));
  }
  ForwardOptions fo;
  fo.capture_residual = true;
  ForwardResult result = make_backend(r.model)->forward(batch, fo);
  long checked = 0;
  for (int b = 0; b < 40; ++b) {
    int balance = 0;
    for (int t = 1; t <= 64; ++t) {
      balance += batch[size_t(b)][size_t(t)] == r.model.token_id("a") ? 1 : -1;
      const float* x = result.residual_at(b, 2, t);
      INFO("input " << b << " position " << t - 1 << " balance " << balance);
      if (balance >= 0) {
        CHECK(x[is_true] == 0.0f);
        CHECK(x[is_false] == 1.0f);
        ++checked;
      } else {
        CHECK(x[is_true] == Approx(1.0).margin(1e-3));  // within the step's float32 rounding
      }
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("a fused table that would dominate the model is split at the maps inside it") {
  // x over (tokens, first token, length): 20 x 21 x 12 = 5,040 combinations, a unit each in every
  // block's MLP; the budget refused the fused table (about 400M parameters). Split at `tokens +
  // first token` (ready after the same attention layer as x's other input, length) it is 39 sums x
  // 12 lengths, and length's own MLP already takes block 1, so x keeps its two blocks.
  std::vector<Value> twenty;
  for (int v = 0; v < 20; ++v) twenty.push_back(Value::of_int(v));
  CompileOptions o = test_options(twenty, 12, Mode::Bidirectional, 20);
  o.exhaustive_limit = 1000;
  CompileResult r = compile_program(
      program_from_text("x = (tokens + aggregate(select(indices, 0, ==), tokens)) * 100 + length;\nx;\n"), o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.layers == 2);
  CHECK(r.model.config.n_inner < 1000);  // the fused table alone is 5,040 units
  CHECK(r.report.parameters < 10000000);
}
