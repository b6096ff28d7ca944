// Interventions beside the interpreter's predictions (circuit/interventions.hpp), and their check
// over random pairs (circuit/verify_interventions.hpp): compiled models agree with their programs.
#include <catch2/catch.hpp>

#include "circuit/interventions.hpp"
#include "circuit/verify_interventions.hpp"
#include "circuit_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

std::vector<int> tokens_of(const Model& model, const std::string& text) { return parse_model_input(model, text); }

std::string error_of(const std::function<void()>& work) {
  try {
    work();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("interventions: patching hist's count from another input, in the model and the program") {
  const Model model = compiled_model("hist", 5, Mode::Bidirectional);
  Intervener intervener(model);
  CHECK(intervener.patchable() == std::vector<std::string>{"tokens", "hist"});
  const InterventionResult r = intervener.patch(tokens_of(model, "abbd"), tokens_of(model, "aaab"), "hist");
  CHECK(r.clean == std::vector<std::string>{"1", "2", "2", "1"});
  CHECK(r.model == std::vector<std::string>{"3", "3", "3", "1"});  // the source's counts, position by position
  CHECK(r.predicted == r.model);
  CHECK(r.agree);
  CHECK(r.changed);
  CHECK(r.description == "hist patched from [a,a,a,b]");
}

TEST_CASE("interventions: ablations and what the program predicts of them") {
  // reverse: every position copies the token at length - i - 1 (layer 1's head, a numerical
  // selector), an aggregate with default 0. Moved to BOS, the copying head gives the default.
  const Model reverse = compiled_model("reverse", 5, Mode::Bidirectional);
  Intervener on_reverse(reverse);
  const std::string copying = "a1.0";
  REQUIRE(on_reverse.circuit().node(copying)->writes == std::vector<std::string>{"reversed"});
  const InterventionResult bos = on_reverse.ablate(tokens_of(reverse, "abcd"), copying, Ablation::Bos);
  CHECK(bos.predicted == std::vector<std::string>{"0", "0", "0", "0"});
  CHECK(bos.model == bos.predicted);
  CHECK(bos.agree);
  CHECK(bos.changed);
  // Zeroing a categorical s-op's one-hot leaves no value of the program: no prediction, said so.
  const InterventionResult zero = on_reverse.ablate(tokens_of(reverse, "abcd"), copying, Ablation::Zero);
  CHECK(zero.predicted.empty());
  CHECK(zero.no_prediction.find("one-hot dimensions leaves no value of the program") != std::string::npos);

  // frac_prevs: a numerical mean, written linearly: zeroed it is 0, averaged its exact mean.
  const Model frac = compiled_model("frac_prevs", 5, Mode::Causal);
  Intervener on_frac(frac);
  const InterventionResult zeroed = on_frac.ablate(tokens_of(frac, "xaxb"), "a0.0", Ablation::Zero);
  CHECK(zeroed.predicted == std::vector<std::string>{"0", "0", "0", "0"});
  CHECK(zeroed.agree);
  const InterventionResult mean = on_frac.ablate(tokens_of(frac, "xaxb"), "a0.0", Ablation::Mean, {}, 200, 7);
  CHECK(mean.agree);
  CHECK(mean.changed);
  // The same seed, the same reference inputs: the same result.
  CHECK(on_frac.ablate(tokens_of(frac, "xaxb"), "a0.0", Ablation::Mean, {}, 200, 7).model == mean.model);
  // Outside the circuit: the prediction is the untouched program.
  const InterventionResult outside = on_frac.ablate(tokens_of(frac, "xaxb"), "m0", Ablation::Zero);
  CHECK(outside.agree);
  CHECK_FALSE(outside.changed);
}

TEST_CASE("interventions: mistakes are user errors that say what to do") {
  const Model model = compiled_model("hist", 4, Mode::Bidirectional);
  Intervener intervener(model);
  const auto a = tokens_of(model, "abc"), b = tokens_of(model, "ab");
  CHECK(error_of([&] { intervener.patch(a, a, "hst"); }) ==
        "--sop: error: \"hst\" is no s-op of the program that this model holds in dimensions of its own (did you mean \"hist\"?); it "
        "can patch tokens, hist\n");
  CHECK(error_of([&] { intervener.patch(a, b, "hist"); }) ==
        "--from: error: has 2 tokens and the input 3: an interchange needs two inputs of one length\n");
  CHECK(error_of([&] { intervener.ablate(a, "a1.0", Ablation::Zero); }) ==
        "--ablate: error: \"a1.0\" is no head or MLP of this model; it has a0.0, m0 (aL.H: layer L's head H; mL: "
        "layer L's MLP)\n");
  CHECK(error_of([&] { intervener.ablate(a, "m0", Ablation::Bos); }) ==
        "--ablate: error: an MLP has no attention to move to BOS; ablate m0 with zero or mean\n");
  CHECK(error_of([] { parse_ablation("half", "--how"); }).find("\"half\" is no ablation") != std::string::npos);
  Model without_program = model;
  without_program.metadata.erase("program");
  CHECK(error_of([&] { Intervener{without_program}; }).find("this model keeps no program") != std::string::npos);
}

TEST_CASE("interventions: a model of no blocks patches its s-op and has nothing to ablate") {
  // An embedded map's model (compiler/constructions/embedded_map.cpp): the embeddings compute it.
  const std::string text = "even = indices % 2 == 0;\neven;\n";
  CompileOptions o = test_options(parse_vocabulary("ab"), 4, Mode::Bidirectional);
  o.source_text = text;
  const Model embedded = compile_program(program_from_text(text), o).model;
  REQUIRE(embedded.config.n_layer == 0);
  CHECK(error_of([&] { Intervener{embedded}.ablate(tokens_of(embedded, "ab"), "m0", Ablation::Zero); }) ==
        "--ablate: error: \"m0\" is no head or MLP of this model; it has none: it has no blocks, and its embeddings "
        "compute the output\n");
  // verify-interventions patches its one s-op and says why it ablates nothing.
  InterventionCheckOptions options;
  options.pairs = 50;
  const InterventionReport report = verify_interventions(embedded, options);
  CHECK(report.failures() == 0);
  REQUIRE(report.interchanges.size() == 1);
  CHECK(report.interchanges[0].sop == "even");
  CHECK(report.interchanges[0].agreed == 50);
  CHECK(report.ablations.empty());
  CHECK(format_intervention_report(report).find(
            "zero ablations: none (the model has no heads or MLPs: its embeddings compute the output)\n") !=
        std::string::npos);
}

TEST_CASE("interventions: an embedded map through pairs patches its partners and pad with it") {
  // A map whose values are input symbols (tied rows) and a map of the token and the position: the
  // unembedding reads the output's dimensions, their partners and `pad`, which keeps each row's sum
  // at 0 (compiler/constructions/embedded_map.cpp). Patched with all three, a position is the other
  // input's; patched in its own dimensions alone, 178 of 200 tied-map patches disagreed.
  for (const char* text : {"half = {0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3}[tokens];\nhalf;\n",
                           "masked = 0 if (indices + 1) % 3 == 0 else tokens;\nmasked;\n"}) {
    INFO(text);
    std::vector<Value> digits;
    for (int d = 0; d <= 6; ++d) digits.push_back(Value::of_int(d));
    CompileOptions o = test_options(digits, 6, Mode::Bidirectional);
    o.source_text = text;
    const Model model = compile_program(program_from_text(text), o).model;
    REQUIRE(model.config.n_layer == 0);
    InterventionCheckOptions options;
    options.pairs = 200;
    const InterventionReport report = verify_interventions(model, options);
    CHECK(report.failures() == 0);
    REQUIRE(report.interchanges.size() == 1);
    CHECK(report.interchanges[0].agreed == 200);
  }
}

TEST_CASE("verify-interventions: hist, reverse and frac_prevs at 8 agree on 200 pairs per s-op") {
  for (const auto& [name, mode] : {std::pair{"hist", Mode::Bidirectional}, std::pair{"reverse", Mode::Causal},
                                   std::pair{"frac_prevs", Mode::Causal}}) {
    INFO(name);
    const Model model = compiled_model(name, 8, mode);
    InterventionCheckOptions options;
    options.pairs = 200;
    const InterventionReport report = verify_interventions(model, options);
    CHECK(report.failures() == 0);
    CHECK(report.max_length == 8);
    CHECK(!report.interchanges.empty());
    for (const InterchangeCheck& c : report.interchanges) {
      INFO(c.sop);
      CHECK(c.pairs + c.undefined == 200);
      CHECK(c.agreed == c.pairs);
    }
    // Every node outside the circuit changed nothing; every node inside changed something.
    for (const AblationCheck& c : report.ablations) {
      INFO(c.node);
      CHECK(c.inputs == 200);
      CHECK((c.changed > 0) == c.in_circuit);
    }
    const nlohmann::json j = intervention_report_json(report);
    CHECK(j["failures"] == 0);
    CHECK(j["interchanges"].size() == report.interchanges.size());
  }
}

TEST_CASE("verify-interventions: a disagreement is counted and kept to reproduce") {
  // A model whose weights were changed after the compile: the counts 1 and 2 unembed as each other.
  Model model = compiled_model("hist", 4, Mode::Bidirectional);
  const int C = model.config.n_embd, one = model.token_id("1"), two = model.token_id("2");
  REQUIRE((one > 0 && two > 0));
  for (int c = 0; c < C; ++c) std::swap(model.w.wte[size_t(one) * C + c], model.w.wte[size_t(two) * C + c]);
  InterventionCheckOptions options;
  options.pairs = 50;
  const InterventionReport report = verify_interventions(model, options);
  CHECK(report.failures() > 0);
  const std::string text = format_intervention_report(report);
  CHECK(text.find("interventions disagree with the interpreter") != std::string::npos);
  bool kept = false;
  for (const InterchangeCheck& c : report.interchanges) kept = kept || !c.failures.empty();
  CHECK(kept);
}
