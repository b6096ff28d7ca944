// Numerical selectors over position numbers (compiler/position_numbers.cpp) and the compile
// budget (compiler/budget.cpp): exact models whose size grows linearly with the maximum length.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

const std::vector<Value> kAbcd = {Value::of_string("a"), Value::of_string("b"), Value::of_string("c"),
                                  Value::of_string("d")};

// The idioms people write with computed positions.
const char* kMirror = "aggregate(select(indices, length - indices - 1, ==), tokens);\n";
const char* kPalindrome =
    "mirror = aggregate(select(indices, length - indices - 1, ==), tokens);\n"
    "mirror == tokens;\n";
const char* kLastToken = "load_from_location(tokens, length - 1);\n";
const char* kShiftBack = "aggregate(select(indices - 2, indices, ==), tokens, \"_\");\n";

size_t parameters_at(const Program& program, int max_len, Mode mode = Mode::Bidirectional) {
  CompileOptions o = test_options(kAbcd, max_len, mode);
  o.verify = false;
  return compile_program(program, o).report.parameters;
}

}  // namespace

TEST_CASE("reverse compiles to a numerical selector: no position one-hot, 2 blocks, zero mismatches") {
  ProgramFile f = load_program("reverse");
  CompileOptions o = test_options(kAbcd, 16, Mode::Bidirectional);
  o.explain = true;
  CompileResult r = compile_program(f.program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.layers == 2);
  // The designed margin (beta at max length 16) and float32's bound on a score's rounding there.
  CHECK(r.report.numerical_selector_margin == Approx(2 * (std::log(17.0) + 16)));
  CHECK(r.report.numerical_selector_rounding > 0);
  CHECK(r.report.numerical_selector_rounding < 0.01);  // 4 roundings of scores about 4e3 at this length
  CHECK(r.model.metadata["compile"]["numerical_selector_margin"].get<double>() ==
        Approx(r.report.numerical_selector_margin));
  CHECK(has_label(r.model, "indices.x"));
  CHECK(has_label(r.model, "length.x"));
  CHECK_FALSE(has_label(r.model, "indices:"));
  CHECK_FALSE(has_label(r.model, "length:"));
  CHECK_FALSE(has_label(r.model, "length.scratch"));
  CHECK(r.explanation.find(": selector, numerical: one head scores -(q-k)^2 up to a per-query constant over "
                           "the number groups (every query matches a key, checked at every length)") !=
        std::string::npos);
  CHECK(r.explanation.find("length: categorical, because length: read only as a number by numerical selectors: "
                           "one head copies the last position's indices group (length - 1)") != std::string::npos);
}

TEST_CASE("the position idioms compile exactly, bidirectional and causal") {
  for (const char* text : {kMirror, kPalindrome, kLastToken, kShiftBack}) {
    for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
      Program program = program_from_text(text);
      CompileResult r = compile_program(program, test_options(kAbcd, 16, mode));
      INFO(text << (mode == Mode::Causal ? " causal" : " bidirectional") << ": " << r.report.first_mismatch);
      CHECK(r.report.mismatches == 0);
      CHECK(r.report.inputs_checked > 5000);
      CHECK_FALSE(has_label(r.model, "indices:"));
    }
  }
}

TEST_CASE("a shifted key falls back on BOS: shift compiles to a numerical selector with its filler") {
  ProgramFile f = load_program("shift");
  CompileOptions o = test_options(header_vocabulary(f.header), 16, Mode::Causal);
  o.explain = true;
  CompileResult r = compile_program(f.program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.explanation.find("(BOS wins where no key matches)") != std::string::npos);
  CHECK_FALSE(has_label(r.model, "indices:"));
}

// Quadratic growth doubles the step from one doubling of the length to the next twice over
// (ratio 4); linear growth doubles it (ratio 2). Embeddings and the position embedding are the
// linear part here, so the ratio sits at 2 for every idiom.
TEST_CASE("the position idioms are O(n) in parameters") {
  for (const char* text : {kMirror, kPalindrome, kLastToken, kShiftBack}) {
    Program program = program_from_text(text);
    double p64 = double(parameters_at(program, 64)), p128 = double(parameters_at(program, 128)),
           p256 = double(parameters_at(program, 256));
    INFO(text << ": " << p64 << " " << p128 << " " << p256);
    CHECK((p256 - p128) / (p128 - p64) < 2.1);
    CHECK(p256 < 100000);
  }
}

TEST_CASE("reverse at max length 256 verifies with zero mismatches") {
  ProgramFile f = load_program("reverse");
  CompileOptions o = test_options(kAbcd, 256, Mode::Bidirectional, 4);
  o.exhaustive_limit = 4 + 16 + 64;  // every input up to length 3, then 4 random ones of every length
  CompileResult r = compile_program(f.program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.verified_len == 256);
  CHECK(r.report.inputs_checked == 84 + 4 * 253);
  CHECK(r.report.parameters < 20000);
}

TEST_CASE("a numerical selector that float32 cannot resolve is refused with the limit") {
  ProgramFile f = load_program("reverse");
  CompileOptions o = test_options(kAbcd, 4096, Mode::Bidirectional);
  o.verify = false;
  std::string error = compile_error(f.program, o);
  CHECK(error.substr(error.find("reverse.rasp:")) ==
        "reverse.rasp:13:10: error: at --max-len 4096 this numerical selector's scores reach 6.12e+08, and "
        "float32 rounds them by up to 146, more than half the margin of 48.6 between the matching key and the "
        "next (the float32 limit); use a smaller --max-len\n"
        "    flip = select(indices, opposite_index, ==);\n"
        "           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
  // GPT-2's own context is within the limit.
  o.max_len = 1024;
  CHECK(compile_error(f.program, o) == "");
}

TEST_CASE("the budget refuses a model estimated above --max-parameters, at the s-op that dominates") {
  const Program partition = stable_partition();
  CompileOptions o = test_options(digits_1_to_4(), 64, Mode::Bidirectional);
  o.verify = false;
  o.max_parameters = 1000000;
  std::string error = compile_error(partition, o);
  CHECK(error.find("test.rasp:1:10: error: the model would have about ") != std::string::npos);
  CHECK(error.find(" parameters, more than --max-parameters 1,000,000; most of it is ") != std::string::npos);
  o.max_parameters = 0;
  CHECK(compile_error(partition, o) == "");
}
