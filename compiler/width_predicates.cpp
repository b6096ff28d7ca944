// A rewrite: a selector that compares a selector width with a constant, `select(w, 2, <=)`
// (count_less_freq's `rare`), compares the width's predicate with True instead:
// `select(w <= 2, True, ==)`. Both select a key exactly where `w[k] <= 2`, so nothing changes for
// the interpreter; for the compiler the predicate is a map of the width, which at short lengths is
// folded into the head's weights as the comparison was (the head reads the width's one-hot), and
// from 64 values on (max length 63) is written by an MLP straight from the width's 1/(w+1), so the
// width needs no one-hot of n + 1 dimensions at all (schedule.cpp; docs/long-contexts.md).
// A query-side width (`select(2, w, >=)`) is the same with the sides swapped; `!=` is `==` against
// False.
#include <map>
#include <tuple>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// The elementwise operator that holds where `a cmp b` does (`!=` has none: it is `==` negated).
ElementOp element_op(Comparison cmp) {
  switch (cmp) {
    case Comparison::Eq:
    case Comparison::Ne: return ElementOp::Eq;
    case Comparison::Lt: return ElementOp::Lt;
    case Comparison::Gt: return ElementOp::Gt;
    case Comparison::Le: return ElementOp::Le;
    case Comparison::Ge: return ElementOp::Ge;
  }
  return ElementOp::Eq;
}

// Whether `node` is a select of a selector width against a constant (either side).
bool compares_width_with_constant(const Program& p, const Node& node) {
  if (node.kind != NodeKind::Select) return false;
  const NodeKind keys = p.node(node.inputs[0]).kind, queries = p.node(node.inputs[1]).kind;
  return (keys == NodeKind::SelectorWidth && queries == NodeKind::Constant) ||
         (keys == NodeKind::Constant && queries == NodeKind::SelectorWidth);
}

}  // namespace

bool width_predicates(Program& program) {
  bool any = false;
  for (const Node& node : program.nodes) any = any || compares_width_with_constant(program, node);
  if (!any) return false;
  // One predicate node per (width, operator, constant, side), one True and one False: two selects
  // of the same comparison read the same map, as simplify would have merged them.
  std::map<std::tuple<NodeId, ElementOp, NodeId, bool>, NodeId> predicates;
  std::map<bool, NodeId> truth;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>&, Program& out) {
    if (!compares_width_with_constant(program, program.node(id))) return NodeId(-1);
    // node.inputs are already the copy's; the kinds are the same in both.
    const bool width_is_key = out.node(node.inputs[0]).kind == NodeKind::SelectorWidth;
    const ElementOp op = element_op(node.comparison);
    const auto key = std::make_tuple(node.inputs[width_is_key ? 0 : 1], op, node.inputs[width_is_key ? 1 : 0],
                                     width_is_key);
    auto [slot, added] = predicates.try_emplace(key, -1);
    if (added) {
      Node predicate;
      predicate.kind = NodeKind::Elementwise;
      predicate.op = op;
      predicate.span = node.span;
      predicate.inputs = node.inputs;  // keys op queries, in the select's own order
      // Named after the selector (`rare_keys`: the keys it selects), as count_sorts names its steps;
      // a def's local name stays local (its label adds the node's number, as the selector's does).
      const std::string suffix = width_is_key ? "_keys" : "_queries";
      const Node& select = program.node(id);
      if (!select.name.empty()) predicate.name = select.name + suffix;
      else if (!select.local_name.empty()) predicate.local_name = select.local_name + suffix;
      else predicate.name = program.label(program.node(id).inputs[width_is_key ? 0 : 1]) + suffix;
      slot->second = push_node(out, std::move(predicate));
    }
    const bool wanted = node.comparison != Comparison::Ne;
    auto [constant, made] = truth.try_emplace(wanted, -1);
    if (made) {
      Node c;
      c.kind = NodeKind::Constant;
      c.constant = Value::of_bool(wanted);
      c.span = node.span;
      constant->second = push_node(out, std::move(c));
    }
    node.comparison = Comparison::Eq;
    node.inputs = width_is_key ? std::vector<NodeId>{slot->second, constant->second}
                               : std::vector<NodeId>{constant->second, slot->second};
    return push_node(out, std::move(node));
  });
  return true;
}

std::vector<uint8_t> maps_from_scratch(const Program& program, const Inference& inference, const CompileOptions& options) {
  std::vector<uint8_t> out(program.nodes.size(), 0);
  if (options.max_len + 1 < kLongWidthValues) return out;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const Node& node = program.node(id);
    if (node.kind != NodeKind::Elementwise || !inference.info[size_t(id)].needed) continue;
    const std::vector<NodeId> support = support_of(program, id, &inference.cut);
    if (support.size() != 1) continue;
    const NodeId width = support[0];
    out[size_t(id)] = program.node(width).kind == NodeKind::SelectorWidth &&
                      inference.numbers.of(width) == NumberRole::None &&
                      inference.info[size_t(id)].values.size() < inference.info[size_t(width)].values.size();
  }
  return out;
}

}  // namespace raspc::compiler
