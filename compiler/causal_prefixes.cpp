// Part of simplify, for causal programs: `select(indices, indices, <=)` is `full_s`.
//
// A causal query sees the keys at or before it, and those are exactly the keys whose index is at
// most its own: the selector selects every key the query sees, as `select(1, 1, ==)` does. Read
// as written it is a table over pairs of positions (a query/key dimension per position, and the
// indices' one-hot in the residual stream); as `full_s` it reads nothing (RASP-L's prefix sums,
// dyck1's counts).
#include "compiler/ir.hpp"

namespace raspc::compiler {

Program causal_prefixes(const Program& program) {
  auto is_prefix = [&](const Node& node) {
    return node.kind == NodeKind::Select && node.comparison == Comparison::Le && node.inputs[0] == node.inputs[1] &&
           program.node(node.inputs[0]).kind == NodeKind::Indices;
  };
  bool any = false;
  for (const Node& node : program.nodes) any = any || is_prefix(node);
  if (!any) return program;
  Program out;
  std::vector<NodeId> remap(program.nodes.size(), -1);
  NodeId one = -1;  // the constant both sides compare, made once, before the first prefix
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    Node node = program.node(id);
    if (is_prefix(node)) {
      if (one < 0) {
        Node constant;
        constant.kind = NodeKind::Constant;
        constant.constant = Value::of_int(1);
        constant.span = node.span;
        out.nodes.push_back(std::move(constant));
        one = NodeId(out.nodes.size() - 1);
      }
      node.comparison = Comparison::Eq;
      node.inputs = {one, one};
    } else {
      for (NodeId& in : node.inputs) in = remap[size_t(in)];
    }
    out.nodes.push_back(std::move(node));
    remap[size_t(id)] = NodeId(out.nodes.size() - 1);
  }
  out.output = remap[size_t(program.output)];
  for (const auto& [name, id] : program.named) out.named.push_back({name, remap[size_t(id)]});
  return out;
}

}  // namespace raspc::compiler
