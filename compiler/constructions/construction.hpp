// The compiler's own node kinds. A construction with a lowering of its own is a node of
// NodeKind::Construction whose `construction` is one of two families:
// - a variant of selector_width's head (WidthStep, WidthPart): a head that counts the keys its
//   selector selects through BOS's weight, built by the width's own code with the variant's
//   differences; a switch over WidthHeadKind warns where a variant is missing;
// - an MlpConstruction: its MLP is its own, and everything the passes ask of it (its values, how
//   its MLP reads its inputs, its units) is a virtual function its file implements, so the class
//   lives in that file alone and a new one is that file plus its row in the pipeline's table.
// None can take it for a language node by forgetting a flag (a width step is no selector_width).
// The README beside this file says how to add one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "language/program.hpp"

namespace raspc::compiler {

struct LowerContext;
struct SopInfo;
enum class ReadKind;
// A linear read of the residual stream (lower_internal.hpp).
using Functional = std::vector<std::pair<int, double>>;

// Every construction of the compiler: an MlpConstruction or a WidthHead, below.
class Construction : public ConstructionNode {};

// The construction a node is, or nullptr for a node of the language.
inline const Construction* construction_of(const Node& node) {
  return node.kind == NodeKind::Construction ? static_cast<const Construction*>(node.construction.get()) : nullptr;
}

// An MLP unit a construction builds itself: GELU(in . ln_2(x) + bias), written into the residual
// dimensions of `out` times the weights there.
struct MlpUnit {
  Functional in;
  double bias = 0;
  std::map<int, double> out;
  std::string label;
};

// A construction computed by one MLP of its own, placed in the first block where its inputs are
// ready (schedule.cpp), its output given dimensions by its encoding as any s-op's are (allocate.cpp;
// a count rank's, numerical, one). The passes ask it only through these.
class MlpConstruction : public Construction {
 public:
  // Its values, encoding and --explain's why (the infer pass sets the numeric bounds from them).
  virtual void infer(SopInfo& out) const = 0;
  // How its MLP reads each of its `inputs` s-ops: a one-hot (the schedule then makes it, as for a
  // head) or a number.
  virtual std::vector<ReadKind> reads(size_t inputs) const = 0;
  // What the schedule's --explain says the MLP computes: "the rank of its value's count, from 3 shares".
  virtual std::string purpose(const Node& node) const = 0;
  // Its units, for the node `id`; `sum`, `square` and `gain` describe ln_2's input as lower_mlp's
  // do, and min_margin is lowered to the smallest distance of a pre-activation from its step.
  virtual std::vector<MlpUnit> mlp_units(const LowerContext& ctx, NodeId id, double sum, double square, double gain,
                                         double& min_margin) const = 0;
};

inline const MlpConstruction* mlp_construction_of(const Node& node) {
  return dynamic_cast<const MlpConstruction*>(construction_of(node));
}

enum class WidthHeadKind : uint8_t {
  WidthStep,  // `indices < selector_width(s)` or its negation, a bool: one head, one MLP step
  WidthPart,  // one part of a width split over disjoint selectors: a count, read with the others
};

// A variant of selector_width's head.
class WidthHead : public Construction {
 public:
  explicit WidthHead(WidthHeadKind head_kind) : kind(head_kind) {}
  const WidthHeadKind kind;
};

inline const WidthHead* width_head_of(const Node& node) {
  return dynamic_cast<const WidthHead*>(construction_of(node));
}
inline bool is_construction(const Node& node, WidthHeadKind kind) {
  const WidthHead* c = width_head_of(node);
  return c != nullptr && c->kind == kind;
}

// `indices < selector_width(s)`, or with index_at_least its negation `indices >= selector_width(s)`:
// inputs = {s}. The width's head compares the count with the index by itself (width_step.cpp: its
// recognition, the rewrite width_steps, its head and its MLP levels).
class WidthStep final : public WidthHead {
 public:
  explicit WidthStep(bool at_least, std::string step_of = "")
      : WidthHead(WidthHeadKind::WidthStep), index_at_least(at_least), step_of_sort(std::move(step_of)) {}
  const bool index_at_least;
  // Where a counting sort made it, which of its steps ("step 1 of 3"): how the user's sort names it.
  const std::string step_of_sort;
  const char* kind_name() const override { return "width_step"; }
  std::string key() const override { return index_at_least ? "at_least" : "below"; }
  std::string detail() const override { return step_of_sort; }
  std::vector<Value> evaluate(const std::vector<ConstructionInput>& inputs, int n) const override;
  // The head: what BOS scores as a key beyond B, ln(i + 1/2) above a selected key, read from the
  // query's log position (Allocation::log_position).
  Functional bos_score(const LowerContext& ctx, double B) const;
  // The MLP: what the scratch dimension holds at the extremes of each value, by value.
  std::vector<std::pair<Value, double>> scratch_levels(int max_len) const;
};

// selector_width(s) for one of the disjoint parts s of a width split over them (width_part.cpp: its
// recognition, the rewrite split_widths, and how its head weighs BOS):
// inputs = {s}. The parts of one width share part_of, so their sum is at most the keys a query
// sees; their heads weigh BOS so that the sum reads along a line (scratch_level).
class WidthPart final : public WidthHead {
 public:
  WidthPart(int whole, int index, int count)
      : WidthHead(WidthHeadKind::WidthPart), part_of(whole), part(index), parts(count) {}
  const int part_of;
  const int part, parts;  // part (1-based) of parts
  const char* kind_name() const override { return "width_part"; }
  std::string key() const override { return std::to_string(part_of); }
  std::string detail() const override { return "part " + std::to_string(part) + " of " + std::to_string(parts); }
  std::vector<Value> evaluate(const std::vector<ConstructionInput>& inputs, int n) const override;
};

// A head that counts the keys its selector selects through BOS's weight: a selector_width, a width
// step or a width part (their MLPs read the count off the scratch dimension the head writes).
inline bool counts_keys(const Node& node) {
  return node.kind == NodeKind::SelectorWidth || width_head_of(node) != nullptr;
}

// How many keys query q selects, in a selector input of an input of length n.
inline int selected_keys(const ConstructionInput& selector, int q, int n) {
  return selected_in(selector.selector->data() + size_t(q) * size_t(n), n);
}

// A node whose value is the count of the keys its selector selects: a selector_width or a width part.
inline bool holds_count(const Node& node) {
  return node.kind == NodeKind::SelectorWidth || is_construction(node, WidthHeadKind::WidthPart);
}

// A node of a construction, its inputs and span still to be set.
inline Node construction_node(std::shared_ptr<const Construction> construction) {
  Node node;
  node.kind = NodeKind::Construction;
  node.construction = std::move(construction);
  return node;
}

}  // namespace raspc::compiler
