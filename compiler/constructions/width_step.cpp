// The width step, a construction: `indices < selector_width(s)` (or `selector_width(s) >
// indices`, and their negations `>=` / `<=`) becomes one head and one MLP step, whatever the
// maximum length. Here: its recognition (the rewrite width_steps, before inference, which would
// list the (index, width) pairs of the comparison and refuse them at long lengths), what it
// computes, its head's BOS score and its MLP's levels.
//
// Read as it is written, the comparison is a lookup over (index, width) pairs: n^2 of them, and
// the width's one-hot of n + 1 values. But the width's head can compare for itself: where BOS
// scores ln(i + 1/2) above a selected key instead of tying with it, BOS weighs as much as i + 1/2
// keys, and its attention weight (i + 1/2)/(i + 1/2 + w) is below 1/2 exactly where w > i
// (docs/long-contexts.md gives the float32 argument). Counting sorts (count_sorts.cpp) are made of
// these.
#include "compiler/lower_internal.hpp"

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

std::vector<Value> WidthStep::evaluate(const std::vector<ConstructionInput>& inputs, int n) const {
  std::vector<Value> out(static_cast<size_t>(n));
  for (int q = 0; q < n; ++q) out[size_t(q)] = Value::of_bool((q < selected_keys(inputs[0], q, n)) != index_at_least);
  return out;
}

Functional WidthStep::bos_score(const LowerContext& ctx, double B) const {
  // BOS scores ln(i + 1/2) above a selected key, so it weighs as i + 1/2 of them and holds less
  // than half the attention exactly where more than i keys are selected.
  const std::vector<int>& ln = ctx.allocation.log_position;
  return {{ctx.allocation.one, B}, {ln[0], 0.5 * ctx.allocation.log_position_scale},
          {ln[1], -0.5 * ctx.allocation.log_position_scale}};
}

// BOS's weight (i + 1/2)/(i + 1/2 + c) at the extremes of each side, where false (c <= i) is at
// least 1/2 + 1/(4(2i + 1/2)) and true (c > i) at most 1/2 - 1/(4(2i + 3/2)), closest to 1/2 at
// the last index.
std::vector<std::pair<Value, double>> WidthStep::scratch_levels(int max_len) const {
  const double n = max_len;
  const bool below = !index_at_least;  // the value where the width exceeds i
  return {{Value::of_bool(below), 0.5 / (n + 0.5)},
          {Value::of_bool(below), 0.5 - 0.25 / (2.0 * n - 0.5)},
          {Value::of_bool(!below), 0.5 + 0.25 / (2.0 * n - 1.5)},
          {Value::of_bool(!below), 1.0}};
}

}  // namespace raspc::compiler
