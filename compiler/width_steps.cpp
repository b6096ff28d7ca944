// A rewrite: `indices < selector_width(s)` (or `selector_width(s) > indices`, and their
// negations `>=` / `<=`) becomes one head and one MLP step, whatever the maximum length. Before
// inference, which would list the (index, width) pairs of the comparison and refuse them at long
// lengths.
//
// Read as it is written, the comparison is a lookup over (index, width) pairs: n^2 of them, and
// the width's one-hot of n + 1 values. But the width's head can compare for itself: where BOS
// scores ln(i + 1/2) above a selected key instead of tying with it, BOS weighs as much as i + 1/2
// keys, and its attention weight (i + 1/2)/(i + 1/2 + w) is below 1/2 exactly where w > i
// (a WidthStep node, constructions/construction.hpp: lower_head.cpp writes the head, lower_mlp.cpp's scratch levels the
// step, docs/long-contexts.md the float32 argument). Counting sorts (count_sorts.cpp) are made of
// these.
#include "compiler/constructions/construction.hpp"
#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// The width compared with `indices` by `node`, and whether the node holds `indices < width` (true)
// or its negation; -1 when the node is not such a comparison.
NodeId compared_width(const Program& p, const Node& node, bool& below) {
  // (A comparison made numerical() keeps its lookup: a width step is categorical.)
  if (node.kind != NodeKind::Elementwise || node.inputs.size() != 2 || node.annotation == Encoding::Numerical)
    return -1;
  auto is = [&](NodeId id, NodeKind kind) { return p.node(id).kind == kind; };
  const NodeId a = node.inputs[0], b = node.inputs[1];
  if (is(a, NodeKind::Indices) && is(b, NodeKind::SelectorWidth)) {
    if (node.op != ElementOp::Lt && node.op != ElementOp::Ge) return -1;
    below = node.op == ElementOp::Lt;  // indices < w; indices >= w is its negation
    return b;
  }
  if (is(a, NodeKind::SelectorWidth) && is(b, NodeKind::Indices)) {
    if (node.op != ElementOp::Gt && node.op != ElementOp::Le) return -1;
    below = node.op == ElementOp::Gt;  // w > indices; w <= indices is its negation
    return a;
  }
  return -1;
}

}  // namespace

bool width_steps(Program& program) {
  bool any = false;
  for (NodeId id = 0; id < NodeId(program.nodes.size()) && !any; ++id) {
    bool below = false;
    any = compared_width(program, program.node(id), below) >= 0;
  }
  if (!any) return false;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    bool below = false;
    const NodeId width = compared_width(program, program.node(id), below);
    if (width < 0) return NodeId(-1);
    Node step = construction_node(std::make_shared<WidthStep>(!below));
    step.span = node.span;
    step.name = node.name;
    step.annotation = node.annotation;
    step.inputs = {remap[size_t(program.node(width).inputs[0])]};
    return push_node(out, std::move(step));
  });
  return true;
}

}  // namespace raspc::compiler
