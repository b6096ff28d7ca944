// The passes one at a time, on small programs: value sets, encodings, fusion, schedule, labels,
// and the constructions (BOS default, selector_width at every width, numerical arithmetic).
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "compiler/ir.hpp"
#include "runtime/model_output.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

std::vector<std::string> run_model(const Model& model, const std::string& input) {
  std::unique_ptr<Backend> backend = make_backend(model);
  return run_positions(*backend, model, parse_model_input(model, input)).values;
}

}  // namespace

TEST_CASE("infer: exact value sets and encodings") {
  Program p = program_from_text(
      "frac = aggregate(select(indices, indices, <=), indicator(tokens == \"a\"));\n"
      "big = frac > 0.5;\nw = selector_width(select(tokens, tokens, ==));\nbig;");
  CompileOptions o = test_options(parse_vocabulary("ab"), 3, Mode::Bidirectional);
  compiler::Inference inf = compiler::infer(p, o);
  NodeId frac = p.find("frac"), big = p.find("big");
  CHECK(inf.info[frac].encoding == Encoding::Numerical);
  // Means of 0/1 values over 1..3 positions, plus the default 0.
  std::vector<std::string> values;
  for (const Value& v : inf.info[frac].values) values.push_back(to_display(v));
  CHECK(values == std::vector<std::string>{"0", "1/3", "1/2", "2/3", "1"});
  CHECK(inf.info[big].encoding == Encoding::Categorical);
  CHECK(inf.info[p.find("w")].needed == false);
}

TEST_CASE("simplify merges equal nodes and drops dead ones") {
  Program p = program_from_text("a = tokens == \"a\";\nb = tokens == \"a\";\nunused = indices + 1;\na and b;");
  Program s = compiler::simplify(p);
  // tokens, the constant, one comparison, and the conjunction.
  CHECK(s.nodes.size() == 4);
}

TEST_CASE("schedule fuses a selector width with the map that reads it: reverse in 2 blocks") {
  ProgramFile f = load_program("reverse");
  CompileOptions o = test_options(parse_vocabulary("abcd"), 5, Mode::Bidirectional);
  o.verify = false;
  o.dump_after = "schedule";
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.layers == 2);
  CHECK(r.dump.find("block 1\n  attention: length\n  mlp:") != std::string::npos);
  CHECK(r.dump.find("length as 1/(w+1)") != std::string::npos);
}

TEST_CASE("allocate labels every residual dimension") {
  ProgramFile f = load_program("hist");
  CompileOptions o = test_options(parse_vocabulary("abcd"), 5, Mode::Bidirectional);
  o.verify = false;
  CompileResult r = compile_program(f.program, o);
  const auto& labels = r.model.residual_labels;
  CHECK(labels[0] == "one");
  CHECK(labels[1] == "bos");
  CHECK(std::find(labels.begin(), labels.end(), "tokens:a") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "hist:5") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "hist.scratch") != labels.end());
  // At Tracr's setting (vocabulary of 4, length 5) the histogram is narrower than Tracr's 19.
  CHECK(r.model.config.n_embd < 19);
  CHECK(r.model.config.n_layer == 1);
}

TEST_CASE("an aggregate that selects nothing gives its default through BOS") {
  Program p = program_from_text("aggregate(select(indices, 5, ==), tokens, \"z\");");
  CompileOptions o = test_options(parse_vocabulary("hey"), 6, Mode::Bidirectional);
  CompileResult r = compile_program(p, o);
  CHECK(r.report.mismatches == 0);
  CHECK(run_model(r.model, "hey") == std::vector<std::string>{"z", "z", "z"});
  CHECK(run_model(r.model, "heyhey") == std::vector<std::string>{"y", "y", "y", "y", "y", "y"});
}

TEST_CASE("selector_width is exact at every width up to the maximum length, with LayerNorm and GELU") {
  for (int n : {8, 24}) {
    Program p = program_from_text("selector_width(select(tokens, tokens, ==));");
    CompileOptions o = test_options(parse_vocabulary("ab"), n, Mode::Bidirectional, 200);
    CompileResult r = compile_program(p, o);
    CHECK(r.report.mismatches == 0);
    std::string all_a(size_t(n), 'a');
    std::vector<std::string> expected(size_t(n), std::to_string(n));
    CHECK(run_model(r.model, all_a) == expected);
  }
}

TEST_CASE("numerical arithmetic: round((indices + 1) * mean)") {
  Program p = program_from_text("round((indices + 1) * aggregate(select(indices, indices, <=), tokens));");
  CompileOptions o = test_options(parse_vocabulary("[1,2,3,6]"), 5, Mode::Bidirectional);
  CompileResult r = compile_program(p, o);
  CHECK(r.report.mismatches == 0);
  CHECK(run_model(r.model, "[1,2,3,6]") == std::vector<std::string>{"1", "3", "6", "12"});
}

TEST_CASE("Tracr-style models: no LayerNorm, ReLU") {
  ProgramFile f = load_program("sort");
  CompileOptions o = test_options(header_vocabulary(f.header), 8, Mode::Bidirectional);
  o.layer_norm = false;
  o.activation = Activation::Relu;
  CompileResult r = compile_program(f.program, o);
  CHECK(r.report.mismatches == 0);
  CHECK(!r.model.config.layer_norm);
}

TEST_CASE("the model's metadata says how to read it") {
  ProgramFile f = load_program("frac_prevs");
  CompileOptions o = test_options(header_vocabulary(f.header), 6, Mode::Causal);
  o.source_text = f.source->text;
  CompileResult r = compile_program(f.program, o);
  CHECK(r.model.metadata["mode"] == "causal");
  CHECK(r.model.metadata["output"]["encoding"] == "numerical");
  CHECK(r.model.metadata["program"] == f.source->text);
  CHECK(r.model.metadata["compile"]["mismatches"] == 0);
}
