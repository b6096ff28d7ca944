// The width part, a construction: selector_width(A or B) where A and B compare different s-ops.
//
// One head scores a selector as a sum of bilinear tables, one per pair of s-ops, and an `or` of
// comparisons of different pairs is not such a sum (the library's stable sort is one:
// key < key' or (key == key' and index < index')). When the parts are disjoint, though, the
// width is the sum of the parts' widths: two heads in the same block, and a map adding them.
#include <algorithm>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

void sides(const Program& program, NodeId sel, std::vector<NodeId>& keys, std::vector<NodeId>& queries) {
  const Node& node = program.node(sel);
  if (node.kind != NodeKind::Select) {
    for (NodeId in : node.inputs) sides(program, in, keys, queries);
    return;
  }
  auto add = [&](std::vector<NodeId>& list, NodeId id) {
    if (program.node(id).kind != NodeKind::Constant && std::find(list.begin(), list.end(), id) == list.end())
      list.push_back(id);
  };
  add(keys, node.inputs[0]);
  add(queries, node.inputs[1]);
}

struct Conjunct {
  NodeId sel, key, query;  // key/query -1: constants only
};

// The conjuncts of a selector, or false when one compares several s-ops on a side.
bool conjuncts_of(const Program& program, NodeId sel, std::vector<Conjunct>& out) {
  std::vector<NodeId> parts;
  flatten_selector(program, sel, NodeKind::SelectAnd, parts);
  for (NodeId part : parts) {
    std::vector<NodeId> keys, queries;
    sides(program, part, keys, queries);
    if (keys.size() > 1 || queries.size() > 1) return false;
    out.push_back({part, keys.empty() ? -1 : keys[0], queries.empty() ? -1 : queries[0]});
  }
  return true;
}

std::vector<Value> side_values(const Inference& inference, NodeId id) {
  if (id < 0) return {Value::of_int(0)};
  return inference.info[size_t(id)].values;
}

bool disjoint(const Program& program, const Inference& inference, const std::vector<Conjunct>& a,
              const std::vector<Conjunct>& b) {
  for (const Conjunct& x : a)
    for (const Conjunct& y : b) {
      if (x.key != y.key || x.query != y.query) continue;
      if ((x.key >= 0 && !inference.info[size_t(x.key)].values_known) ||
          (x.query >= 0 && !inference.info[size_t(x.query)].values_known))
        continue;
      bool overlap = false;
      for (const Value& k : side_values(inference, x.key))
        for (const Value& q : side_values(inference, x.query))
          if (selector_holds(program, x.sel, x.key, k, x.query, q) &&
              selector_holds(program, y.sel, y.key, k, y.query, q))
            overlap = true;
      if (!overlap) return true;
    }
  return false;
}

// The disjuncts a width can be split into, or empty when it needs no split or cannot have one.
std::vector<NodeId> split_of(const Program& program, const Inference& inference, NodeId width) {
  NodeId sel = program.node(width).inputs[0];
  std::vector<Conjunct> whole;
  if (conjuncts_of(program, sel, whole)) return {};
  std::vector<NodeId> parts;
  flatten_selector(program, sel, NodeKind::SelectOr, parts);
  if (parts.size() < 2) return {};
  std::vector<std::vector<Conjunct>> conjuncts(parts.size());
  for (size_t i = 0; i < parts.size(); ++i)
    if (!conjuncts_of(program, parts[i], conjuncts[i])) return {};
  for (size_t i = 0; i < parts.size(); ++i)
    for (size_t j = i + 1; j < parts.size(); ++j)
      if (!disjoint(program, inference, conjuncts[i], conjuncts[j])) return {};
  return parts;
}

}  // namespace

double width_bos_weight(const Node& width, int max_len) {
  if (!is_construction(width, WidthHeadKind::WidthPart)) return 1.0;
  const double n = std::max(1, max_len);
  return 4.0 * n * n;
}

double scratch_level(const Node& width, int max_len, double w) {
  if (!is_construction(width, WidthHeadKind::WidthPart)) return 1.0 / (w + 1.0);
  return w / (w + width_bos_weight(width, max_len));
}

double width_match_score(const Node& width, double selection_score) {
  return is_construction(width, WidthHeadKind::WidthPart) ? 0.5 * selection_score - 8.0 : selection_score;
}

bool split_disjoint_widths(Program& program, const Inference& inference) {
  std::vector<std::vector<NodeId>> splits(program.nodes.size());
  bool any = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    // Widths only: a width step (a construction of its own) compares its width with the index, and
    // its parts' sum would not.
    if (!inference.info[size_t(id)].needed || program.node(id).kind != NodeKind::SelectorWidth) continue;
    splits[size_t(id)] = split_of(program, inference, id);
    any = any || !splits[size_t(id)].empty();
  }
  if (!any) return false;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    if (splits[size_t(id)].empty()) return NodeId(-1);
    std::string name = program.label(id);
    NodeId sum = -1;
    int k = 0;
    for (NodeId part : splits[size_t(id)]) {
      Node width = construction_node(
          std::make_shared<WidthPart>(int(id), k + 1, int(splits[size_t(id)].size())));
      width.span = node.span;
      width.name = name + "_" + std::to_string(++k);
      width.inputs = {remap[size_t(part)]};
      NodeId w = push_node(out, std::move(width));
      if (sum < 0) {
        sum = w;
        continue;
      }
      Node add;
      add.kind = NodeKind::Elementwise;
      add.op = ElementOp::Add;
      add.span = node.span;
      add.inputs = {sum, w};
      sum = push_node(out, std::move(add));
    }
    out.nodes[size_t(sum)].name = node.name;
    out.nodes[size_t(sum)].annotation = node.annotation;
    return sum;
  });
  return true;
}

std::vector<Value> WidthPart::evaluate(const std::vector<ConstructionInput>& inputs, int n) const {
  std::vector<Value> out(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) out[size_t(q)] = Value::of_int(selected_keys(inputs[0], q, n));
  return out;
}

}  // namespace raspc::compiler
