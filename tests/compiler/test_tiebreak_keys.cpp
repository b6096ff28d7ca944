// Keys tie-broken by the position (compiler/tiebreak_keys.cpp): which selectors become x's order and
// then the positions', that the rewritten program computes what the source does, and that Tracr's
// sort of such keys compiles to the library's stable sort's model.
#include <catch2/catch.hpp>

#include <algorithm>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

Program after_tiebreak_keys(const std::string& text, const CompileOptions& o) {
  return rewritten_by(program_from_text(text), o, "width_predicates", "tiebreak_keys").after;
}

// How the rewritten program compares positions: "<", "<=", ">", ">=" for its one `select(indices,
// indices, op)`, "" where it has none, "several" where more.
std::string index_comparison(const Program& p) {
  std::string found;
  int count = 0;
  for (const Node& n : p.nodes) {
    if (n.kind != NodeKind::Select || p.node(n.inputs[0]).kind != NodeKind::Indices ||
        p.node(n.inputs[1]).kind != NodeKind::Indices)
      continue;
    ++count;
    found = n.comparison == Comparison::Lt ? "<" : n.comparison == Comparison::Le ? "<=" : n.comparison == Comparison::Gt ? ">" : ">=";
  }
  return count > 1 ? "several" : found;
}

// Whether the rewrite ranked x through a map of its own (x's values are not the key's order).
bool ranked(const Program& p) {
  for (const Node& n : p.nodes)
    if (n.kind == NodeKind::Elementwise && n.name.size() > 6 && n.name.rfind("_order") == n.name.size() - 6) return true;
  return false;
}

std::string width_of(const std::string& key, const std::string& cmp) {
  return "key = " + key + ";\nselector_width(select(key, key, " + cmp + "));\n";
}

}  // namespace

TEST_CASE("tiebreak_keys: which keys are x's order then the position's, in which direction") {
  const CompileOptions o = test_options(digits_1_to_4(), 8, Mode::Bidirectional);
  // x ascending, ties by the earlier position: the library's stable sort's selector.
  Program p = after_tiebreak_keys(width_of("tokens + indices / 10", "<"), o);
  CHECK(index_comparison(p) == "<");
  CHECK_FALSE(ranked(p));
  // `<=` selects the query's own position too; a key that falls with the position ties the other way.
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens + indices / 10", "<="), o)) == "<=");
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens - indices / 10", "<"), o)) == ">");
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens - indices / 10", ">="), o)) == "<=");
  // Descending in x, or x's values in classes (1 and 4, then 2 and 3): x's rank, a map of it.
  p = after_tiebreak_keys(width_of("indices / 10 - tokens", "<"), o);
  CHECK(index_comparison(p) == "<");
  CHECK(ranked(p));
  p = after_tiebreak_keys(width_of("{1: 1, 2: 0, 3: 0, 4: 1}[tokens] + indices / 10", "<"), o);
  CHECK(index_comparison(p) == "<");
  CHECK(ranked(p));

  // A key that is the position wherever x is: the positions alone.
  p = after_tiebreak_keys(width_of("tokens * 0 + indices", "<"), o);
  CHECK(index_comparison(p) == "<");
  CHECK(std::count_if(p.nodes.begin(), p.nodes.end(), [](const Node& n) { return n.kind == NodeKind::SelectOr; }) == 0);
  // Not a tie break: the position outweighs x at max length 8 (1 + 7/4 > 2), or x is all there is
  // to the order, or the two sides differ.
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens + indices / 4", "<"), o)) == "");
  // Nor where two positions of one token tie (every position past the first), or fall and rise.
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens + (indices > 0) / 10", "<"), o)) == "");
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens + (indices * 3 % 8) / 10", "<"), o)) == "");
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens + 0 * indices", "<"), o)) == "");
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens * (indices + 1)", "<"), o)) == "");
  CHECK(index_comparison(after_tiebreak_keys(
            "key = tokens + indices / 10;\nselector_width(select(key, tokens, <));\n", o)) == "");
  // The same key up to max length 4 is one: i / 4 stays below 1 there.
  CHECK(index_comparison(after_tiebreak_keys(width_of("tokens + indices / 4", "<"),
                                             test_options(digits_1_to_4(), 4, Mode::Bidirectional))) == "<");
}

TEST_CASE("tiebreak_keys: the rewritten program computes what the source does, on every input up to length 6") {
  for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
    const CompileOptions o = test_options(digits_1_to_4(), 6, mode);
    for (const char* key : {"tokens + indices / 10", "tokens - indices / 10", "indices / 10 - tokens",
                            "{1: 1, 2: 0, 3: 0, 4: 1}[tokens] + indices / 100", "tokens * 0 + indices"})
      for (const char* cmp : {"<", "<=", ">", ">="}) {
        INFO(key << " " << cmp << (mode == Mode::Causal ? " causal" : ""));
        const Program source = program_from_text(width_of(key, cmp));
        PassRewrite r = rewritten_by(source, o, "width_predicates", "tiebreak_keys");
        REQUIRE(index_comparison(r.after) != "");
        CHECK(agree_on_every_input(r, mode, digits_1_to_4(), 6) == 4 + 16 + 64 + 256 + 1024 + 4096);
      }
  }
}

TEST_CASE("tiebreak_keys: Tracr's sort of tie-broken keys is the library's stable sort's model") {
  // Tracr's make_sort_unique over make_sort's keys `x + i / n` (the tie break of lib.make_sort).
  const Program tracr_sort = program_from_text(
      "key = tokens + indices / 16;\n"
      "target = selector_width(select(key, key, <));\n"
      "sorted = aggregate(select(target, indices, ==), tokens);\nsorted;\n");
  const Program library_sort = program_from_text("sorted = sort(tokens, tokens);\nsorted;\n");
  const CompileOptions o = test_options(digits_1_to_4(), 16, Mode::Bidirectional);
  const CompileResult tracr = compile_program(tracr_sort, o);
  INFO(tracr.report.first_mismatch);
  CHECK(tracr.report.mismatches == 0);
  const CompileResult library = compile_program(library_sort, o);
  CHECK(tracr.report.parameters == library.report.parameters);
  CHECK(tracr.report.layers == 2);
  CHECK(run_model(tracr.model, "[3,1,4,2,2]") == std::vector<std::string>{"1", "2", "2", "3", "4"});
}

TEST_CASE("tiebreak_keys: a key of more values than a model holds is rewritten away, and refused where it is not") {
  // 40 tokens at 64 positions: `tokens + indices / 100` takes 2,560 values, past the 2,048 a model
  // can hold one dimension each; its sort compiles all the same, as the stable sort of the tokens.
  std::vector<Value> forty;
  for (int v = 1; v <= 40; ++v) forty.push_back(Value::of_int(v));
  CompileOptions o = test_options(forty, 64, Mode::Bidirectional, 2);
  o.exhaustive_limit = 2000;  // 40 symbols: every input up to length 2, then 2 at each length
  const CompileResult sorted = compile_program(
      program_from_text("key = tokens + indices / 100;\n"
                        "target = selector_width(select(key, key, <));\n"
                        "sorted = categorical(aggregate(select(target, indices, ==), tokens));\nsorted;\n"),
      o);
  INFO(sorted.report.first_mismatch);
  CHECK(sorted.report.mismatches == 0);
  CHECK(run_model(sorted.model, "[30,1,40,2,2]") == std::vector<std::string>{"1", "2", "2", "30", "40"});
  // A key in no such order keeps the refusal, at the key, whatever else the program holds.
  const std::string refusal = compile_error(program_from_text(
      "key = tokens * 97 + indices * 101;\nselector_width(select(key, key, <));\n"), o);
  CHECK(refusal.find("test.rasp:1:7: error: this categorical s-op can take ") == 0);
  CHECK(refusal.find(" values, more than the 2048 a compiled model can hold one dimension or threshold each") !=
        std::string::npos);
  // So does a program whose value sets, listed as far as they fit, are refused further on (a
  // selector over a mean): the refusal is the one it had, at the key.
  CHECK(compile_error(program_from_text("key = tokens + indices / 100;\n"
                                        "mean = numerical(aggregate(select(key, key, <), tokens));\n"
                                        "selector_width(select(mean, mean, ==));\n"),
                      o)
            .find("test.rasp:1:7: error: this categorical s-op can take 2560 values") == 0);
}
