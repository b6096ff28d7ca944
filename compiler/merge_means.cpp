// Part of simplify: sums and differences of means over the same selector become one mean.
//
//   aggregate(s, a) - aggregate(s, b)             ->  aggregate(s, a - b)
//   x * aggregate(s, a) - x * aggregate(s, b)     ->  x * aggregate(s, a - b)
//
// Exact (the mean is linear; the defaults combine the same way), and it turns the balance of the
// Dyck programs, a map of two numerical s-ops that one MLP cannot discretise, into one head
// whose value folds into W_V and one numerical s-op that it can.
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

Program merge_means(const Program& program) {
  Program out;
  std::vector<NodeId> remap(program.nodes.size(), -1);
  bool changed = false;
  auto emit = [&](Node node) {
    out.nodes.push_back(std::move(node));
    return NodeId(out.nodes.size() - 1);
  };
  // The merged mean of aggregates a and b (old ids), combined by `op`.
  auto merged = [&](NodeId a, NodeId b, ElementOp op, const Span& span) {
    const Node& x = program.node(a);
    const Node& y = program.node(b);
    Node values;
    values.kind = NodeKind::Elementwise;
    values.op = op;
    values.span = span;
    values.inputs = {remap[size_t(x.inputs[1])], remap[size_t(y.inputs[1])]};
    NodeId v = emit(std::move(values));
    Node mean;
    mean.kind = NodeKind::Aggregate;
    mean.span = span;
    mean.inputs = {remap[size_t(x.inputs[0])], v};
    Node arithmetic = program.node(a);
    arithmetic.kind = NodeKind::Elementwise;
    arithmetic.op = op;
    Value defaults[2] = {x.default_value, y.default_value};
    mean.default_value = apply_elementwise(arithmetic, defaults);
    return emit(std::move(mean));
  };
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const Node& node = program.node(id);
    if (is_sum(node)) {
      NodeId a = node.inputs[0], b = node.inputs[1], factor, ra, rb;
      if (mergeable(program, a, b)) {
        NodeId m = merged(a, b, node.op, node.span);
        out.nodes[size_t(m)].name = node.name;
        remap[size_t(id)] = m;
        changed = true;
        continue;
      }
      if (common_factor(program, a, b, factor, ra, rb) && mergeable(program, ra, rb)) {
        NodeId m = merged(ra, rb, node.op, node.span);
        Node product;
        product.kind = NodeKind::Elementwise;
        product.op = ElementOp::Mul;
        product.span = node.span;
        product.name = node.name;
        product.inputs = {remap[size_t(factor)], m};
        remap[size_t(id)] = emit(std::move(product));
        changed = true;
        continue;
      }
    }
    Node copy = node;
    for (NodeId& in : copy.inputs) in = remap[size_t(in)];
    remap[size_t(id)] = emit(std::move(copy));
  }
  if (!changed) return program;
  out.output = remap[size_t(program.output)];
  for (const auto& [name, id] : program.named) out.named.emplace_back(name, remap[size_t(id)]);
  return simplify(out);
}

}  // namespace raspc::compiler
