// The circuit read off a compiled model's weights (circuit/circuit.hpp): exact for hist, and on
// hist, sort, reverse and most_freq the heads and MLPs it names are exactly those whose zero
// ablation changes some output on every input up to the compiled length.
#include <catch2/catch.hpp>

#include <set>

#include "circuit/circuit.hpp"
#include "circuit/interventions.hpp"
#include "circuit_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

std::set<std::string> edge_set(const Circuit& c) {
  std::set<std::string> edges;
  for (const CircuitEdge& e : c.edges)
    if (e.in_circuit) edges.insert(e.from + "->" + e.to + ":" + e.via);
  return edges;
}

}  // namespace

TEST_CASE("circuit: hist's graph at max length 5: the unembedding reads the head's 1/(w+1)") {
  // Few counts: the unembedding reads the count from the value the head writes
  // (compiler/constructions/scratch_output.cpp), and the block's MLP is zeros.
  const Model model = compiled_model("hist", 5, Mode::Bidirectional);
  const Circuit c = model_circuit(model);
  std::vector<std::string> ids;
  for (const CircuitNode& n : c.nodes) ids.push_back(n.id);
  CHECK(ids == std::vector<std::string>{"embed", "pos_embed", "a0.0", "m0", "unembed"});
  CHECK_FALSE(c.node("m0")->in_circuit);
  CHECK(c.node("m0")->why_not == "no unit has weights both in and out (a layer without an MLP of its own)");
  CHECK(edge_set(c) == std::set<std::string>{"embed->a0.0:q", "pos_embed->a0.0:q", "embed->a0.0:k", "embed->a0.0:v",
                                             "a0.0->unembed:unembed"});
  CHECK(c.node("a0.0")->writes == std::vector<std::string>{"hist"});
  CHECK(c.node("unembed")->writes == std::vector<std::string>{"hist"});
}

TEST_CASE("circuit: hist's graph, read off its weights") {
  // Over the digits (the counts print as input tokens) and without LayerNorm, so that an MLP turns
  // the 1/(w+1) into their one-hot (under LayerNorm the unembedding reads it: scratch_output.cpp).
  const Model model = compiled_model("hist", 5, Mode::Bidirectional, 150, "1234", false);
  const Circuit c = model_circuit(model);
  // One layer of one head: the embeddings, the selector width's head and MLP, the unembedding.
  std::vector<std::string> ids;
  for (const CircuitNode& n : c.nodes) ids.push_back(n.id);
  CHECK(ids == std::vector<std::string>{"embed", "pos_embed", "a0.0", "m0", "unembed"});
  for (const CircuitNode& n : c.nodes) CHECK(n.in_circuit);
  // The head compares tokens (query and key) and reads BOS's value (its 1/(w+1) trick); the MLP
  // turns that scratch value into the count's one-hot; the unembedding reads the count.
  // (embed -> unembed: a digit's row is its embedding and its count's unembedding at once.)
  CHECK(edge_set(c) == std::set<std::string>{"embed->a0.0:q", "pos_embed->a0.0:q", "embed->a0.0:k", "embed->a0.0:v",
                                             "pos_embed->m0:mlp_in", "a0.0->m0:mlp_in", "m0->unembed:unembed",
                                             "embed->unembed:unembed"});
  const CircuitNode& head = *c.node("a0.0");
  CHECK(head.hook == "blocks.0.attn.hook_z");
  CHECK(head.head == 0);
  CHECK(head.construction == "selector_width");
  CHECK(head.writes == std::vector<std::string>{"hist (scratch)"});
  CHECK(head.selector.at == "hist.rasp:11:14");
  CHECK(c.node("m0")->hook == "blocks.0.hook_mlp_out");
  CHECK(c.node("m0")->writes == std::vector<std::string>{"hist"});  // (no LayerNorm: the scratch stays)
  CHECK(c.node("unembed")->writes == std::vector<std::string>{"hist"});
  for (const CircuitEdge& e : c.edges) {
    if (e.via == "q") CHECK(e.to_hook == "blocks.0.hook_q_input");
    if (e.via == "mlp_in") CHECK(e.to_hook == "blocks.0.hook_mlp_in");
    if (e.via == "unembed") CHECK(e.to_hook == "blocks.0.hook_resid_post");
    if (e.from == "a0.0") CHECK(e.sops == std::vector<std::string>{"hist (scratch)"});
  }
  const nlohmann::json j = circuit_json(c);
  CHECK(j["nodes"][2]["hook"] == "blocks.0.attn.hook_z");
  CHECK(j["nodes"][4]["reads"] == nlohmann::json::array({"hist"}));
  CHECK(j["edges"].size() == c.edges.size());
}

TEST_CASE("circuit: a padding head and an MLP of zeros are outside it, and say why") {
  // frac_prevs is one layer: a mean head and no MLP of its own (the block's MLP is zeros).
  const Model model = compiled_model("frac_prevs", 5, Mode::Causal);
  const Circuit c = model_circuit(model);
  CHECK_FALSE(c.node("m0")->in_circuit);
  CHECK(c.node("m0")->why_not == "no unit has weights both in and out (a layer without an MLP of its own)");
  CHECK(c.node("a0.0")->in_circuit);
  const std::string text = format_circuit(c);
  CHECK(text.find("not in the circuit:\n  m0 (blocks.0.hook_mlp_out): no unit has weights") != std::string::npos);
}

TEST_CASE("circuit: exactly the heads and MLPs whose zero ablation changes an output") {
  for (const char* name : {"hist", "sort", "reverse", "most_freq"}) {
    INFO(name);
    const int max_len = 4;
    const Model model = compiled_model(name, max_len, Mode::Bidirectional);
    Intervener intervener(model);
    for (const CircuitNode& node : intervener.circuit().nodes) {
      if (node.kind != "head" && node.kind != "mlp") continue;
      INFO(node.id);
      bool changed = false;
      for (int length = 1; length <= max_len && !changed; ++length)
        for (const InterventionResult& r : intervener.ablate(every_input(model, length), node.id, Ablation::Zero))
          for (size_t p = 0; p < r.model.size(); ++p) changed = changed || !output_matches(model, r.model[p], r.clean[p]);
      CHECK(changed == node.in_circuit);
    }
  }
}

TEST_CASE("circuit: a model without placement metadata has none") {
  Model model = compiled_model("hist", 3, Mode::Bidirectional);
  model.metadata.erase("sops");
  try {
    model_circuit(model);
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("this model carries no placement of s-ops") != std::string::npos);
  }
}
