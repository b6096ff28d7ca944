// Numbers from selector widths (compiler/constructions/numerical_selector.cpp): a selector width, or a map of one,
// read as an integer by a numerical selector's keys, where float32 can carry its square; and the
// compile budget's estimate of the verification (compiler/budget.cpp).
#include <catch2/catch.hpp>

#include <algorithm>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

bool explains(const CompileResult& r, const std::string& text) { return r.explanation.find(text) != std::string::npos; }

// Compiles with --explain and verifies: zero mismatches, whatever else the test checks.
CompileResult compile_verified(const Program& program, CompileOptions o) {
  o.explain = true;
  CompileResult r = compile_program(program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  return r;
}

const char* kNumberKey = "numerical: its keys are a selector width (or a map of one) read as an integer";

}  // namespace

TEST_CASE("sort_unique's target position is a number: its group and no width one-hot with zero mismatches", "[width]") {
  ProgramFile f = load_program("sort_unique");
  CompileResult r = compile_verified(f.program, test_options(header_vocabulary(f.header), 12, Mode::Bidirectional));
  CHECK(r.report.inputs_checked > 5000);
  CHECK(r.report.layers == 2);
  CHECK(explains(r, kNumberKey));
  // The width (sort_unique's target_position) is labelled by its node once simplified.
  CHECK(explains(r, "target_position#3 (`selector_width(smaller)` at "));
  CHECK(explains(r, "sort_unique.rasp:16:21): categorical, because selector_width: 0..12, read only as the key of "
                    "numerical selectors: its MLP reads 1/(w+1) and writes w's number group"));
  CHECK(has_label(r.model, "target_position#3.x"));
  CHECK(has_label(r.model, "target_position#3.scratch"));
  CHECK_FALSE(has_label(r.model, "target_position#3:"));
  // The one-hot construction had 15,240 parameters here (n_embd 36).
  CHECK(r.report.parameters < 7500);
}

TEST_CASE("a map of one width as the key is a number too where the group holds its values", "[width]") {
  Program program = program_from_text(
      "before = selector_width(select(tokens, tokens, <));\n"
      "aggregate(select(before - 1, indices, ==), tokens, \"_\");\n");
  CompileOptions o = test_options({Value::of_string("a"), Value::of_string("b"), Value::of_string("c")}, 12,
                                  Mode::Bidirectional);
  CompileResult r = compile_verified(program, o);
  CHECK(r.report.inputs_checked > 100);  // undefined (two keys match) where the smallest token repeats
  CHECK(explains(r, kNumberKey));
  // At 8 the key's -1 lies beyond a number group's reach (1.25 extents from the centre 3.5).
  o.max_len = 8;
  r = compile_verified(program, o);
  CHECK(explains(r, "one-hot: its keys, computed from a selector width, reach beyond what a number group holds"));
}

TEST_CASE("a computed key stays one-hot where float32 cannot carry its square and still verifies", "[width]") {
  ProgramFile f = load_program("sort_unique");
  CompileResult r = compile_verified(f.program, test_options(header_vocabulary(f.header), 16, Mode::Bidirectional, 20));
  CHECK(explains(r, "one-hot: its keys are computed from selector widths, and at --max-len 16 float32 rounds the "
                    "number group the MLP writes from 1/(w+1) by up to 0.1"));
  CHECK(explains(r, "(the float32 limit)"));
  CHECK(has_label(r.model, "target_position#3:"));
}

TEST_CASE("a stable sort's target w1 + w2 stays one-hot and the sort keeps its blocks", "[width]") {
  CompileResult r = compile_verified(stable_partition(), test_options(digits_1_to_4(), 16, Mode::Bidirectional, 20));
  CHECK(r.report.layers == 2);
  // 73,862 where the parts held 1/(w+1), whose sums interleave along the line (a step per pair);
  // their w/(w+Z) put the sums in order (a step per sum, test_constructions/width_part.cpp). 29,018
  // before the sort was known never to give its default (every position is one key's target).
  CHECK(r.report.parameters == 27044);
  CHECK(explains(r, "one-hot: its keys are a map of several selector widths (a stable sort's w1 + w2)"));
}

TEST_CASE("the budget estimates the verification: the inputs it checks and seconds at a calibrated rate", "[width]") {
  ProgramFile f = load_program("reverse");
  CompileOptions o = test_options(header_vocabulary(f.header), 12, Mode::Bidirectional, 50);
  o.verify_len = 10;
  o.exhaustive_limit = 1000;
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.mismatches == 0);
  // Every input while the total stays within 1,000 (lengths 1-4 of a 4-symbol vocabulary: 340),
  // then 50 at each of the lengths 5-10.
  CHECK(r.report.estimated_verify_inputs == 340 + 50 * 6);
  CHECK(double(r.report.inputs_checked + r.report.undefined_inputs) == r.report.estimated_verify_inputs);
  CHECK(r.report.estimated_verify_seconds > 0);
  CHECK(r.report.estimated_verify_seconds < 1);
  o.verify = false;
  CHECK(compile_program(f.program, o).report.estimated_verify_inputs == 0);
}
