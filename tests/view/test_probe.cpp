// The linear probes `raspc view` shows for a model without placement, checked on compiled models,
// whose residual holds every s-op exactly: a probe must read a value wherever the compiler put it
// and must not where the value cannot be known yet.
#include <catch2/catch.hpp>

#include "../compiler/compile_helpers.hpp"
#include "runtime/cpu_backend.hpp"
#include "view/probe.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

const SopProbe& probe_of(const std::vector<SopProbe>& probes, const std::string& sop) {
  for (const SopProbe& p : probes)
    if (p.sop == sop) return p;
  FAIL("no probe of " << sop);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("probes: a compiled model's s-ops are read exactly from the stage that completes them") {
  const ProgramFile f = load_program("hist");
  // Without LayerNorm an MLP writes hist's one-hot. (Under it the unembedding reads hist from its
  // head's 1/(w+1), compiler/constructions/scratch_output.cpp: one number, which a linear read onto
  // the counts' one-hot does not recover exactly; the test below.)
  CompileOptions o = test_options(parse_vocabulary("1234"), 6, Mode::Bidirectional);
  o.source_text = f.source->text;  // the model keeps its program, which the probes evaluate
  o.verify = false;
  o.layer_norm = false;
  const Model model = compile_program(f.program, o).model;
  CpuBackend backend(model);
  const std::vector<SopProbe> probes = probe_sops(model, backend);
  // hist names one s-op; one block: stages 0 (embedding), 1 (after attention), 2 (after the MLP).
  REQUIRE(probes.size() == 1);
  const SopProbe& hist = probe_of(probes, "hist");
  REQUIRE(hist.accuracy.size() == 3);
  CHECK(hist.values >= 3);  // the counts the sampled inputs hold: 1 to 6 at max length 6
  // The MLP writes hist's one-hot: a linear read of it is exact on every held-out position.
  CHECK(hist.accuracy[2] == 1.0);
  CHECK(hist.best_stage == 2);
  // The embedding knows one token and its position, not how often the token occurs.
  CHECK(hist.accuracy[0] < 0.9);
  CHECK(hist.baseline < hist.accuracy[2]);
  // The same inputs for the same seed: the figures are reproducible.
  CHECK(probe_sops(model, backend)[0].accuracy == hist.accuracy);
}

TEST_CASE("probes: hist held as its head's 1/(w+1) is read from the attention on") {
  const ProgramFile f = load_program("hist");
  CompileOptions o = test_options(parse_vocabulary(f.header.vocab_text), 6, Mode::Bidirectional);
  o.source_text = f.source->text;
  o.verify = false;
  const Model model = compile_program(f.program, o).model;
  CpuBackend backend(model);
  const std::vector<SopProbe> probes = probe_sops(model, backend);
  const SopProbe& hist = probe_of(probes, "hist");
  REQUIRE(hist.accuracy.size() == 3);
  // The count is known after the attention (stage 1), not before; the MLP adds nothing.
  CHECK(hist.accuracy[0] < 0.9);
  CHECK(hist.accuracy[1] > hist.baseline);
  CHECK(hist.accuracy[2] == hist.accuracy[1]);
}

TEST_CASE("probes: a model that keeps no program has none") {
  const ProgramFile f = load_program("hist");
  Model model = compile_program(f.program, test_options(parse_vocabulary(f.header.vocab_text), 4, Mode::Bidirectional)).model;
  model.metadata.erase("program");
  CpuBackend backend(model);
  CHECK(probe_sops(model, backend).empty());
}
