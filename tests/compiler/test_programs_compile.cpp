// Every program of programs/ that the compiler supports compiles at maximum lengths 8 and 16
// with zero mismatches (exhaustive up to length 6, sampled beyond), in bidirectional mode and,
// where its header says `# causal: yes`, in causal mode; block counts equal RASP's analysis.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "language/analyse.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

// Every program of programs/.
const std::vector<std::string> kCompiled = {
    "aab",          "count_less_freq", "detect_pattern", "double_hist", "frac_prevs", "hist",
    "length",       "pair_balance",    "reverse",        "shift",       "sort",       "most_freq",
    "sort_unique",  "dyck1",           "dyck2",          "dyck3",       "shuffle_dyck", "shuffle_dyck2",
    "long_addition"};

// The vocabulary a program is checked over: its header's, except long_addition's eleven symbols,
// which would make exhaustive checking to length 6 1.9 million inputs. 0, 1, 9 and + still give
// sums without and with carries, and carries through runs of nines; tests/compiler/long checks
// all eleven symbols at max lengths 8 and 16 (every input up to length 4, then 10^4 random
// inputs of each longer length).
std::vector<Value> test_vocabulary(const std::string& name, const ProgramFile& f) {
  if (name == "long_addition") return {Value::of_string("0"), Value::of_string("1"), Value::of_string("9"), Value::of_string("+")};
  return header_vocabulary(f.header);
}

void check_compiles(const std::string& name, int max_len, Mode mode) {
  ProgramFile f = load_program(name);
  CompileOptions o = test_options(test_vocabulary(name, f), max_len, mode);
  CompileResult r = compile_program(f.program, o);
  INFO(name << " max_len " << max_len << (mode == Mode::Causal ? " causal" : " bidirectional") << ": "
            << r.report.first_mismatch);
  CHECK(r.report.inputs_checked > 0);
  CHECK(r.report.mismatches == 0);
  if (!r.report.numerical_output) CHECK(r.report.min_logit_margin > 10.0);
  else CHECK(r.report.worst_numerical_error < 1e-3);
}

}  // namespace

TEST_CASE("every supported program compiles at max length 8 with zero mismatches") {
  for (const std::string& name : kCompiled) {
    ProgramFile f = load_program(name);
    check_compiles(name, 8, Mode::Bidirectional);
    if (f.header.causal.value_or(false)) check_compiles(name, 8, Mode::Causal);
  }
}

TEST_CASE("every supported program compiles at max length 16 with zero mismatches") {
  for (const std::string& name : kCompiled) {
    ProgramFile f = load_program(name);
    check_compiles(name, 16, Mode::Bidirectional);
    if (f.header.causal.value_or(false)) check_compiles(name, 16, Mode::Causal);
  }
}

TEST_CASE("block counts equal RASP's own layer count") {
  const std::vector<std::pair<std::string, int>> expected = {
      {"hist", 1},  {"reverse", 2},   {"double_hist", 2},  {"length", 1}, {"frac_prevs", 1},
      {"sort", 2},  {"most_freq", 3}, {"sort_unique", 2},  {"dyck1", 2},  {"shuffle_dyck", 2},
      {"dyck2", 4}, {"dyck3", 4},     {"long_addition", 6}};
  for (const auto& [name, blocks] : expected) {
    ProgramFile f = load_program(name);
    CompileOptions o = test_options(header_vocabulary(f.header), 8, Mode::Bidirectional);
    o.verify = false;
    CompileResult r = compile_program(f.program, o);
    INFO(name);
    CHECK(r.report.layers == blocks);
    CHECK(analyse(f.program).layers == blocks);
  }
}

TEST_CASE("an attention-only program gets a 1-unit MLP of zeros, counted in its parameters") {
  // frac_prevs is one numerical aggregate: a head and no MLP work. HF's GPT-2 crashes on
  // n_inner 0 and llama.cpp's gpt2 graph needs an MLP, so the compiler never emits one.
  ProgramFile f = load_program("frac_prevs");
  CompileResult result = compile_program(f.program, test_options(header_vocabulary(f.header), 8, Mode::Causal));
  const Model& model = result.model;
  REQUIRE(model.config.n_layer == 1);
  CHECK(model.config.n_inner == 1);
  const LayerWeights& L = model.w.layers[0];
  const int C = model.config.n_embd;
  for (int c = 0; c < C; ++c) {
    CHECK(L.fc_w[c] == 0.0f);
    CHECK(L.fc_proj_w[c] == 0.0f);
    CHECK(L.fc_proj_b[c] == 0.0f);
  }
  CHECK(L.fc_b[0] == 0.0f);
  CHECK(result.report.parameters == parameter_count(model.config));
  CHECK(result.report.mismatches == 0);
}
