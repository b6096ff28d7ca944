// A rewrite, first for causal programs: `select(indices, indices, <=)` is `full_s`.
//
// A causal query sees the keys at or before it, and those are exactly the keys whose index is at
// most its own: the selector selects every key the query sees, as `select(1, 1, ==)` does. Read
// as written it is a table over pairs of positions (a query/key dimension per position, and the
// indices' one-hot in the residual stream); as `full_s` it reads nothing (RASP-L's prefix sums,
// dyck1's counts).
#include <algorithm>

#include "compiler/ir.hpp"

namespace raspc::compiler {

bool causal_prefixes(Program& program) {
  auto is_prefix = [&](const Node& node) {
    return node.kind == NodeKind::Select && node.comparison == Comparison::Le && node.inputs[0] == node.inputs[1] &&
           program.node(node.inputs[0]).kind == NodeKind::Indices;
  };
  if (std::none_of(program.nodes.begin(), program.nodes.end(), is_prefix)) return false;
  NodeId one = -1;  // the constant both sides compare, made once, before the first prefix
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>&, Program& out) {
    if (!is_prefix(program.node(id))) return NodeId(-1);
    if (one < 0) {
      Node constant;
      constant.kind = NodeKind::Constant;
      constant.constant = Value::of_int(1);
      constant.span = node.span;
      one = push_node(out, std::move(constant));
    }
    node.comparison = Comparison::Eq;
    node.inputs = {one, one};
    return push_node(out, std::move(node));
  });
  return true;
}

}  // namespace raspc::compiler
