// Scores of discovered circuits (circuit/score.hpp) against a compiled model's.
#include <catch2/catch.hpp>

#include <random>

#include "circuit/score.hpp"
#include "circuit_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("score: the true circuit scores 1, a partial one its fraction, random scores about 0.5") {
  const Model model = compiled_model("sort", 4, Mode::Bidirectional);
  const Circuit truth = model_circuit(model);
  std::vector<std::string> nodes;
  std::vector<std::pair<EdgeKey, double>> edges;
  for (const CircuitNode& n : truth.nodes)
    if (n.in_circuit && (n.kind == "head" || n.kind == "mlp")) nodes.push_back(n.id);
  for (const CircuitEdge& e : truth.edges)
    if (e.in_circuit) edges.push_back({{e.from, e.to, e.via}, 1.0});
  REQUIRE(nodes.size() >= 2);
  const CircuitScore perfect = score_circuit(truth, nodes, edges, false);
  CHECK(perfect.node_precision == 1.0);
  CHECK(perfect.node_recall == 1.0);
  CHECK(perfect.edge_precision == 1.0);
  CHECK(perfect.edge_recall == 1.0);
  CHECK_FALSE(perfect.roc_auc.has_value());

  // Half the nodes plus one node outside the circuit.
  std::vector<std::string> half(nodes.begin(), nodes.begin() + long(nodes.size() / 2));
  for (const CircuitNode& n : truth.nodes)
    if (!n.in_circuit && n.kind == "head") {
      half.push_back(n.id);
      break;
    }
  const CircuitScore partial = score_circuit(truth, half, {}, false);
  CHECK(partial.nodes_correct == int(nodes.size() / 2));
  CHECK(*partial.node_recall == Approx(double(nodes.size() / 2) / double(nodes.size())));
  CHECK(*partial.node_precision == Approx(double(nodes.size() / 2) / double(half.size())));

  // Scored edges over the full graph: the truth's own membership ranks perfectly, reversed it is 0.
  std::vector<std::pair<EdgeKey, double>> ranked, reversed;
  std::set<std::string> in;
  for (const CircuitEdge& e : truth.edges)
    if (e.in_circuit) in.insert(e.from + e.to + e.via);
  for (const EdgeKey& e : full_graph_edges(truth)) {
    const double member = in.count(e.from + e.to + e.via) ? 1.0 : 0.0;
    ranked.push_back({e, member});
    reversed.push_back({e, 1.0 - member});
  }
  CHECK(*score_circuit(truth, {}, ranked, true).roc_auc == 1.0);
  CHECK(*score_circuit(truth, {}, reversed, true).roc_auc == 0.0);
  // Random scores: the mean AUC over 50 draws is near 0.5 (each draw's spread is about 0.1 here).
  std::mt19937_64 rng(1);
  double sum = 0;
  for (int i = 0; i < 50; ++i) {
    for (auto& entry : ranked) entry.second = double(rng() % 1000000);
    sum += *score_circuit(truth, {}, ranked, true).roc_auc;
  }
  CHECK(sum / 50 == Approx(0.5).margin(0.05));
}

TEST_CASE("score: edges by pair, ACDC's hook names, and what is no node or edge") {
  // hist over the digits without LayerNorm, where an MLP turns the head's 1/(w+1) into the count's
  // one-hot (under LayerNorm the unembedding reads the 1/(w+1) itself:
  // compiler/constructions/scratch_output.cpp).
  const Model model = compiled_model("hist", 4, Mode::Bidirectional, 150, "1234", false);
  const Circuit truth = model_circuit(model);
  // (from, to) pairs: embed -> a0.0 stands for its q, k and v edges together.
  const CircuitScore pairs = score_circuit(truth, {}, {{{"embed", "a0.0", ""}, 1}, {{"a0.0", "m0", ""}, 1}}, false);
  // embed->a0.0, pos_embed->a0.0, pos_embed->m0, a0.0->m0, m0->unembed, embed->unembed (a digit's
  // row is its embedding and its count's unembedding at once)
  CHECK(pairs.edges_true == 6);
  CHECK(pairs.edges_correct == 2);
  CHECK(*pairs.edge_precision == 1.0);
  const EdgeKey q = edge_from_hooks(truth, "hook_embed", -1, "blocks.0.hook_q_input", 0);
  CHECK((q.from == "embed" && q.to == "a0.0" && q.via == "q"));
  const EdgeKey out = edge_from_hooks(truth, "blocks.0.hook_mlp_out", -1, "blocks.0.hook_resid_post", -1);
  CHECK((out.from == "m0" && out.to == "unembed" && out.via == "unembed"));
  const EdgeKey head = edge_from_hooks(truth, "blocks.0.attn.hook_result", 0, "blocks.0.hook_mlp_in", -1);
  CHECK((head.from == "a0.0" && head.to == "m0" && head.via == "mlp_in"));
  CHECK_THROWS_WITH(edge_from_hooks(truth, "blocks.3.attn.hook_result", 0, "blocks.0.hook_mlp_in", -1),
                    Catch::StartsWith("blocks.3.attn.hook_result: error: names no node of this model at head 0"));
  // TransformerLens 4's attention module names its input hooks blocks.L.attn.hook_q_input.
  const EdgeKey k = edge_from_hooks(truth, "hook_embed", -1, "blocks.0.attn.hook_k_input", 0);
  CHECK((k.to == "a0.0" && k.via == "k"));
  // A node feeds later nodes only: the MLP never feeds its own layer's head.
  CHECK_THROWS_WITH(edge_from_hooks(truth, "blocks.0.hook_mlp_out", -1, "blocks.0.hook_q_input", 0),
                    Catch::StartsWith("blocks.0.hook_q_input: error: is no input of a0.0 that m0 can reach"));
  CHECK(score_circuit(truth, {}, {}, false).edges_true == 8);  // the truth's edges, whatever was found
  CHECK_THROWS_WITH(score_circuit(truth, {"a9.9"}, {}, false),
                    Catch::StartsWith("found: error: \"a9.9\" is no node of this model"));
  // m0 feeds a0.0 never: the MLP comes after the head in layer 0.
  CHECK_THROWS_WITH(score_circuit(truth, {}, {{{"m0", "a0.0", "q"}, 1}}, false),
                    Catch::StartsWith("found: error: the edge m0 -> a0.0 via q is no edge of this model's graph"));
}
