// Numbers to tokens (compiler/constructions/number_output.cpp): a selector width output of 64 or
// more values is held as its number group and read by the tied unembedding as -(k - w)^2 scores,
// O(1) residual dimensions instead of a one-hot of n + 1; verified like any other output.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "runtime/cpu_backend.hpp"
#include "runtime/residual_trace.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("number output: hist and length of 64 values are a number group the unembedding reads") {
  for (const char* name : {"hist", "length"}) {
    for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
      INFO(name << (mode == Mode::Causal ? " causal" : " bidirectional"));
      const ProgramFile f = load_program(name);
      // Every input up to length 4, then 20 at each length 5..63 (the compiler's own default is
      // 10^4 a length; the long label checks 1,000 a length at 1,024).
      CompileOptions o = test_options(parse_vocabulary(f.header.vocab_text), 63, mode, 20);
      o.exhaustive_limit = 4 + 16 + 64 + 256;
      const CompileResult r = compile_program(f.program, o);
      const std::string out = f.program.label(f.program.output);
      CHECK(r.report.mismatches == 0);
      CHECK(r.report.inputs_checked == 340 + 59 * 20);
      // The group, not a one-hot: n_embd is one bos pad zero anchor, the tokens (hist reads them),
      // the group's 6 and the width's scratch, where a one-hot was 64 dimensions more.
      CHECK(has_label(r.model, out + ".x"));  // labels are prefixes: hist:1 covers hist:10
      CHECK_FALSE(has_label(r.model, out + ":1"));
      CHECK(r.model.config.n_embd <= 16);
      // A = 0.16 / du^2 gives the neighbour w +- 1 a margin of 50 (1 - 2e) = 40 after ln_f, less
      // float32's rounding of logits near 2e7 / 16 here.
      CHECK(r.report.min_logit_margin > 35);
      CHECK(r.report.min_logit_margin < 41);
    }
  }
}

TEST_CASE("number output: the CPU forward reads a count of 40 as the token 40") {
  const ProgramFile f = load_program("hist");
  const CompileResult r = compile_program(f.program, test_options(parse_vocabulary(f.header.vocab_text), 63, Mode::Bidirectional, 1));
  REQUIRE_FALSE(has_label(r.model, "hist:1"));
  std::vector<int> tokens(40, r.model.token_id("a"));
  tokens.push_back(r.model.token_id("b"));
  CpuBackend backend(r.model);
  const PositionOutputs outputs = run_positions(backend, r.model, tokens);
  CHECK(outputs.values.front() == "40");
  CHECK(outputs.values.back() == "1");
}

TEST_CASE("number output: below 64 values no group, and over a vocabulary of digits a one-hot") {
  const ProgramFile f = load_program("hist");
  // Max length 62: 63 values, which the unembedding reads from the head's 1/(w+1)
  // (scratch_output.cpp, its own tests): no group.
  const Model short_model =
      compile_program(f.program, test_options(parse_vocabulary(f.header.vocab_text), 62, Mode::Bidirectional, 1)).model;
  CHECK_FALSE(has_label(short_model, "hist.x"));
  CHECK(has_label(short_model, "hist.scratch"));
  // The token "3" is an input row, which cannot also be the row that reads the number.
  const std::vector<Value> digits = parse_vocabulary("0123");
  const CompileResult r = compile_program(f.program, test_options(digits, 63, Mode::Bidirectional, 1));
  CHECK(has_label(r.model, "hist:3"));
  CHECK(r.report.mismatches == 0);
}

TEST_CASE("number output: the trace, the circuit and the interventions see the count as the s-op it is") {
  // The group is listed among the s-ops (all six dimensions, read through scale and offset), so
  // `run --trace` shows hist after the MLP, and its head and MLP are in the output's circuit.
  const ProgramFile f = load_program("hist");
  const CompileResult r = compile_program(f.program, test_options(parse_vocabulary(f.header.vocab_text), 63,
                                                                  Mode::Bidirectional, 1));
  const ModelPlacement placement = read_placement(r.model);
  const auto hist = std::find_if(placement.sops.begin(), placement.sops.end(),
                                 [](const SopPlacement& s) { return s.name == "hist"; });
  REQUIRE(hist != placement.sops.end());
  CHECK(hist->dims.size() == 6);
  CHECK(hist->scale == 31.0);
  CHECK(hist->offset == 31.0);
  CpuBackend backend(r.model);
  std::vector<int> sequence{r.model.bos_id};
  for (char c : std::string("aabca")) sequence.push_back(r.model.token_id(std::string(1, c)));
  ForwardOptions options;
  options.capture_residual = true;
  const ForwardResult forward = backend.forward({sequence}, options);
  const ResidualTrace trace = decode_residual(r.model, forward, 0, sequence);
  const size_t k = size_t(hist - placement.sops.begin());
  const std::vector<std::string>& after_mlp = trace.decoded.back()[k];
  CHECK(std::vector<std::string>(after_mlp.begin() + 1, after_mlp.end()) ==
        std::vector<std::string>{"3", "3", "1", "1", "3"});
}
