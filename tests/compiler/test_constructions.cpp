// The compiler's own node kinds (compiler/constructions/): a width step or a width part is a node of
// its own kind, which the interpreter runs and no pass takes for a selector_width.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "compiler/pipeline.hpp"
#include "language/interpret.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

// Every input over `vocab` up to length `max_len`, in order.
std::vector<std::vector<Value>> every_input(const std::vector<Value>& vocab, int max_len) {
  std::vector<std::vector<Value>> inputs{{}};
  std::vector<std::vector<Value>> all;
  for (int n = 1; n <= max_len; ++n) {
    std::vector<std::vector<Value>> longer;
    for (const auto& prefix : inputs)
      for (const Value& v : vocab) {
        longer.push_back(prefix);
        longer.back().push_back(v);
      }
    inputs = std::move(longer);
    all.insert(all.end(), inputs.begin(), inputs.end());
  }
  return all;
}

}  // namespace

TEST_CASE("constructions: a width step and the width it compares stay two nodes") {
  // `w` is read as a count and compared with the index: the comparison becomes a width step over
  // w's selector. When a later rewrite simplified the program (here pair_selectors, for t's `or`),
  // the step, a selector_width with a flag, was merged into w, and the model read w's count as the
  // comparison: 348 of 363 inputs mismatched.
  const std::string text =
      "s = select(tokens, tokens, ==);\nw = selector_width(s);\nb = indices < w;\n"
      "t = selector_width(select(tokens, tokens, ==) or select(indices, indices, <));\nw + t + indicator(b);";
  for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
    INFO((mode == Mode::Causal ? "causal" : "bidirectional"));
    CompileOptions o = test_options(parse_vocabulary("abc"), 5, mode);
    compiler::CompileState state(program_from_text(text), o);
    compiler::run_passes(state, "infer");
    CHECK(count_kind(state.program, "width_step") == 1);
    CHECK(state.program.node(state.program.find("w")).kind == NodeKind::SelectorWidth);
    const CompileResult r = compile_program(program_from_text(text), o);
    CHECK(r.report.inputs_checked == 363);
    CHECK(r.report.mismatches == 0);
  }
}

TEST_CASE("constructions: the interpreter runs width steps and parts as the program they replace") {
  // Rewritten through the whole pipeline's rewrites, each program computes what its source does on
  // every input up to length 5: the interpreter asks the constructions for their values.
  const std::vector<Value> vocab = parse_vocabulary("abc");
  struct Case {
    const char* text;
    std::string kind;
  };
  for (const Case& c : {Case{"indices < selector_width(select(tokens, tokens, ==));", "width_step"},
                        Case{"selector_width(select(tokens, tokens, ==)) <= indices;", "width_step"},
                        Case{"selector_width(select(tokens, tokens, <) or "
                             "(select(tokens, tokens, ==) and select(indices, indices, <)));",
                             "width_part"}}) {
    INFO(c.text);
    const Program source = program_from_text(c.text);
    CompileOptions o = test_options(vocab, 5, Mode::Bidirectional);
    compiler::CompileState state(source, o);
    compiler::run_passes(state, "infer");
    REQUIRE(count_kind(state.program, c.kind) >= 1);
    Interpreter written(source, o.mode), rewritten(state.program, o.mode);
    for (const std::vector<Value>& input : every_input(vocab, 5)) {
      const std::vector<Value> expected = written.run(input), got = rewritten.run(input);
      REQUIRE(got.size() == expected.size());
      for (size_t i = 0; i < got.size(); ++i) CHECK(compiler::same_value(got[i], expected[i]));
    }
  }
}
