// A rewrite: sums and differences of means over the same selector become one mean.
//
//   aggregate(s, a) - aggregate(s, b)             ->  aggregate(s, a - b)
//   x * aggregate(s, a) - x * aggregate(s, b)     ->  x * aggregate(s, a - b)
//
// Exact (the mean is linear; the defaults combine the same way), and it turns the balance of the
// Dyck programs, a map of two numerical s-ops that one MLP cannot discretise, into one head
// whose value folds into W_V and one numerical s-op that it can.
#include <algorithm>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

bool is_sum(const Node& n) {
  return n.kind == NodeKind::Elementwise && (n.op == ElementOp::Add || n.op == ElementOp::Sub) &&
         n.annotation == Encoding::Unspecified;
}

bool mergeable(const Program& p, NodeId a, NodeId b) {
  const Node& x = p.node(a);
  const Node& y = p.node(b);
  return x.kind == NodeKind::Aggregate && y.kind == NodeKind::Aggregate && x.inputs[0] == y.inputs[0] &&
         x.annotation == Encoding::Unspecified && y.annotation == Encoding::Unspecified &&
         x.default_value.is_number() && y.default_value.is_number();
}

// For x*A and x*B (either operand order): the shared factor and the two other operands.
bool common_factor(const Program& p, NodeId a, NodeId b, NodeId& factor, NodeId& ra, NodeId& rb) {
  const Node& x = p.node(a);
  const Node& y = p.node(b);
  if (x.kind != NodeKind::Elementwise || y.kind != NodeKind::Elementwise || x.op != ElementOp::Mul ||
      y.op != ElementOp::Mul || x.annotation != Encoding::Unspecified || y.annotation != Encoding::Unspecified)
    return false;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      if (x.inputs[size_t(i)] == y.inputs[size_t(j)]) {
        factor = x.inputs[size_t(i)];
        ra = x.inputs[size_t(1 - i)];
        rb = y.inputs[size_t(1 - j)];
        return true;
      }
  return false;
}

}  // namespace

bool merge_means(Program& program) {
  auto merges = [&](const Node& node, NodeId& factor, NodeId& a, NodeId& b) {
    if (!is_sum(node)) return false;
    factor = -1;
    a = node.inputs[0];
    b = node.inputs[1];
    if (mergeable(program, a, b)) return true;
    return common_factor(program, node.inputs[0], node.inputs[1], factor, a, b) && mergeable(program, a, b);
  };
  NodeId factor, a, b;
  if (std::none_of(program.nodes.begin(), program.nodes.end(), [&](const Node& n) { return merges(n, factor, a, b); }))
    return false;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    if (!merges(program.node(id), factor, a, b)) return NodeId(-1);
    // The merged mean of aggregates a and b, combined by the sum's operation.
    const Node& x = program.node(a);
    const Node& y = program.node(b);
    Node values;
    values.kind = NodeKind::Elementwise;
    values.op = node.op;
    values.span = node.span;
    values.inputs = {remap[size_t(x.inputs[1])], remap[size_t(y.inputs[1])]};
    const NodeId v = push_node(out, std::move(values));
    Node mean;
    mean.kind = NodeKind::Aggregate;
    mean.span = node.span;
    mean.inputs = {remap[size_t(x.inputs[0])], v};
    Node arithmetic = x;
    arithmetic.kind = NodeKind::Elementwise;
    arithmetic.op = node.op;
    Value defaults[2] = {x.default_value, y.default_value};
    mean.default_value = apply_elementwise(arithmetic, defaults);
    if (factor < 0) {
      mean.name = node.name;
      return push_node(out, std::move(mean));
    }
    const NodeId merged = push_node(out, std::move(mean));
    Node product;
    product.kind = NodeKind::Elementwise;
    product.op = ElementOp::Mul;
    product.span = node.span;
    product.name = node.name;
    product.inputs = {remap[size_t(factor)], merged};
    return push_node(out, std::move(product));
  });
  simplify(program);
  return true;
}

}  // namespace raspc::compiler
