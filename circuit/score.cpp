#include "circuit/score.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "support/diagnostics.hpp"

namespace raspc {

namespace {

std::vector<std::string> sides_of(const CircuitNode& node) {
  if (node.kind == "head") return {"q", "k", "v"};
  if (node.kind == "mlp") return {"mlp_in"};
  if (node.kind == "unembed") return {"unembed"};
  return {};
}

using Key = std::tuple<std::string, std::string, std::string>;

Key key_of(const EdgeKey& e, bool by_pair) { return {e.from, e.to, by_pair ? "" : e.via}; }

std::string edge_text(const EdgeKey& e) {
  return e.from + " -> " + e.to + (e.via.empty() ? "" : " via " + e.via);
}

std::optional<double> ratio(int part, int whole) {
  if (whole == 0) return std::nullopt;
  return double(part) / whole;
}

// The probability that a positive scores above a negative, ties counting half (Mann-Whitney).
std::optional<double> roc_auc(const std::vector<std::pair<double, bool>>& scored) {
  std::vector<std::pair<double, bool>> sorted = scored;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double positives = 0, negatives = 0, rank_sum = 0;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j].first == sorted[i].first) ++j;
    const double rank = (double(i + 1) + double(j)) / 2;  // the average of ranks i+1..j
    for (size_t k = i; k < j; ++k)
      if (sorted[k].second) rank_sum += rank, ++positives;
      else ++negatives;
    i = j;
  }
  if (positives == 0 || negatives == 0) return std::nullopt;
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace

std::vector<EdgeKey> full_graph_edges(const Circuit& circuit) {
  std::vector<EdgeKey> edges;
  for (const CircuitNode& reader : circuit.nodes)
    for (const std::string& side : sides_of(reader))
      for (const CircuitNode& writer : circuit.nodes)
        if (writer.kind != "unembed" && forward_place(writer) < forward_place(reader))
          edges.push_back({writer.id, reader.id, side});
  return edges;
}

CircuitScore score_circuit(const Circuit& truth, const std::vector<std::string>& nodes,
                           const std::vector<std::pair<EdgeKey, double>>& edges, bool scored,
                           const std::string& origin) {
  CircuitScore score;
  // Nodes: the heads and MLPs.
  std::set<std::string> found_nodes;
  for (const std::string& id : nodes) {
    const CircuitNode* node = truth.node(id);
    if (!node)
      fail_file(origin, "\"" + id + "\" is no node of this model (nodes are embed, pos_embed, aL.H for layer L's head H, "
                        "mL for its MLP, and unembed)");
    if (node->kind == "head" || node->kind == "mlp") found_nodes.insert(id);
  }
  for (const CircuitNode& node : truth.nodes) {
    if (node.kind != "head" && node.kind != "mlp") continue;
    score.nodes_true += node.in_circuit;
    score.nodes_correct += node.in_circuit && found_nodes.count(node.id);
  }
  score.nodes_found = int(found_nodes.size());
  if (!nodes.empty()) {
    score.node_precision = ratio(score.nodes_correct, score.nodes_found);
    score.node_recall = ratio(score.nodes_correct, score.nodes_true);
  }
  // Edges: by pair when any edge found names no side.
  const bool by_pair = std::any_of(edges.begin(), edges.end(), [](const auto& e) { return e.first.via.empty(); });
  std::set<Key> universe, true_edges;
  for (const EdgeKey& e : full_graph_edges(truth)) universe.insert(key_of(e, by_pair));
  for (const CircuitEdge& e : truth.edges)
    if (e.in_circuit) true_edges.insert(key_of({e.from, e.to, e.via}, by_pair));
  std::map<Key, double> found;
  for (const auto& [edge, value] : edges) {
    const Key key = key_of(edge, by_pair);
    if (!universe.count(key))
      fail_file(origin, "the edge " + edge_text(edge) + " is no edge of this model's graph (an edge runs from an "
                        "earlier node into a head's q, k or v, an MLP's mlp_in, or the unembed)");
    found[key] = std::max(found.count(key) ? found[key] : value, value);
  }
  score.edges_true = int(true_edges.size());
  if (edges.empty()) return score;
  if (!scored) {
    score.edges_found = int(found.size());
    for (const auto& entry : found) score.edges_correct += true_edges.count(entry.first) > 0;
    score.edge_precision = ratio(score.edges_correct, score.edges_found);
    score.edge_recall = ratio(score.edges_correct, score.edges_true);
    return score;
  }
  std::vector<std::pair<double, bool>> ranked;
  const double unscored = -std::numeric_limits<double>::infinity();
  for (const Key& key : universe) {
    auto it = found.find(key);
    ranked.emplace_back(it == found.end() ? unscored : it->second, true_edges.count(key) > 0);
  }
  score.edges_found = int(found.size());
  score.roc_auc = roc_auc(ranked);
  return score;
}

EdgeKey edge_from_hooks(const Circuit& circuit, const std::string& parent_hook, int parent_head,
                        const std::string& child_hook, int child_head) {
  static const std::regex block_hook(R"(blocks\.(\d+)\.(attn\.hook_result|attn\.hook_z|hook_mlp_out|(?:attn\.)?hook_[qkv]_input|hook_mlp_in|hook_resid_post))");
  int last_layer = -1;
  for (const CircuitNode& n : circuit.nodes) last_layer = std::max(last_layer, n.layer);
  auto node_of = [&](const std::string& hook, int head, std::string* side) -> std::string {
    if (hook == "hook_embed" && !side) return "embed";
    if (hook == "hook_pos_embed" && !side) return "pos_embed";
    if (hook == "ln_final.hook_normalized" && side) return *side = "unembed", "unembed";
    std::smatch m;
    if (!std::regex_match(hook, m, block_hook)) return "";
    const std::string layer = m[1].str();
    std::string name = m[2].str();
    if (name.rfind("attn.hook_", 0) == 0 && name.size() == std::string("attn.hook_q_input").size())
      name = name.substr(5);  // TransformerLens 4's attention module names its input hooks so
    const std::string head_id = "a" + layer + "." + std::to_string(head);
    if (!side) {
      if (name == "attn.hook_result" || name == "attn.hook_z") return head >= 0 ? head_id : "";
      return name == "hook_mlp_out" ? "m" + layer : "";
    }
    if (name == "hook_q_input" || name == "hook_k_input" || name == "hook_v_input")
      return head >= 0 ? (*side = name.substr(5, 1), head_id) : "";
    if (name == "hook_mlp_in") return *side = "mlp_in", "m" + layer;
    if (name == "hook_resid_post" && std::stoi(layer) == last_layer) return *side = "unembed", "unembed";
    return "";
  };
  EdgeKey edge;
  edge.from = node_of(parent_hook, parent_head, nullptr);
  edge.to = node_of(child_hook, child_head, &edge.via);
  for (const auto& [id, hook, head] : {std::tuple{edge.from, parent_hook, parent_head}, std::tuple{edge.to, child_hook, child_head}})
    if (id.empty() || !circuit.node(id))
      fail_file(hook, "names no node of this model" + std::string(head >= 0 ? " at head " + std::to_string(head) : "") +
                          " (senders: hook_embed, hook_pos_embed, blocks.L.attn.hook_result with a head, "
                          "blocks.L.hook_mlp_out; receivers: blocks.L.hook_q_input, hook_k_input, hook_v_input with "
                          "a head, blocks.L.hook_mlp_in, the last blocks.L.hook_resid_post)");
  const std::vector<EdgeKey> graph = full_graph_edges(circuit);
  if (std::none_of(graph.begin(), graph.end(), [&](const EdgeKey& e) { return e.from == edge.from && e.to == edge.to && e.via == edge.via; }))
    fail_file(child_hook, "is no input of " + edge.to + " that " + edge.from + " can reach: a node feeds only later "
                          "ones (layer L's heads feed its MLP and later layers, never each other)");
  return edge;
}

}  // namespace raspc
