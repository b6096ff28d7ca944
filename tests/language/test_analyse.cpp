// RASP's own layer and head accounting (Weiss et al.; analyse.py of the reference interpreter),
// with a BOS position: the figures the paper gives for its example programs, on the programs/
// files, and the rules themselves on small Programs.
#include <catch2/catch.hpp>

#include <memory>

#include "language/analyse.hpp"
#include "program_files.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

Program from_source(const std::string& text) {
  auto source = std::make_shared<SourceFile>();
  source->name = "analyse.rasp";
  source->text = text;
  return evaluate_program(source);
}

}  // namespace

TEST_CASE("analyse: the paper's layer and head counts for the programs/ files") {
  struct Figure {
    const char* program;
    int layers;
    int max_heads;
    std::vector<int> heads_per_layer;
  };
  for (const Figure& figure : std::vector<Figure>{
           {"reverse", 2, 1, {1, 1}},
           {"hist", 1, 1, {1}},
           {"sort", 2, 1, {1, 1}},
           {"double_hist", 2, 2, {2, 1}},
           {"most_freq", 3, 2, {2, 1, 1}},
           {"dyck1", 2, 1, {1, 1}},
           {"length", 1, 1, {1}},
           {"count_less_freq", 2, 1, {1, 1}},
           {"frac_prevs", 1, 1, {1}},
           // Both balances aggregate with one selector: one head (Tracr spends two).
           {"pair_balance", 1, 1, {1}},
           {"shift", 1, 1, {1}},
           // shift by 1 and by 2 are two selectors in one layer.
           {"detect_pattern", 1, 2, {2}},
           {"aab", 1, 1, {1}},
           {"sort_unique", 2, 1, {1, 1}},
           // The balance aggregates and length share layer 1; the dip check and the last position's
           // balance are two heads of layer 2.
           {"shuffle_dyck", 2, 2, {2, 2}},
           {"shuffle_dyck2", 2, 2, {2, 2}},
           // counts, the rank on a level, the matching opener, the running "ever broken".
           {"dyck2", 4, 1, {1, 1, 1, 1}},
           {"dyck3", 4, 1, {1, 1, 1, 1}},
           // The first "+" takes a layer (is there a "+" before me?) before its index is copied.
           {"long_addition", 6, 2, {2, 1, 1, 1, 1, 1}},
       }) {
    INFO("programs/" << figure.program << ".rasp");
    Analysis analysis = analyse(load_library_program(figure.program));
    CHECK(analysis.layers == figure.layers);
    CHECK(analysis.max_heads() == figure.max_heads);
    CHECK(analysis.heads_per_layer == figure.heads_per_layer);
  }
}

TEST_CASE("analyse: elementwise operations are free, attention adds a layer on its deepest input") {
  Program program = from_source(
      "a = tokens == \"x\";\n"                              // layer 0
      "b = aggregate(select(indices, indices, <=), indicator(a));\n"  // layer 1
      "c = b * 2 + 1;\n"                                    // layer 1 (free)
      "d = selector_width(select(c, c, ==));\n"             // layer 2
      "e = aggregate(select(indices, 0, ==), tokens);\n"    // layer 1
      "f = d + e;\n"                                        // layer 2
      "f;\n");
  Analysis analysis = analyse(program);
  CHECK(analysis.layers == 2);
  CHECK(analysis.heads_per_layer == std::vector<int>{2, 1});
  CHECK(analysis.layer_of[size_t(program.find("a"))] == 0);
  CHECK(analysis.layer_of[size_t(program.find("b"))] == 1);
  CHECK(analysis.layer_of[size_t(program.find("c"))] == 1);
  CHECK(analysis.layer_of[size_t(program.find("d"))] == 2);
  CHECK(analysis.layer_of[size_t(program.find("e"))] == 1);
  CHECK(analysis.layer_of[size_t(program.find("f"))] == 2);
}

TEST_CASE("analyse: identical selectors built twice are one head, unused s-ops do not count") {
  Program program = from_source(
      "def prefix_mean(x) { return aggregate(select(indices, indices, <=), x); }\n"
      "unused = selector_width(select(tokens, tokens, <));\n"
      "m = prefix_mean(indicator(tokens == \"a\")) + prefix_mean(indicator(tokens == \"b\"));\n"
      "w = selector_width(select(indices, indices, <=));\n"
      "m + w;\n");
  Analysis analysis = analyse(program);
  CHECK(analysis.layers == 1);
  // The two prefix means and the width share select(indices, indices, <=).
  CHECK(analysis.heads_per_layer == std::vector<int>{1});
  CHECK(analysis.max_heads() == 1);
  // The same structure with a different comparison is another head.
  Program other = from_source(
      "aggregate(select(indices, indices, <=), indicator(tokens == \"a\")) + "
      "aggregate(select(indices, indices, <), indicator(tokens == \"a\"));\n");
  CHECK(analyse(other).heads_per_layer == std::vector<int>{2});
}

TEST_CASE("analyse: a program without attention has no layers") {
  Analysis analysis = analyse(from_source("tokens == \"a\";\n"));
  CHECK(analysis.layers == 0);
  CHECK(analysis.heads_per_layer.empty());
  CHECK(analysis.max_heads() == 0);
}
