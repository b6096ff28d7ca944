#include "circuit/circuit.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "runtime/model_output.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

using Mask = std::vector<bool>;  // (C) one flag a residual dimension

// Column j of a row-major (rows, stride) matrix, from column `first`, has a nonzero entry.
bool column_nonzero(const float* m, int rows, size_t stride, size_t column) {
  for (int r = 0; r < rows; ++r)
    if (m[size_t(r) * stride + column] != 0.0f) return true;
  return false;
}

struct HeadAccess {
  Mask q, k, v, writes;
};

// What head h of a layer reads on each side and writes, from c_attn (C,3C) and c_proj (C,C). A
// query dimension matters only against a key column the keys fill (a key bias alone adds the same
// to every key's score), and the other way round with the query bias; a value column only when
// W_O takes it somewhere.
HeadAccess head_access(const ModelConfig& cfg, const LayerWeights& lw, int h) {
  const int C = cfg.n_embd, d = cfg.d_head(), base = h * d;
  const size_t stride = 3 * size_t(C);
  HeadAccess a{Mask(C), Mask(C), Mask(C), Mask(C)};
  for (int j = 0; j < d; ++j) {
    const size_t q = size_t(base + j), k = size_t(C + base + j), v = size_t(2 * C + base + j);
    const bool keys_vary = column_nonzero(lw.attn_w, C, stride, k);
    const bool queries_nonzero = column_nonzero(lw.attn_w, C, stride, q) || lw.attn_b[q] != 0.0f;
    const float* out_row = lw.attn_proj_w + size_t(base + j) * C;
    const bool projected = std::any_of(out_row, out_row + C, [](float x) { return x != 0.0f; });
    const bool values_nonzero = column_nonzero(lw.attn_w, C, stride, v) || lw.attn_b[v] != 0.0f;
    for (int r = 0; r < C; ++r) {
      const float* row = lw.attn_w + size_t(r) * stride;
      if (keys_vary && row[q] != 0.0f) a.q[r] = true;
      if (queries_nonzero && row[k] != 0.0f) a.k[r] = true;
      if (projected && row[v] != 0.0f) a.v[r] = true;
    }
    if (values_nonzero)
      for (int c = 0; c < C; ++c)
        if (out_row[c] != 0.0f) a.writes[c] = true;
  }
  return a;
}

struct MlpAccess {
  Mask reads, writes;
  int units_used = 0;
};

MlpAccess mlp_access(const ModelConfig& cfg, const LayerWeights& lw) {
  const int C = cfg.n_embd, I = cfg.n_inner;
  MlpAccess a{Mask(C), Mask(C)};
  for (int u = 0; u < I; ++u) {
    const bool fed = column_nonzero(lw.fc_w, C, size_t(I), size_t(u)) || lw.fc_b[u] != 0.0f;
    const float* out_row = lw.fc_proj_w + size_t(u) * C;
    if (!fed || std::none_of(out_row, out_row + C, [](float x) { return x != 0.0f; })) continue;
    ++a.units_used;
    for (int r = 0; r < C; ++r)
      if (lw.fc_w[size_t(r) * I + u] != 0.0f) a.reads[r] = true;
    for (int c = 0; c < C; ++c)
      if (out_row[c] != 0.0f) a.writes[c] = true;
  }
  for (int c = 0; c < C; ++c)
    if (lw.fc_proj_b[c] != 0.0f) a.writes[c] = true;
  return a;
}

// A dimension's name in a circuit: the shown name of the s-op holding it, else its residual label.
std::vector<std::string> dimension_names(const Model& model, const ModelPlacement& placement) {
  std::vector<std::string> names = numbered_residual_labels(model);
  for (const SopPlacement& sop : placement.sops)
    for (int d : sop.dims) names[size_t(d)] = sop.shown;
  return names;
}

CircuitNode make_node(std::string id, std::string kind, int layer, int head, std::string hook) {
  CircuitNode node;
  node.id = std::move(id);
  node.kind = std::move(kind);
  node.layer = layer;
  node.head = head;
  node.hook = std::move(hook);
  return node;
}

std::vector<int> dims_of(const Mask& mask) {
  std::vector<int> dims;
  for (size_t c = 0; c < mask.size(); ++c)
    if (mask[c]) dims.push_back(int(c));
  return dims;
}

std::vector<std::string> names_of(const std::vector<int>& dims, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (int d : dims)
    if (std::find(out.begin(), out.end(), names[size_t(d)]) == out.end()) out.push_back(names[size_t(d)]);
  return out;
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

int forward_place(const CircuitNode& node) {
  if (node.kind == "embed" || node.kind == "pos_embed") return 0;
  if (node.kind == "head") return 2 * node.layer + 1;
  if (node.kind == "mlp") return 2 * node.layer + 2;
  return std::numeric_limits<int>::max();
}

const CircuitNode* Circuit::node(const std::string& id) const {
  for (const CircuitNode& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

Circuit model_circuit(const Model& model) {
  const ModelPlacement placement = read_placement(model);
  if (placement.sops.empty())
    fail_at(Span{}, "this model carries no placement of s-ops (a trained model, or a file written before raspc "
                    "recorded one), so no circuit can be read off it; compile the program again");
  const ModelConfig& cfg = model.config;
  const int C = cfg.n_embd, L = cfg.n_layer;
  const std::vector<std::string> names = dimension_names(model, placement);
  Circuit circuit;
  std::vector<std::map<std::string, Mask>> reads;  // by node: side -> dimensions

  auto add_node = [&](CircuitNode node, const Mask& writes, std::map<std::string, Mask> sides) {
    node.dims = dims_of(writes);
    node.writes = names_of(node.dims, names);
    circuit.nodes.push_back(std::move(node));
    reads.push_back(std::move(sides));
  };

  // The embeddings: what the rows of the tokens an input can hold (BOS among them) write, and
  // every position's row. The output-only tokens' rows are the unembedding's (tied), not inputs.
  Mask token_writes(C), position_writes(C);
  std::vector<int> input_tokens = input_vocabulary(model);
  if (model.bos_id >= 0) input_tokens.push_back(model.bos_id);
  for (int t : input_tokens)
    for (int c = 0; c < C; ++c)
      if (model.w.wte[size_t(t) * C + c] != 0.0f) token_writes[c] = true;
  for (int p = 0; p < cfg.n_positions; ++p)
    for (int c = 0; c < C; ++c)
      if (model.w.wpe[size_t(p) * C + c] != 0.0f) position_writes[c] = true;
  add_node(make_node("embed", "embed", -1, -1, "hook_embed"), token_writes, {});
  add_node(make_node("pos_embed", "pos_embed", -1, -1, "hook_pos_embed"), position_writes, {});

  for (int l = 0; l < L; ++l) {
    const LayerWeights& lw = model.w.layers[size_t(l)];
    const std::string block = "blocks." + std::to_string(l);
    for (int h = 0; h < cfg.n_head; ++h) {
      HeadAccess a = head_access(cfg, lw, h);
      CircuitNode node = make_node("a" + std::to_string(l) + "." + std::to_string(h), "head", l, h, block + ".attn.hook_z");
      if (size_t(l) < placement.heads.size() && size_t(h) < placement.heads[size_t(l)].size()) {
        const HeadPlacement& hp = placement.heads[size_t(l)][size_t(h)];
        node.construction = hp.construction;
        node.source = hp.source;
        node.selector = hp.selector;
      }
      add_node(std::move(node), a.writes, {{"q", a.q}, {"k", a.k}, {"v", a.v}});
    }
    if (cfg.n_inner > 0) {
      MlpAccess a = mlp_access(cfg, lw);
      CircuitNode node = make_node("m" + std::to_string(l), "mlp", l, -1, block + ".hook_mlp_out");
      node.units_used = a.units_used;
      for (const SopPlacement& sop : placement.sops)
        if (sop.stage == 2 * l + 2 && sop.kind != "scratch") {
          node.source = sop.source;
          break;
        }
      add_node(std::move(node), a.writes, {{"mlp_in", a.reads}});
    }
  }

  // The unembedding reads the output s-op.
  Mask output(C);
  for (const SopPlacement& sop : placement.sops)
    if (sop.output)
      for (int d : sop.dims) output[size_t(d)] = true;
  {
    CircuitNode node = make_node("unembed", "unembed", -1, -1, "ln_final.hook_normalized");
    node.dims = dims_of(output);
    node.writes = names_of(node.dims, names);
    circuit.nodes.push_back(std::move(node));
    reads.push_back({{"unembed", output}});
  }

  // Edges, into each node from every earlier node that writes what it reads.
  for (size_t r = 0; r < circuit.nodes.size(); ++r) {
    const CircuitNode& reader = circuit.nodes[r];
    for (const char* side : {"q", "k", "v", "mlp_in", "unembed"}) {
      auto it = reads[r].find(side);
      if (it == reads[r].end()) continue;
      for (size_t w = 0; w < circuit.nodes.size(); ++w) {
        const CircuitNode& writer = circuit.nodes[w];
        if (writer.kind == "unembed" || forward_place(writer) >= forward_place(reader)) continue;
        std::vector<int> dims;
        for (int d : writer.dims)
          if (it->second[size_t(d)]) dims.push_back(d);
        if (dims.empty()) continue;
        CircuitEdge edge;
        edge.from = writer.id, edge.to = reader.id, edge.via = side, edge.dims = dims, edge.sops = names_of(dims, names);
        const std::string block = "blocks." + std::to_string(reader.layer);
        if (edge.via == "mlp_in") edge.to_hook = block + ".hook_mlp_in";
        else if (edge.via == "unembed") edge.to_hook = "blocks." + std::to_string(std::max(L - 1, 0)) + ".hook_resid_post";
        else edge.to_hook = block + ".hook_" + edge.via + "_input", edge.to_head = reader.head;
        circuit.edges.push_back(std::move(edge));
      }
    }
  }

  // In the circuit: on a path to the unembedding.
  std::set<std::string> reached{"unembed"};
  for (bool grew = true; grew;) {
    grew = false;
    for (const CircuitEdge& e : circuit.edges)
      if (reached.count(e.to) && reached.insert(e.from).second) grew = true;
  }
  for (CircuitEdge& e : circuit.edges) e.in_circuit = reached.count(e.to) > 0;
  for (CircuitNode& node : circuit.nodes) {
    node.in_circuit = reached.count(node.id) > 0;
    if (node.in_circuit) continue;
    if (node.kind == "mlp" && node.units_used == 0)
      node.why_not = "no unit has weights both in and out (a layer without an MLP of its own)";
    else if (node.dims.empty())
      node.why_not = node.kind == "head" ? "a padding head: it writes nothing to the residual stream"
                                         : "it writes nothing to the residual stream";
    else
      node.why_not = "nothing on a path to the unembedding reads what it writes (" + join_names(node.writes) + ")";
  }
  return circuit;
}

nlohmann::json circuit_json(const Circuit& circuit) {
  auto source = [](const SourceLocation& s) -> nlohmann::json {
    if (s.at.empty()) return nullptr;
    return {{"at", s.at}, {"line", s.line}, {"text", s.text}};
  };
  nlohmann::json nodes = nlohmann::json::array(), edges = nlohmann::json::array();
  for (const CircuitNode& n : circuit.nodes) {
    nlohmann::json j = {{"id", n.id},
                        {"kind", n.kind},
                        {"layer", n.layer < 0 ? nlohmann::json() : nlohmann::json(n.layer)},
                        {"head", n.head < 0 ? nlohmann::json() : nlohmann::json(n.head)},
                        {"hook", n.hook},
                        {n.kind == "unembed" ? "reads" : "writes", n.writes},
                        {"dims", n.dims},
                        {"in_circuit", n.in_circuit}};
    if (n.kind == "head") {
      j["construction"] = n.construction.empty() ? nlohmann::json() : nlohmann::json(n.construction);
      j["selector"] = source(n.selector);
    }
    if (n.kind == "mlp") j["units_used"] = n.units_used;
    if (n.kind == "head" || n.kind == "mlp") j["source"] = source(n.source);
    if (!n.in_circuit) j["why_not"] = n.why_not;
    nodes.push_back(std::move(j));
  }
  for (const CircuitEdge& e : circuit.edges)
    edges.push_back({{"from", e.from},
                     {"to", e.to},
                     {"via", e.via},
                     {"to_hook", e.to_hook},
                     {"to_head", e.to_head < 0 ? nlohmann::json() : nlohmann::json(e.to_head)},
                     {"carries", e.sops},
                     {"dims", e.dims},
                     {"in_circuit", e.in_circuit}});
  return {{"nodes", nodes}, {"edges", edges}};
}

std::string format_circuit(const Circuit& circuit) {
  std::ostringstream out;
  std::map<std::string, std::vector<const CircuitEdge*>> into;
  for (const CircuitEdge& e : circuit.edges) into[e.to].push_back(&e);
  auto hook_of = [](const CircuitNode& n) { return n.head >= 0 ? n.hook + "[" + std::to_string(n.head) + "]" : n.hook; };
  int in = 0;
  for (const CircuitNode& n : circuit.nodes) in += n.in_circuit;
  out << "circuit: " << in << " of " << circuit.nodes.size() << " nodes, "
      << std::count_if(circuit.edges.begin(), circuit.edges.end(), [](const CircuitEdge& e) { return e.in_circuit; })
      << " edges\n";
  for (const CircuitNode& n : circuit.nodes) {
    if (!n.in_circuit) continue;
    out << n.id << " (" << hook_of(n) << ")";
    if (n.kind == "unembed") out << " reads " << join_names(n.writes);
    else out << " writes " << (n.writes.empty() ? "nothing" : join_names(n.writes));
    if (!n.construction.empty()) out << "; " << n.construction;
    if (!n.source.at.empty()) out << "; " << n.source.at;
    out << "\n";
    for (const CircuitEdge* e : into[n.id])
      if (e->in_circuit) out << "  <- " << e->from << " via " << e->via << ": " << join_names(e->sops) << "\n";
  }
  bool header = false;
  for (const CircuitNode& n : circuit.nodes) {
    if (n.in_circuit) continue;
    if (!header) out << "not in the circuit:\n";
    header = true;
    out << "  " << n.id << " (" << hook_of(n) << "): " << n.why_not << "\n";
  }
  return out.str();
}

}  // namespace raspc
