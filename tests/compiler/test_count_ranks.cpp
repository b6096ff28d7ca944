// Count ranks (compiler/constructions/count_rank.cpp): which selectors compare ranks instead of
// counts, that the rewritten program computes what the source does, and double_hist's models:
// exact, and O(n) parameters up to GPT-2's context.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "compiler/ir.hpp"
#include "compiler/pipeline.hpp"
#include "runtime/model_output.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

PassRewrite count_ranks_of(const Program& source, const CompileOptions& o) {
  return rewritten_by(source, o, "count_sorts", "count_ranks");
}

int ranks(const Program& p) { return count_kind(p, "count_rank"); }

// The selector of counts `compared`, read by a width (double_hist's shape, the comparison `op`).
std::string counts_compared(const std::string& x, const std::string& op) {
  return "hist = selector_width(select(" + x + ", " + x + ", ==));\nselector_width(select(hist, hist, " + op + "));\n";
}

}  // namespace

TEST_CASE("count_ranks: a selector comparing one categorical s-op's counts, from max(16, m(m + 1)) on") {
  const std::vector<Value> abcd = parse_vocabulary("abcd");
  CompileOptions o = test_options(abcd, 20, Mode::Bidirectional);
  CHECK(ranks(count_ranks_of(load_program("double_hist").program, o).after) == 1);
  for (const char* op : {"==", "<", ">=", "!="})
    CHECK(ranks(count_ranks_of(program_from_text(counts_compared("tokens", op)), o).after) == 1);
  const PassRewrite named = count_ranks_of(load_program("double_hist").program, o);
  for (const char* name : {"hist_share_1", "hist_share_4", "hist_count_rank", "hist_rank"}) {
    INFO(name);
    CHECK(std::any_of(named.after.nodes.begin(), named.after.nodes.end(),
                      [&](const Node& n) { return n.name == name; }));
  }
  // What a trace or a picture shows for them: hist's expression, and what each is of it.
  std::vector<std::string> shown;
  for (NodeId id = 0; id < NodeId(named.after.nodes.size()); ++id)
    if (named.after.node(id).name.rfind("hist_", 0) == 0) shown.push_back(named.after.shown_name(id));
  CHECK(shown == std::vector<std::string>{"selector_width(same_token), share of a",
                                          "selector_width(same_token), share of b",
                                          "selector_width(same_token), share of c",
                                          "selector_width(same_token), share of d",
                                          "selector_width(same_token), its count's rank, summed",
                                          "selector_width(same_token), its count's rank"});
  // 4 values: from max length 20; 2 values: from 16.
  o.max_len = 19;
  CHECK(ranks(count_ranks_of(load_program("double_hist").program, o).after) == 0);
  o = test_options(parse_vocabulary("ab"), 15, Mode::Bidirectional);
  CHECK(ranks(count_ranks_of(program_from_text(counts_compared("tokens", "==")), o).after) == 0);
  o.max_len = 16;
  CHECK(ranks(count_ranks_of(program_from_text(counts_compared("tokens", "==")), o).after) == 1);
  // Causal: a query counts its prefix only, so two positions' counts are not of one input.
  o.mode = Mode::Causal;
  CHECK(ranks(count_ranks_of(program_from_text(counts_compared("tokens", "==")), o).after) == 0);
  // Not a count of one s-op's own values on both sides.
  o = test_options(abcd, 64, Mode::Bidirectional);
  CHECK(ranks(count_ranks_of(program_from_text("a = selector_width(select(tokens, tokens, ==));\n"
                                               "b = selector_width(select(tokens, tokens, <));\n"
                                               "selector_width(select(a, b, ==));\n"),
                             o).after) == 0);
  CHECK(ranks(count_ranks_of(program_from_text(counts_compared("indices", "==")), o).after) == 0);
  // Values that `==` does not tell apart (True == 1) count together: left alone.
  CHECK(ranks(count_ranks_of(program_from_text(counts_compared("(tokens == \"c\") if tokens > \"b\" else 1", "==")), o)
                  .after) == 0);
}

TEST_CASE("count_ranks: the rewritten program computes what the source does, on every input up to length 6") {
  const std::vector<Value> abcd = parse_vocabulary("abcd");
  const CompileOptions o = test_options(abcd, 20, Mode::Bidirectional);
  for (const Program& source : {load_program("double_hist").program, program_from_text(counts_compared("tokens", "<")),
                                program_from_text(counts_compared("tokens > \"b\"", ">="))}) {
    const PassRewrite r = count_ranks_of(source, o);
    REQUIRE(ranks(r.after) == 1);
    CHECK(agree_on_every_input(r, o.mode, abcd, 6) == 4 + 16 + 64 + 256 + 1024 + 4096);
  }
}

TEST_CASE("count_ranks: double_hist is O(n) parameters, exact at max length 64") {
  ProgramFile f = load_program("double_hist");
  // Every input up to length 6, then 3 random inputs at each length 7..64.
  CompileOptions o = test_options(header_vocabulary(f.header), 64, Mode::Bidirectional, 3);
  const CompileResult at_64 = compile_program(f.program, o);
  INFO(at_64.report.first_mismatch);
  CHECK(at_64.report.mismatches == 0);
  CHECK(at_64.report.inputs_checked == 5460 + 3 * 58);
  CHECK(at_64.report.parameters == 56864);  // 238,936 as the counts' one-hots
  CHECK(run_model(at_64.model, "aabbbcd") == std::vector<std::string>{"1", "1", "1", "1", "1", "2", "2"});
  o.max_len = 1024;
  o.verify = false;
  CHECK(compile_program(f.program, o).report.parameters == 600224);  // 54,930,136 before
}
