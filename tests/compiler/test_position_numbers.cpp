// Numerical selectors over position numbers (compiler/constructions/numerical_selector.cpp) and the compile
// budget (compiler/budget.cpp): exact models whose size grows linearly with the maximum length.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../language/program_files.hpp"
#include "compile_helpers.hpp"
#include "support/number_text.hpp"

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
// has_focus over `select(indices, indices, <)`: only whether some key is selected shows.
const char* kMarkFirst = "mark_first_instance(tokens, \"b\");\n";

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
  for (const char* text : {kMirror, kPalindrome, kLastToken, kShiftBack, kMarkFirst}) {
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
  for (const char* text : {kMirror, kPalindrome, kLastToken, kShiftBack, kMarkFirst}) {
    Program program = program_from_text(text);
    double p64 = double(parameters_at(program, 64)), p128 = double(parameters_at(program, 128)),
           p256 = double(parameters_at(program, 256));
    INFO(text << ": " << p64 << " " << p128 << " " << p256);
    CHECK((p256 - p128) / (p128 - p64) < 2.1);
    CHECK(p256 < 100000);
  }
}

TEST_CASE("a shift by a computed amount is one numerical head whose query reads the amount's one-hot") {
  struct Case {
    const char* name;
    Program program;
    Mode mode;
  };
  for (const Case& c : {Case{"computed shift", computed_shift(), Mode::Bidirectional},
                        Case{"look back", look_back_by_token(), Mode::Bidirectional},
                        Case{"look back", look_back_by_token(), Mode::Causal}}) {
    CompileOptions o = test_options(digits_0_to_3(), 16, c.mode);
    o.explain = true;
    CompileResult r = compile_program(c.program, o);
    INFO(c.name << (c.mode == Mode::Causal ? " causal: " : ": ") << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
    CHECK(r.report.inputs_checked > 5000);
    CHECK(r.report.layers == (c.name == std::string("look back") ? 1 : 2));
    CHECK_FALSE(has_label(r.model, "indices:"));
    CHECK(r.explanation.find("read off the one-hot (BOS, as the key of position -1, wins where the query lies before "
                             "the first key), O(1) dimensions instead of one per position") != std::string::npos);
    // O(n): the step from 128 to 256 is about twice the step from 64 to 128 (4 times if quadratic).
    o.verify = false;
    o.explain = false;
    double p[3];
    for (int k = 0; k < 3; ++k) {
      o.max_len = 64 << k;
      p[k] = double(compile_program(c.program, o).report.parameters);
    }
    INFO(p[0] << " " << p[1] << " " << p[2]);
    CHECK((p[2] - p[1]) / (p[1] - p[0]) < 2.1);
    CHECK(p[2] < 20000);
  }
}

TEST_CASE("a computed shift that can point past the last key, or that differs by position, stays one-hot") {
  // Shifting left by the amount: a query may lie past the last key, where BOS (whose score is
  // linear in the query) cannot win, so the selector keeps its one-hot table and still verifies.
  Program left = program_from_text("amount = aggregate(select(indices, 0, ==), tokens);\nshift(tokens, -amount, 0);\n");
  CompileOptions o = test_options(digits_0_to_3(), 8, Mode::Bidirectional);
  o.explain = true;
  CompileResult r = compile_program(left, o);
  CHECK(r.report.mismatches == 0);
  CHECK(r.explanation.find(": selector, one-hot: at length 1 position 0's query can match no key and lie past the "
                           "last key, and BOS, without the query's square, is the fallback only before the first") !=
        std::string::npos);
  // In causal mode the first token's value is known from position 0 on, but an aggregate is not
  // proved the same at every position there, so the amount cannot move from the keys to the query.
  o.mode = Mode::Causal;
  r = compile_program(computed_shift(), o);
  CHECK(r.report.mismatches == 0);
  CHECK(r.explanation.find("its keys add `amount`, which can differ from position to position, so the sum is not "
                           "a shift of indices") != std::string::npos);
}

TEST_CASE("long_addition's operand shift is one numerical head") {
  ProgramFile f = load_program("long_addition");
  CompileOptions o = test_options(header_vocabulary(f.header), 16, Mode::Bidirectional);
  o.verify = false;
  o.explain = true;
  CompileResult r = compile_program(f.program, o);
  // `indices + first_shift` with first_shift = length - plus_index: the query `indices - length +
  // plus_index`, and the lookup tables over (index, length, plus_index) are gone.
  CHECK(r.explanation.find("read off the one-hot (BOS, as the key of position -1, wins where the query lies before "
                           "the first key)") != std::string::npos);
  CHECK(r.report.layers == 6);
  CHECK(r.report.parameters < 1000000);  // 1,464,360 with the tables
}

TEST_CASE("a computed shift at max length 256 verifies with zero mismatches") {
  CompileOptions o = test_options(digits_0_to_3(), 256, Mode::Bidirectional, 4);
  o.exhaustive_limit = 4 + 16 + 64;  // every input up to length 3, then 4 random ones of every length
  CompileResult r = compile_program(computed_shift(), o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.inputs_checked == 84 + 4 * 253);
  CHECK(r.report.parameters < 20000);
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

TEST_CASE("float32's bound counts BOS's own score where queries reach far beyond the keys") {
  // Keys 0..15 lie within K = 7.5 of their centre, queries i - 40 within Q = 47.5 of it. BOS scores
  // beta (q~^2 - 1/2), larger than any key's beta (2QK + K^2): the bound is 4 roundings of that.
  Program program = program_from_text("aggregate(select(indices, indices - 40, ==), tokens, \"_\");\n");
  CompileOptions o = test_options(kAbcd, 16, Mode::Bidirectional);
  CompileResult r = compile_program(program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  const double beta = 2 * (std::log(17.0) + 16), Q = 47.5, K = 7.5;
  CHECK(r.report.numerical_selector_margin == Approx(beta / 2));
  CHECK(r.report.numerical_selector_rounding == Approx(4 * std::ldexp(beta * (Q * Q + 0.5), -24)));
  // The keys' own scores would give under half of that.
  CHECK(r.report.numerical_selector_rounding > 2 * 4 * std::ldexp(beta * (2 * Q * K + K * K), -24));
}

TEST_CASE("the budget refuses a model above --max-parameters, at the s-op that dominates") {
  const Program partition = stable_partition();
  CompileOptions o = test_options(digits_1_to_4(), 64, Mode::Bidirectional);
  o.verify = false;
  o.max_parameters = 200000;  // it has 253,988, of which 179,426 are not MLP units
  std::string error = compile_error(partition, o);
  CHECK(error.find("test.rasp:1:10: error: the model would have more parameters than --max-parameters 200,000: "
                   "blocks.0.mlp passes it; most of it is ") != std::string::npos);
  // Below the rest of the model, before lowering: what is counted by then, said as a lower bound.
  o.max_parameters = 100000;
  error = compile_error(partition, o);
  CHECK(error.find("test.rasp:1:10: error: the model would have at least 179,426 parameters before its MLP units, "
                   "more than --max-parameters 100,000; most of it is ") != std::string::npos);
  o.max_parameters = 0;
  CHECK(compile_error(partition, o) == "");
}

TEST_CASE("the budget counts the residual as the lowering pads it for the heads") {
  // most_freq at 64: the heads of its sort's block need more Q/K dimensions than the allocation
  // gives each, and the model is 386 wide. Counted from the allocation's width alone, it came to
  // 1,448,352 parameters and passed a limit of 2M, when the model had 2,461,100; it had 2,429,878
  // once its frequency (a width of `select(tokens, tokens, ==)`) was known to be at least 1, and has
  // 2,429,492 since its sort is known never to give its default (one output token fewer).
  ProgramFile f = load_program("most_freq");
  CompileOptions o = test_options(header_vocabulary(f.header), 64, Mode::Bidirectional);
  o.verify = false;
  o.max_parameters = 2000000;
  CHECK(compile_error(f.program, o).find("error: the model would have more parameters than --max-parameters "
                                         "2,000,000: blocks.0.mlp passes it; most of it is `key`") !=
        std::string::npos);
  o.max_parameters = 2429491;  // one below the model: the budget is the lowering's own count
  CHECK(compile_error(f.program, o).find("more parameters than --max-parameters 2,429,491") != std::string::npos);
  o.max_parameters = 2429492;
  CHECK(compile_error(f.program, o) == "");
  // Below the rest of the model, the refusal comes before lowering and says what it has counted.
  o.max_parameters = 1000000;
  CHECK(compile_error(f.program, o).find("error: the model would have at least 1,828,871 parameters before its MLP "
                                         "units, more than --max-parameters 1,000,000") != std::string::npos);
  o.max_parameters = 0;
  CHECK(compile_program(f.program, o).report.parameters == 2429492);
}

TEST_CASE("the budget and the model cannot disagree: every program refused one parameter below its size") {
  // Its own count, not an estimate: at the model's size it compiles, one below it is refused. (The
  // estimate it replaced agreed on 1 program of 19 at max length 16.)
  for (const auto& path : program_paths()) {
    const ProgramFile f = load_program(path.stem().string());
    INFO(path.stem().string());
    if (header_vocabulary(f.header).empty()) continue;  // no vocabulary to compile over
    CompileOptions o = test_options(header_vocabulary(f.header), 8, f.header.causal.value_or(false) ? Mode::Causal
                                                                                                     : Mode::Bidirectional);
    o.verify = false;
    o.max_parameters = 0;
    const size_t parameters = compile_program(f.program, o).report.parameters;
    o.max_parameters = parameters;
    CHECK(compile_error(f.program, o) == "");
    o.max_parameters = parameters - 1;
    // Refused in the lowering as its last unit passes the limit, or before it where the model has
    // no MLP units but the one every block keeps (assemble.cpp), its size then given.
    const std::string error = compile_error(f.program, o);
    const std::string limit = "--max-parameters " + with_commas(double(parameters - 1));
    CHECK((error.find("more parameters than " + limit) != std::string::npos ||
           error.find(" " + with_commas(double(parameters)) + " parameters before its MLP units, more than " + limit) !=
               std::string::npos));
  }
}

TEST_CASE("has_focus over an order of positions is one linear head: no indices one-hot, zero mismatches") {
  const std::string numerical = ": selector, numerical: only whether some key is selected matters";
  ProgramFile f = load_program("double_hist");
  CompileOptions o = test_options(header_vocabulary(f.header), 16, Mode::Bidirectional);
  o.explain = true;
  CompileResult r = compile_program(f.program, o);
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.layers == 2);
  CHECK_FALSE(has_label(r.model, "indices:"));
  CHECK(r.explanation.find(numerical) != std::string::npos);
  CHECK(r.report.numerical_selector_margin == Approx(std::log(17.0) + 16));  // beta / 2
  CHECK(r.report.parameters < 40000);  // 44,800 with the indices one-hot
  // Every order, sides that add constants or read `length`, with a categorical conjunct or alone.
  for (const char* op : {"<", "<=", ">", ">="}) {
    for (const std::string& text :
         {std::string("has_focus(select(tokens, tokens, ==) and select(indices, indices, ") + op + "));\n",
          std::string("has_focus(select(indices + 2, indices, ") + op + "));\n",
          std::string("has_focus(select(indices, length - 3, ") + op + ") and select(tokens, \"a\", ==));\n"}) {
      for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
        CompileOptions oo = test_options(kAbcd, 12, mode);
        oo.explain = true;
        CompileResult rr = compile_program(program_from_text(text), oo);
        INFO(text << (mode == Mode::Causal ? " causal: " : ": ") << rr.report.first_mismatch);
        CHECK(rr.report.mismatches == 0);
        CHECK(rr.report.inputs_checked > 5000);
        // Causal `select(indices, indices, <=)` selects every key a query sees: no comparison at all.
        const bool prefix = mode == Mode::Causal && op == std::string("<=") && text.find("indices, indices") != std::string::npos;
        CHECK((rr.explanation.find(numerical) != std::string::npos) != prefix);
        CHECK_FALSE(has_label(rr.model, "indices:"));
      }
    }
  }
}

TEST_CASE("an order whose selected keys must score alike, or a head with two orders, stays one-hot") {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c :
       {Case{"selector_width(select(indices, indices, <));\n",
             "one-hot: something reads it that needs every selected key to score alike (a width, a mean, an `or`)"},
        // (`<=` under a mean is two heads over the position's digits: test_prefix_means.cpp.)
        Case{"aggregate(select(indices, indices, <), indicator(tokens == \"a\"));\n",
             "one-hot: something reads it that needs every selected key to score alike (a width, a mean, an `or`)"},
        Case{"has_focus(select(indices, indices, <) and select(indices, length - 3, >));\n",
             "one-hot: a head that reads it compares positions in another conjunct too"}}) {
    CompileOptions o = test_options(kAbcd, 8, Mode::Bidirectional);
    o.explain = true;
    CompileResult r = compile_program(program_from_text(c.text), o);
    INFO(c.text << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
    CHECK(r.explanation.find(std::string(": selector, ") + c.why) != std::string::npos);
    CHECK(has_label(r.model, "indices:"));
  }
}
