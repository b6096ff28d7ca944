// Maps that ignore an input read a constant there (compiler/prune_inputs.cpp), and a causal
// `select(indices, indices, <=)` is `full_s` (compiler/causal_prefixes.cpp): smaller models that
// give the interpreter's outputs, and dyck1 causal at every length GPT-2 has.
#include <catch2/catch.hpp>

#include <algorithm>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

const std::vector<Value> kAb = {Value::of_string("a"), Value::of_string("b")};

// A prefix mean of +-1 and maps of it that multiply it by indices + 1 (the count of the prefix).
const char* kSignOfCount =
    "m = aggregate(select(indices, indices, <=), indicator(tokens == \"a\") - indicator(tokens == \"b\"));\n"
    "(indices + 1) * m < 0;\n";
const char* kCountBelowOne =
    "m = aggregate(select(indices, indices, <=), indicator(tokens == \"a\"));\n"
    "indices * m < 1;\n";

}  // namespace

TEST_CASE("a map whose value ignores an input reads a constant there: one threshold, no gate per position") {
  // (i + 1) * m < 0 is m < 0 at every position: the lookup over (index, mean) becomes a step on the
  // mean. The prefix selector itself still reads indices (bidirectional), so their one-hot stays.
  CompileOptions o = test_options(kAb, 12, Mode::Bidirectional);
  CompileResult r = compile_program(program_from_text(kSignOfCount), o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.verified_len == 12);
  CHECK(r.model.config.n_inner <= 4);      // one step: two units, padded to a multiple of 2
}

TEST_CASE("a map that depends on every input keeps its gate") {
  // i * m < 1 differs between positions for the same mean: the table stays one over both.
  CompileOptions o = test_options(kAb, 12, Mode::Bidirectional);
  CompileResult r = compile_program(program_from_text(kCountBelowOne), o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.model.config.n_inner > 12);  // a gate for every position
}

TEST_CASE("a causal prefix selector reads no s-op: dyck1 grows by its position embedding only") {
  ProgramFile f = load_program("dyck1");
  const std::vector<Value> parens = {Value::of_string("("), Value::of_string(")")};
  CompileOptions o = test_options(parens, 64, Mode::Causal);
  CompileResult r = compile_program(f.program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.layers == 2);
  CHECK_FALSE(has_label(r.model, "indices:"));
  CHECK(r.model.config.n_embd <= 16);
  // Before: 140,912 parameters at 64 (an indices one-hot and a lookup gated by position); now
  // 3,900, of which 1,040 are the position embedding.
  CHECK(r.report.parameters < 5000);
  // The interpreter's semantics are the selector's: the same outputs in bidirectional mode,
  // where the rewrite does not apply and the prefix mean is two heads over the position's digits
  // (test_prefix_means.cpp).
  CompileOptions b = test_options(parens, 10, Mode::Bidirectional);
  CompileResult rb = compile_program(f.program, b);
  INFO(rb.report.first_mismatch);
  CHECK(rb.report.mismatches == 0);
  CHECK(has_label(rb.model, "position.high:"));
  CHECK_FALSE(has_label(rb.model, "indices:"));
}
