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

namespace {

// The values the inference gives the s-op named `name` (after a rewrite, where it still exists).
std::vector<std::string> values_of(const Program& p, const CompileOptions& o, const std::string& name) {
  const compiler::Inference inference = compiler::infer(p, o);
  for (NodeId id = 0; id < NodeId(p.nodes.size()); ++id)
    if (p.node(id).name == name) {
      std::vector<std::string> out;
      for (const Value& v : inference.info[size_t(id)].values) out.push_back(to_source(v));
      return out;
    }
  return {"(no s-op named " + name + ")"};
}

// How many selectors compare a key that is a map of indices (a tie-broken key not rewritten).
int selects_on_position_maps(const Program& p) {
  int count = 0;
  for (const Node& n : p.nodes)
    if (n.kind == NodeKind::Select && p.node(n.inputs[0]).kind == NodeKind::Elementwise) {
      const std::vector<NodeId> support = compiler::support_of(p, n.inputs[0]);
      count += int(std::any_of(support.begin(), support.end(),
                               [&](NodeId s) { return p.node(s).kind == NodeKind::Indices; }));
    }
  return count;
}

// A sort of a sort's output by its own values, the first sort's target written out as `target`.
std::string sort_of_a_sort(const std::string& target) {
  return "target = " + target + ";\n"
         "once = categorical(aggregate(select(target, indices, ==), tokens, \"-\"));\n"
         "again = once + indices / 10;\n"
         "target_again = selector_width(select(again, again, <));\n"
         "categorical(aggregate(select(target_again, indices, ==), once, \"-\"));\n";
}

}  // namespace

TEST_CASE("tiebreak_keys: a sort of a sort's output is rewritten once the first sort never gives its default") {
  // Tracr's sort_twice: the second key reads the first sort's output. Where a strict order ranks the
  // positions, every position is one key's target, so the first sort never gives its default and
  // the second key is defined at every value it can be handed: a second round rewrites it.
  const CompileOptions o = test_options(digits_1_to_4(), 6, Mode::Bidirectional);
  const std::string stable = "selector_width(select(tokens, tokens, <) or\n"
                             "  (select(tokens, tokens, ==) and select(indices, indices, <)))";
  // Tracr's own: a key unique to its position, compared with `<`.
  const std::string tracr = "selector_width(select(tokens + indices / 10, tokens + indices / 10, <))";
  for (const std::string& target : {stable, tracr}) {
    INFO(target);
    const Program source = program_from_text(sort_of_a_sort(target));
    CHECK(values_of(source, o, "once") == std::vector<std::string>{"1", "2", "3", "4"});
    PassRewrite r = rewritten_by(source, o, "width_predicates", "tiebreak_keys");
    CHECK(selects_on_position_maps(r.after) == 0);
    CHECK(agree_on_every_input(r, Mode::Bidirectional, digits_1_to_4(), 6) == 4 + 16 + 64 + 256 + 1024 + 4096);
    const CompileResult twice = compile_program(source, o);
    INFO(twice.report.first_mismatch);
    CHECK(twice.report.mismatches == 0);
    CHECK(run_model(twice.model, "[3,1,4,2,2]") == std::vector<std::string>{"1", "2", "2", "3", "4"});
    // --explain names the s-ops a rewrite left out, and the pass.
    CompileOptions explained = o;
    explained.explain = true;
    explained.verify = false;
    const std::string explanation = compile_program(source, explained).explanation;
    CHECK(explanation.find("\nagain: not in the model: the tiebreak_keys pass computes what reads it without it") !=
          std::string::npos);
    CHECK(explanation.find("\ntarget: not in the model: the count_sorts pass") != std::string::npos);
    CHECK(explanation.find("once: not in the model") == std::string::npos);
  }

  // A stable partition (its values are not a function of its key, so no counting sort): its width
  // is split into two parts and summed, and the sum still ranks the positions.
  const std::string partition =
      "big = tokens > 2;\n"
      "target = selector_width(select(big, big, <) or (select(big, big, ==) and select(indices, indices, <)));\n"
      "partition = categorical(aggregate(select(target, indices, ==), tokens, \"-\"));\npartition;\n";
  const Program split = rewritten_by(program_from_text(partition), o, "width_predicates", "split_widths").after;
  CHECK(count_kind(split, "width_part") == 2);
  CHECK(values_of(split, o, "partition") == std::vector<std::string>{"1", "2", "3", "4"});
  const CompileResult partitioned = compile_program(program_from_text(partition), o);
  CHECK(partitioned.report.mismatches == 0);
  CHECK(run_model(partitioned.model, "[3,1,4,2,2]") == std::vector<std::string>{"1", "2", "2", "3", "4"});

  // Not where a position can be no key's target: a tie that selects the query's own position
  // (targets 1..length), a key two positions share (a tie: both take one target), or a causal
  // query, which counts the keys it sees. The default stays, and the second key, undefined at it,
  // is left as written.
  const std::string own = "selector_width(select(tokens, tokens, <) or\n"
                          "  (select(tokens, tokens, ==) and select(indices, indices, <=)))";
  const std::string shared = "selector_width(select(tokens + indices % 3 / 10, tokens + indices % 3 / 10, <))";
  for (const auto& [target, mode] : {std::pair{own, Mode::Bidirectional}, std::pair{shared, Mode::Bidirectional},
                                     std::pair{stable, Mode::Causal}, std::pair{tracr, Mode::Causal}}) {
    INFO(target << (mode == Mode::Causal ? " causal" : ""));
    const CompileOptions other = test_options(digits_1_to_4(), 6, mode);
    PassRewrite kept = rewritten_by(program_from_text(sort_of_a_sort(target)), other, "width_predicates", "tiebreak_keys");
    CHECK(selects_on_position_maps(kept.after) >= 1);
    CHECK(values_of(kept.after, other, "once") == std::vector<std::string>{"1", "2", "3", "4", "\"-\""});
  }
}
