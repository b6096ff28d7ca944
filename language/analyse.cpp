// RASP's layer and head accounting, as the reference interpreter's analyse.py does it: every s-op
// is scheduled as early as its inputs allow (an elementwise s-op at the depth of its deepest input,
// an aggregate or selector_width one deeper than its selector's s-ops and its value), and the heads
// of a layer are the distinct selectors its attention s-ops read. Selectors are told apart by
// structure, so two calls of one library function that build the same select share a head.
#include "language/analyse.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace raspc {

namespace {

void append_value(std::vector<int64_t>& key, const Value& v) {
  key.push_back(int64_t(v.kind));
  switch (v.kind) {
    case ValueKind::Number:
      // A big number's num is its index in the table of interned values: one key a value still.
      key.push_back(v.number.num);
      key.push_back(v.number.den);
      break;
    case ValueKind::Bool:
      key.push_back(v.boolean);
      break;
    case ValueKind::String:
      key.push_back(v.string_id);  // strings are interned: equal text, equal id
      break;
  }
}

// For every node, the id of the first node with the same structure (kind, parameters, and inputs
// that are themselves structurally equal). Names, spans and encoding annotations do not count.
std::vector<NodeId> structural_classes(const Program& program) {
  std::vector<NodeId> canonical(program.nodes.size());
  std::map<std::vector<int64_t>, NodeId> seen;
  for (size_t id = 0; id < program.nodes.size(); ++id) {
    const Node& node = program.nodes[id];
    std::vector<int64_t> key{int64_t(node.kind)};
    for (NodeId input : node.inputs) key.push_back(canonical[size_t(input)]);
    switch (node.kind) {
      case NodeKind::Constant:
        append_value(key, node.constant);
        break;
      case NodeKind::Elementwise:
        key.push_back(int64_t(node.op));
        key.push_back(int64_t(node.table_keys.size()));
        for (const Value& v : node.table_keys) append_value(key, v);
        key.push_back(int64_t(node.table_values.size()));
        for (const Value& v : node.table_values) append_value(key, v);
        break;
      case NodeKind::Aggregate:
        append_value(key, node.default_value);
        break;
      case NodeKind::Select:
        key.push_back(int64_t(node.comparison));
        break;
      default:
        break;
    }
    canonical[id] = seen.emplace(std::move(key), NodeId(id)).first->second;
  }
  return canonical;
}

}  // namespace

int Analysis::max_heads() const {
  return heads_per_layer.empty() ? 0 : *std::max_element(heads_per_layer.begin(), heads_per_layer.end());
}

Analysis analyse(const Program& program) {
  const size_t count = program.nodes.size();
  Analysis analysis;
  analysis.layer_of.assign(count, 0);
  for (size_t id = 0; id < count; ++id) {
    const Node& node = program.nodes[id];
    int deepest = 0;
    for (NodeId input : node.inputs) deepest = std::max(deepest, analysis.layer_of[size_t(input)]);
    const bool attends = node.kind == NodeKind::Aggregate || node.kind == NodeKind::SelectorWidth;
    // A selector is not computed anywhere by itself: it is available as soon as its s-ops are, and
    // the head that reads it sits one layer above.
    analysis.layer_of[id] = attends ? deepest + 1 : deepest;
  }
  if (program.output < 0 || size_t(program.output) >= count) return analysis;

  // Only what the output depends on is counted, as the reference analyses one s-op's ancestry.
  std::vector<uint8_t> needed(count, 0);
  needed[size_t(program.output)] = 1;
  for (size_t id = count; id-- > 0;)
    if (needed[id])
      for (NodeId input : program.nodes[id].inputs) needed[size_t(input)] = 1;

  const std::vector<NodeId> canonical = structural_classes(program);
  std::map<int, std::set<NodeId>> selectors_by_layer;
  for (size_t id = 0; id < count; ++id) {
    if (!needed[id]) continue;
    analysis.layers = std::max(analysis.layers, analysis.layer_of[id]);
    const Node& node = program.nodes[id];
    if (node.kind == NodeKind::Aggregate || node.kind == NodeKind::SelectorWidth)
      selectors_by_layer[analysis.layer_of[id]].insert(canonical[size_t(node.inputs[0])]);
  }
  analysis.heads_per_layer.assign(size_t(analysis.layers), 0);
  for (const auto& [layer, selectors] : selectors_by_layer)
    analysis.heads_per_layer[size_t(layer - 1)] = int(selectors.size());
  return analysis;
}

}  // namespace raspc
