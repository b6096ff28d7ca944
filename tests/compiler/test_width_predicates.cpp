// Width predicates (compiler/width_predicates.cpp): a selector comparing a selector width with a
// constant compares the width's predicate with True; the rewritten program computes what the source
// does, and from 64 values on the predicate is written from the width's 1/(w+1), so a width read
// only that way has no one-hot (count_less_freq: O(n) where it was O(n^2)).
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "compiler/pipeline.hpp"
#include "language/interpret.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

const char* const kComparisons[] = {
    // keys: the width; queries: a constant, each comparison
    "w = selector_width(select(tokens, tokens, ==));\nselector_width(select(w, 2, <=));\n",
    "w = selector_width(select(tokens, tokens, ==));\nselector_width(select(w, 1, >));\n",
    "w = selector_width(select(tokens, tokens, ==));\nselector_width(select(w, 2, !=));\n",
    "w = selector_width(select(tokens, tokens, ==));\naggregate(select(w, 3, ==), tokens == \"a\");\n",
    // the constant as the keys, the width as the queries: `3 < w[q]` selects every key or none
    "w = selector_width(select(tokens, tokens, ==));\nselector_width(select(3, w, <));\n",
};

}  // namespace

TEST_CASE("width_predicates: the rewritten program computes what the source does, on every input up to length 6") {
  const std::vector<Value> vocab = parse_vocabulary("abc");
  const CompileOptions o = test_options(vocab, 6, Mode::Bidirectional);
  for (const char* text : kComparisons) {
    INFO(text);
    compiler::CompileState before(program_from_text(text), o), after(program_from_text(text), o);
    compiler::run_passes(before, "width_steps");
    compiler::run_passes(after, "width_predicates");
    // One predicate (a map of the width) now, and no selector compares the width itself.
    CHECK(after.program.nodes.size() > before.program.nodes.size());
    for (const Node& node : after.program.nodes)
      if (node.kind == NodeKind::Select)
        for (NodeId side : node.inputs) CHECK(after.program.node(side).kind != NodeKind::SelectorWidth);
    Interpreter source(before.program, o.mode), rewritten(after.program, o.mode);
    const size_t inputs =
        for_every_input(vocab, 6, [&](const std::vector<Value>& input) { CHECK(rewritten.run(input) == source.run(input)); });
    CHECK(inputs == 3 + 9 + 27 + 81 + 243 + 729);
  }
}

TEST_CASE("width_predicates: from 64 values a width read only through its predicate has no one-hot") {
  const ProgramFile f = load_program("count_less_freq");
  const std::vector<Value> vocab = header_vocabulary(f.header);
  // Max length 62 (63 values): the predicate is folded into the head, which reads hist's one-hot
  // as the comparison did: one dimension for each of hist's 62 values (1..62), n_embd 108.
  CompileOptions o = test_options(vocab, 62, Mode::Bidirectional, 1);
  o.verify = false;
  const CompileResult short_model = compile_program(f.program, o);
  CHECK(has_label(short_model.model, "hist#2:62"));
  // Max length 63: the predicate `rare_keys` is written by block 0's MLP from hist's 1/(w+1), and
  // the output is a number (number_output.cpp): n_embd 18 at any length from here (no token row
  // holds an output dimension, so no `pad`: allocate.cpp).
  o = test_options(vocab, 63, Mode::Bidirectional, 20);
  o.exhaustive_limit = 4 + 16 + 64 + 256;  // every input up to length 4, then 20 a length
  o.explain = true;
  const CompileResult r = compile_program(f.program, o);
  CHECK_FALSE(has_label(r.model, "hist#2:"));
  CHECK(has_label(r.model, "rare_keys#4:True"));
  CHECK(r.model.config.n_embd == 18);
  CHECK(r.report.layers == 2);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.min_logit_margin > 35);
  CHECK(r.explanation.find("rare_keys#4 (`select(hist, n, <=)` at ") != std::string::npos);
  CHECK(r.explanation.find("written from its 1/(w+1) so that the width needs no one-hot for it") != std::string::npos);
}

TEST_CASE("width_predicates: each comparison compiles exactly from 64 values, either side") {
  for (const char* text : kComparisons) {
    INFO(text);
    CompileOptions o = test_options(parse_vocabulary("abc"), 63, Mode::Bidirectional, 10);
    o.exhaustive_limit = 3 + 9 + 27 + 81;
    const CompileResult r = compile_program(program_from_text(text), o);
    CHECK(r.report.mismatches == 0);
    CHECK_FALSE(has_label(r.model, "w:"));  // w is read only through its predicate
  }
}
