// Scoring a discovered circuit against a compiled model's (circuit/circuit.hpp), the way circuit-
// discovery papers report against Tracr models: node- and edge-level precision and recall for a
// set, and the ROC AUC of scored edges.
//
// Nodes are scored over the heads and MLPs (the embeddings and the unembedding are in every
// circuit). Edges are scored over the model's full graph: every earlier node into every later
// head's query, key and value side, MLP input and the unembedding, whether the weights connect them
// or not; an edge given without a side (`via` empty) stands for the pair, and then the truth is
// compared by pairs too. Unscored edges rank below every scored one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "circuit/circuit.hpp"

namespace raspc {

struct EdgeKey {
  std::string from, to, via;  // node ids; via "q", "k", "v", "mlp_in", "unembed", or "" for any
};

struct CircuitScore {
  int nodes_found = 0, nodes_true = 0, nodes_correct = 0;
  int edges_found = 0, edges_true = 0, edges_correct = 0;
  std::optional<double> node_precision, node_recall, edge_precision, edge_recall;  // none when 0/0
  std::optional<double> roc_auc;  // with scored edges, and both classes present in the full graph
};

// Every edge the model's graph could have (EdgeKey with a side), in circuit order.
std::vector<EdgeKey> full_graph_edges(const Circuit& circuit);

// `nodes`: the heads and MLPs found; `edges`: the edges found, each with a score when `scored`
// (higher: more likely in the circuit; an edge found is then one with a score > 0 for precision and
// recall). A node id or edge that is not in the model's graph is a UserError naming `origin`.
CircuitScore score_circuit(const Circuit& truth, const std::vector<std::string>& nodes,
                           const std::vector<std::pair<EdgeKey, double>>& edges, bool scored,
                           const std::string& origin = "found");

// "blocks.0.attn.hook_result" (or hook_z) and a head index, "blocks.1.hook_mlp_out",
// "hook_embed", ...: the circuit's node id, for the edges ACDC and TransformerLens name by hooks;
// "blocks.1.hook_q_input" with a head gives the node and the side ("a1.0", "q"). Unknown hooks are a
// UserError.
EdgeKey edge_from_hooks(const Circuit& circuit, const std::string& parent_hook, int parent_head,
                        const std::string& child_hook, int child_head);

}  // namespace raspc
