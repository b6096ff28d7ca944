// Sums of means over one selector (compiler/merge_means.cpp): which merge into one mean, that the
// rewritten program computes what the source does, and Tracr's weighted difference of two
// numerical means compiled as the one mean it is.
#include <catch2/catch.hpp>

#include <algorithm>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

const char* const kPrefix = "s = select(indices, indices, <=);\nones = indicator(tokens == 1);\ntwos = indicator(tokens == 2);\n";

PassRewrite merged(const std::string& last_line, const CompileOptions& o) {
  return rewritten_by(program_from_text(std::string(kPrefix) + last_line + "\n"), o, "simplify", "merge_means");
}

int aggregates(const Program& p) {
  return int(std::count_if(p.nodes.begin(), p.nodes.end(), [&](const Node& n) { return n.kind == NodeKind::Aggregate; }));
}

// Whether the output is a mean (not a map of one).
bool output_is_mean(const Program& p) { return p.node(p.output).kind == NodeKind::Aggregate; }

// Whether the program is one mean, and the output is that mean.
bool one_mean(const Program& p) { return aggregates(p) == 1 && output_is_mean(p); }

}  // namespace

TEST_CASE("merge_means: sums of means over one selector, scaled by numbers or by one factor, are one mean") {
  const CompileOptions o = test_options(digits_1_to_4(), 6, Mode::Bidirectional);
  CHECK(one_mean(merged("aggregate(s, ones) - aggregate(s, twos);", o).after));
  // Numbers go inside, on either side of the product.
  CHECK(one_mean(merged("2 * aggregate(s, ones) - aggregate(s, twos);", o).after));
  CHECK(one_mean(merged("aggregate(s, ones) * 3 + aggregate(s, twos) * -1;", o).after));
  // Means annotated numerical merge, and the merged one stays numerical.
  Program p = merged("numerical(2 * numerical(aggregate(s, ones)) - numerical(aggregate(s, twos)));", o).after;
  REQUIRE(one_mean(p));
  CHECK(p.node(p.output).annotation == Encoding::Numerical);
  // A factor both share stays outside: (indices + 1) times one mean.
  p = merged("(indices + 1) * aggregate(s, ones) - (indices + 1) * aggregate(s, twos);", o).after;
  CHECK(aggregates(p) == 1);
  CHECK_FALSE(output_is_mean(p));

  // A numerical product of a number and a mean read by nothing else is a mean; unannotated, the
  // product is categorical (a selector may compare it), and a mean read elsewhere stays the one
  // mean there is (merged, the product would be a second).
  CHECK(one_mean(merged("numerical(3 * aggregate(s, ones));", o).after));
  CHECK_FALSE(output_is_mean(merged("3 * aggregate(s, ones);", o).after));
  CHECK(aggregates(merged("m = aggregate(s, ones);\nnumerical(3 * m) + selector_width(select(m, m, ==));", o).after) == 1);

  // Not merged: two selectors, a copy (categorical()), a factor that is neither a number nor shared.
  CHECK(aggregates(merged("aggregate(s, ones) - aggregate(select(indices, indices, >=), twos);", o).after) == 2);
  CHECK(aggregates(merged("categorical(aggregate(s, ones)) - aggregate(s, twos);", o).after) == 2);
  CHECK(aggregates(merged("tokens * aggregate(s, ones) + aggregate(s, twos);", o).after) == 2);
}

TEST_CASE("merge_means: the merged program computes what the source does, on every input up to length 6") {
  for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
    const CompileOptions o = test_options(digits_1_to_4(), 6, mode);
    for (const char* line :
         {"aggregate(s, ones) - aggregate(s, twos);", "2 * aggregate(s, ones) - aggregate(s, twos);",
          "aggregate(s, ones) * 3 + aggregate(s, twos) * -1;",
          "numerical(2 * numerical(aggregate(s, ones)) - numerical(aggregate(s, twos)));",
          "(indices + 1) * aggregate(s, ones) - (indices + 1) * aggregate(s, twos);",
          "numerical(0.25 * aggregate(select(tokens, tokens, <), tokens, 3));",
          "0.5 * aggregate(select(tokens, tokens, <), tokens, 7) + aggregate(select(tokens, tokens, <), ones, 1);"}) {
      INFO(line << (mode == Mode::Causal ? " causal" : ""));
      PassRewrite r = merged(line, o);
      REQUIRE(aggregates(r.after) == 1);
      CHECK(agree_on_every_input(r, mode, digits_1_to_4(), 6) == 4 + 16 + 64 + 256 + 1024 + 4096);
    }
  }
}

TEST_CASE("merge_means: Tracr's weighted difference of two numerical means is one head and no MLP") {
  // LinearSequenceMap(frac_prevs(a), frac_prevs(b), 2, -1), as the Tracr converter writes it.
  const Program program = program_from_text(std::string(kPrefix) +
                                            "numerical(2 * numerical(aggregate(s, ones)) - numerical(aggregate(s, twos)));\n");
  const CompileResult r = compile_program(program, test_options(digits_1_to_4(), 8, Mode::Causal));
  INFO(r.report.first_mismatch);
  CHECK(r.report.mismatches == 0);
  CHECK(r.report.numerical_output);
  CHECK(r.report.layers == 1);
  CHECK(r.report.heads == 1);
  CHECK(r.report.n_inner <= 1);  // the block's MLP is unused (GPT-2 keeps one unit of zeros)
}
