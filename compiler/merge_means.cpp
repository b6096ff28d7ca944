// A rewrite: sums and differences of means over the same selector become one mean.
//
//   aggregate(s, a) - aggregate(s, b)                 ->  aggregate(s, a - b)
//   c * aggregate(s, a) + d * aggregate(s, b)         ->  aggregate(s, c * a + d * b)   (c, d numbers)
//   x * aggregate(s, a) - x * aggregate(s, b)         ->  x * aggregate(s, a - b)
//   numerical(c * aggregate(s, a))                    ->  aggregate(s, c * a)   (read by nothing else)
//
// Exact (the mean is linear; the defaults combine the same way), and it turns the balance of the
// Dyck programs, a map of two numerical s-ops that one MLP cannot discretise, into one head
// whose value folds into W_V and one numerical s-op that it can. Constant factors go inside the
// mean, into the values, so Tracr's `LinearSequenceMap(a, b, 2, -1)` of two means is one mean,
// not a map of one. A mean annotated numerical (Tracr's `numerical(Aggregate(...))`) merges like
// an unannotated one, and the merged mean keeps the annotation; a categorical() one is a copy and
// stays as it is.
#include <algorithm>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

bool unannotated_or_numerical(const Node& n) {
  return n.annotation == Encoding::Unspecified || n.annotation == Encoding::Numerical;
}

bool is_sum(const Node& n) {
  return n.kind == NodeKind::Elementwise && (n.op == ElementOp::Add || n.op == ElementOp::Sub) &&
         unannotated_or_numerical(n);
}

bool mergeable(const Program& p, NodeId a, NodeId b) {
  const Node& x = p.node(a);
  const Node& y = p.node(b);
  return x.kind == NodeKind::Aggregate && y.kind == NodeKind::Aggregate && x.inputs[0] == y.inputs[0] &&
         unannotated_or_numerical(x) && unannotated_or_numerical(y) && x.default_value.is_number() &&
         y.default_value.is_number();
}

bool is_product(const Node& n) {
  return n.kind == NodeKind::Elementwise && n.op == ElementOp::Mul && n.annotation == Encoding::Unspecified;
}

// A mean times a number, `c * aggregate(s, a)` (either order), or the mean alone (c = -1): the
// aggregate and the constant's node.
bool scaled_mean(const Program& p, NodeId id, NodeId& mean, NodeId& constant) {
  const Node& n = p.node(id);
  constant = -1;
  mean = id;
  if (n.kind == NodeKind::Aggregate) return true;
  if (n.kind != NodeKind::Elementwise || n.op != ElementOp::Mul || !unannotated_or_numerical(n)) return false;
  for (int i = 0; i < 2; ++i) {
    const Node& c = p.node(n.inputs[size_t(i)]);
    if (c.kind == NodeKind::Constant && c.constant.is_number() && p.node(n.inputs[size_t(1 - i)]).kind == NodeKind::Aggregate) {
      constant = n.inputs[size_t(i)];
      mean = n.inputs[size_t(1 - i)];
      return true;
    }
  }
  return false;
}

// For x*A and x*B (either operand order): the shared factor and the two other operands.
bool common_factor(const Program& p, NodeId a, NodeId b, NodeId& factor, NodeId& ra, NodeId& rb) {
  const Node& x = p.node(a);
  const Node& y = p.node(b);
  if (!is_product(x) || !is_product(y)) return false;
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

// How a sum merges: its two means, the constant each is scaled by (-1: none) or the factor both
// are multiplied by (-1: none). A numerical product of a number and a mean is one mean (b = -1).
struct Merge {
  NodeId a = -1, b = -1, scale_a = -1, scale_b = -1, factor = -1;
};

bool merges(const Program& p, const std::vector<int>& readers, NodeId id, Merge& m) {
  const Node& node = p.node(id);
  m = Merge{};
  // `numerical(c * aggregate(s, a))`, the mean read by nothing else: `aggregate(s, c * a)`, a head
  // where the product would be an MLP discretising the mean (Tracr's `numerical(Map(lambda v: 2 *
  // v, mean))`). Only where it is annotated numerical: unannotated, the product is categorical.
  if (node.annotation == Encoding::Numerical && scaled_mean(p, id, m.a, m.scale_a) && m.scale_a >= 0 &&
      readers[size_t(m.a)] == 1 && m.a != p.output) {
    const Node& mean = p.node(m.a);
    if (unannotated_or_numerical(mean) && mean.default_value.is_number()) return true;
  }
  m = Merge{};
  if (!is_sum(node)) return false;
  if (scaled_mean(p, node.inputs[0], m.a, m.scale_a) && scaled_mean(p, node.inputs[1], m.b, m.scale_b) &&
      mergeable(p, m.a, m.b))
    return true;
  m = Merge{};
  return common_factor(p, node.inputs[0], node.inputs[1], m.factor, m.a, m.b) && mergeable(p, m.a, m.b);
}

}  // namespace

bool merge_means(Program& program) {
  std::vector<int> readers(program.nodes.size(), 0);
  for (const Node& n : program.nodes)
    for (NodeId in : n.inputs) ++readers[size_t(in)];
  Merge m;
  bool any = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()) && !any; ++id) any = merges(program, readers, id, m);
  if (!any) return false;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    if (!merges(program, readers, id, m)) return NodeId(-1);
    const NodeMaker maker{out, node.span};
    const Node& x = program.node(m.a);
    // The defaults combine as the values do.
    auto combine = [](ElementOp op, const Value& a, const Value& b) {
      Node arithmetic;
      arithmetic.kind = NodeKind::Elementwise;
      arithmetic.op = op;
      const Value operands[2] = {a, b};
      return apply_elementwise(arithmetic, operands);
    };
    // Each mean's values, times its constant, and its default likewise.
    auto scaled = [&](const Node& mean, NodeId scale, Value& default_value) {
      default_value = mean.default_value;
      if (scale < 0) return remap[size_t(mean.inputs[1])];
      default_value = combine(ElementOp::Mul, program.node(scale).constant, mean.default_value);
      return maker.map(ElementOp::Mul, {remap[size_t(scale)], remap[size_t(mean.inputs[1])]});
    };
    Value default_a, default_b;
    NodeId values = scaled(x, m.scale_a, default_a);
    if (m.b >= 0) values = maker.map(node.op, {values, scaled(program.node(m.b), m.scale_b, default_b)});
    const NodeId mean = maker.make(NodeKind::Aggregate, {remap[size_t(x.inputs[0])], values});
    out.nodes[size_t(mean)].default_value = m.b >= 0 ? combine(node.op, default_a, default_b) : default_a;
    // Numerical where the sum or a mean was annotated so: a mean either way.
    if (node.annotation == Encoding::Numerical || x.annotation == Encoding::Numerical ||
        (m.b >= 0 && program.node(m.b).annotation == Encoding::Numerical))
      out.nodes[size_t(mean)].annotation = Encoding::Numerical;
    if (m.factor < 0) {
      out.nodes[size_t(mean)].name = node.name;
      return mean;
    }
    const NodeId product = maker.map(ElementOp::Mul, {remap[size_t(m.factor)], mean}, node.name);
    out.nodes[size_t(product)].annotation = node.annotation;
    return product;
  });
  simplify(program);
  return true;
}

}  // namespace raspc::compiler
