// Counts to tokens from one dimension (compiler/constructions/scratch_output.cpp): a selector width
// output of fewer than 64 values is read by the tied unembedding from the 1/(w+1) its head writes,
// with no one-hot and no MLP; verified like any other output, and kept out where it cannot hold.
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"
#include "runtime/cpu_backend.hpp"
#include "runtime/residual_trace.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

// The number of MLP units whose input and output weights are both nonzero somewhere.
int used_units(const Model& model) {
  const ModelConfig& c = model.config;
  int used = 0;
  for (const auto& layer : model.w.layers)
    for (int u = 0; u < c.n_inner; ++u) {
      bool in = false, out = false;
      for (int d = 0; d < c.n_embd; ++d) {
        in = in || layer.fc_w[size_t(d) * c.n_inner + u] != 0.0f;
        out = out || layer.fc_proj_w[size_t(u) * c.n_embd + d] != 0.0f;
      }
      used += in && out;
    }
  return used;
}

// hist's closest counts at max length 62, 62 against 61, at the first position of `same` repeated
// 62 times and of `other` 61 times then `same`: the right count with a margin of 40 sigma_nominal
// / sigma (scratch_output.cpp). The inputs of one token repeated hold the closest pairs.
void check_closest_counts(const Model& model, Backend& backend, int same, int other) {
  std::vector<int> repeated(62, same), one_off(62, other);
  one_off.back() = same;
  const PositionOutputs all = run_positions(backend, model, repeated);
  CHECK(all.values.front() == "62");
  CHECK(all.margins.front() > 39.5);
  CHECK(all.margins.front() < 41.0);
  const PositionOutputs near = run_positions(backend, model, one_off);
  CHECK(near.values.front() == "61");
  CHECK(near.values.back() == "1");
  CHECK(near.margins.front() > 39.5);
  CHECK(near.margins.front() < 41.0);
}

}  // namespace

TEST_CASE("scratch output: hist and a count that can be 0 are read from the head's 1/(w+1)") {
  const ProgramFile hist = load_program("hist");
  const Program count_a = program_from_text("count_a = selector_width(select(tokens, \"a\", ==));\ncount_a;\n");
  for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
    for (const Program* program : {&hist.program, &count_a}) {
      const std::string name = program->label(program->output);
      INFO(name << (mode == Mode::Causal ? " causal" : " bidirectional"));
      // Every input up to length 6 over a b c d: each count 0..6 at each position.
      CompileOptions o = test_options(parse_vocabulary("abcd"), 6, mode);
      const CompileResult r = compile_program(*program, o);
      CHECK(r.report.exhaustive);
      CHECK(r.report.mismatches == 0);
      CHECK(r.report.inputs_checked == 5460);
      // One dimension for the count and no MLP: no one-hot, and every unit of GPT-2's MLP unused.
      CHECK(has_label(r.model, name + ".scratch"));
      CHECK_FALSE(has_label(r.model, name + ":"));
      CHECK(used_units(r.model) == 0);
      // A = 0.08 / delta^2 makes the closest counts' margin 40 sigma_nominal / sigma after ln_f
      // (scratch_output.cpp); the verification sees those counts (6 and 5) at length 6. Without an
      // anchor (the count is written after the last LayerNorm a block reads: allocate.cpp) the
      // scratch value moves sigma by a percent or two: 40.47 measured.
      CHECK(r.report.min_logit_margin > 39.5);
      CHECK(r.report.min_logit_margin < 41.0);
      // The trace reads the count off the scratch (1/x - 1), a number checked like the others.
      const ModelPlacement placement = read_placement(r.model);
      const auto sop = std::find_if(placement.sops.begin(), placement.sops.end(),
                                    [&](const SopPlacement& s) { return s.name == name; });
      REQUIRE(sop != placement.sops.end());
      CHECK(sop->reciprocal);
      CHECK(sop->offset == -1.0);
      CHECK(sop->output);
      CHECK(sop->stage == 1);
    }
  }
}

TEST_CASE("scratch output: at max length 62 the closest counts keep a margin of 40") {
  // The margin is 40 sigma_nominal / sigma (40.19 measured: s = 1/63 moves sigma little) and
  // float32 moved it by 0.03 (scratch_output.cpp).
  const ProgramFile f = load_program("hist");
  CompileOptions o = test_options(parse_vocabulary(f.header.vocab_text), 62, Mode::Bidirectional);
  o.verify = false;
  const CompileResult r = compile_program(f.program, o);
  REQUIRE_FALSE(has_label(r.model, "hist:1"));
  CpuBackend backend(r.model);
  const int a = r.model.token_id("a"), b = r.model.token_id("b");
  check_closest_counts(r.model, backend, b, a);
  std::vector<int> halves(62, a);
  for (size_t i = 31; i < halves.size(); ++i) halves[i] = b;
  const PositionOutputs split = run_positions(backend, r.model, halves);
  CHECK(split.values.front() == "31");
  CHECK(split.values.back() == "31");
  // The residual is 8 dimensions at any max length: one bos zero, the four tokens, the count.
  CHECK(r.model.config.n_embd == 8);
}

TEST_CASE("scratch output: counts that print as input tokens read the scratch through pairs that ln_f weighs +G and -G") {
  // hist over the digits: the token "3" is an input row and count 3's unembedding at once
  // (scratch_output.cpp, "Tied tokens"). Every input up to length 6, both modes; then at max
  // length 62 the closest counts, 62 against 61, on inputs of one digit repeated.
  const ProgramFile f = load_program("hist");
  for (Mode mode : {Mode::Causal, Mode::Bidirectional}) {
    INFO((mode == Mode::Causal ? "causal" : "bidirectional"));
    const CompileResult r = compile_program(f.program, test_options(parse_vocabulary("1234"), 6, mode));
    CHECK(r.report.exhaustive);
    CHECK(r.report.mismatches == 0);
    CHECK(r.report.min_logit_margin > 39.5);
    CHECK(r.report.min_logit_margin < 41.0);
    CHECK(used_units(r.model) == 0);
    CHECK_FALSE(has_label(r.model, "hist:3"));
    for (const char* label : {"hist.scratch", "hist.unembed", "hist.unembed.one", "hist.unembed.-one",
                              "hist.unembed.balance"})
      CHECK(has_label(r.model, label));
    // The digits' rows carry their input one-hot and their count's pairs; ln_f reads the pairs only.
    const int three = r.model.token_id("3");
    int pairs = 0;
    for (int d = 0; d < r.model.config.n_embd; ++d) pairs += r.model.w.wte[size_t(three) * r.model.config.n_embd + d] != 0.0f;
    CHECK(pairs == 6);  // tokens:3, the scratch and its partner, the constant and its partner, the balance
    int read = 0;
    for (int d = 0; d < r.model.config.n_embd; ++d) read += r.model.w.ln_f_w[d] != 0.0f;
    CHECK(read == 4);
  }
  CompileOptions o = test_options(parse_vocabulary("1234"), 62, Mode::Bidirectional);
  o.verify = false;
  const CompileResult r = compile_program(f.program, o);
  CpuBackend backend(r.model);
  const int one = r.model.token_id("1");
  check_closest_counts(r.model, backend, one, r.model.token_id("3"));
  const std::vector<int> ones(62, one);
  // The trace decodes the scratch, which also holds the digit's own tiny entry (2e-6 s): 62 to
  // within the 1e-3 of a number, which the reading snaps to.
  std::vector<int> sequence{r.model.bos_id};
  sequence.insert(sequence.end(), ones.begin(), ones.end());
  ForwardOptions fo;
  fo.capture_residual = true;
  const ResidualTrace trace = decode_residual(r.model, backend.forward({sequence}, fo), 0, sequence);
  REQUIRE(trace.placement.sops.size() == 2);  // tokens, hist
  CHECK(trace.decoded.back()[1][1] == "62");
  CHECK(trace.decoded.back()[1][62] == "62");
  // one bos zero, the four digits, the count's scratch and its four tied dimensions.
  CHECK(r.model.config.n_embd == 12);
}

TEST_CASE("scratch output: where it cannot hold, the one-hot (or the number group) stays") {
  const ProgramFile f = load_program("hist");
  const std::vector<Value> letters = parse_vocabulary(f.header.vocab_text);
  // Without LayerNorm the logits would need A itself to carry the margin (ln_f's gain does here),
  // and tied tokens ln_f's signed gains.
  for (const char* vocab : {"abcd", "1234"}) {
    CompileOptions plain = test_options(parse_vocabulary(vocab), 5, Mode::Bidirectional);
    plain.layer_norm = false;
    const CompileResult r = compile_program(f.program, plain);
    CHECK(has_label(r.model, "hist:3"));
    CHECK(r.report.mismatches == 0);
  }
  // A count something else reads: its block's MLP writes what the reader needs.
  const Program plus_one = program_from_text("hist = selector_width(select(tokens, tokens, ==));\nnext = hist + 1;\nnext;\n");
  const CompileResult read = compile_program(plus_one, test_options(letters, 5, Mode::Bidirectional));
  CHECK(has_label(read.model, "next:2"));
  CHECK(used_units(read.model) > 0);
  CHECK(read.report.mismatches == 0);
  // From 64 values on, the number group of number_output.cpp.
  CompileOptions long_options = test_options(letters, 63, Mode::Bidirectional, 1);
  long_options.verify = false;
  CHECK(has_label(compile_program(f.program, long_options).model, "hist.x"));
}
