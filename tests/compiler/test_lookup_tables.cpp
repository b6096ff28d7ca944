// How the MLP lookups are built (compiler/lower_mlp.cpp, compiler/infer.cpp, compiler/budget.cpp):
// steps that point away from a base level, so the values far from a threshold are written exactly;
// fused tables too large to list split at the maps inside them; and the budget counting a table
// read through a sum as the lowering builds it.
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

TEST_CASE("a fused table too large to list is split at the maps inside it") {
  // indices + (length - first token) over 50 symbols at max length 64: (index, length, first
  // token) take 104,000 combinations, more than one lookup may list, and were refused. Split at
  // `length - first token` (a lookup of its own, after the same attention layer) the table is
  // (index, difference), 7,300 pairs; the block that length's MLP takes already holds the new
  // lookup, so x keeps two blocks.
  std::vector<Value> fifty;
  for (int v = 0; v < 50; ++v) fifty.push_back(Value::of_int(v));
  CompileOptions o = test_options(fifty, 64, Mode::Bidirectional, 5);
  o.exhaustive_limit = 3000;
  CompileResult r =
      compile_program(program_from_text("x = indices + (length - aggregate(select(indices, 0, ==), tokens));\nx;\n"), o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.inputs_checked == 2550 + 62 * 5);
  CHECK(r.report.layers == 2);
}

TEST_CASE("the budget counts a table read through a sum as the lowering builds it: a stable sort at 281") {
  // A stable sort's target `w1 + w2`, from max length 281 (where its parts' weights no longer
  // project onto one line: project_reads.cpp), is a lookup over its two widths' one-hots, 39,621
  // pairs, which the next MLP reads through their sum: 1,124 units. Counted a unit a pair, the
  // budget estimated 221M parameters already at 256 and refused; the model has 23.8M.
  CompileOptions o = test_options(digits_1_to_4(), 281, Mode::Bidirectional);
  o.verify = false;
  REQUIRE(o.max_parameters == 200000000);
  CompileResult r = compile_program(stable_partition(), o);
  CHECK(r.report.layers == 3);
  CHECK(r.report.parameters <= 24000000);
  CHECK(r.model.config.n_inner <= 1130);
}
