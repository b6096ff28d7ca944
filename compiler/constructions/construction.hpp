// The compiler's own node kinds. A construction with a lowering of its own is a node of
// NodeKind::Construction whose `construction` is one of these: a pass that handles it says so (a
// switch over ConstructionKind warns where a kind is missing), and none can take it for a language
// node by forgetting a flag (a width step is no selector_width). The README beside this file says
// how to add one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "language/program.hpp"

namespace raspc::compiler {

struct LowerContext;
// A linear read of the residual stream (lower_internal.hpp).
using Functional = std::vector<std::pair<int, double>>;

enum class ConstructionKind : uint8_t {
  WidthStep,  // `indices < selector_width(s)` or its negation, a bool: one head, one MLP step
  WidthPart,  // one part of a width split over disjoint selectors: a count, read with the others
  CountRank,  // where a value's count ranks among the counts of all values: one MLP over their means
};

class Construction : public ConstructionNode {
 public:
  explicit Construction(ConstructionKind construction_kind) : kind(construction_kind) {}
  const ConstructionKind kind;
};

// The construction a node is, or nullptr for a node of the language.
inline const Construction* construction_of(const Node& node) {
  return node.kind == NodeKind::Construction ? static_cast<const Construction*>(node.construction.get()) : nullptr;
}
inline bool is_construction(const Node& node, ConstructionKind kind) {
  const Construction* c = construction_of(node);
  return c != nullptr && c->kind == kind;
}

// `indices < selector_width(s)`, or with index_at_least its negation `indices >= selector_width(s)`:
// inputs = {s}. The width's head compares the count with the index by itself (width_step.cpp: its
// recognition, the rewrite width_steps, its head and its MLP levels).
class WidthStep final : public Construction {
 public:
  explicit WidthStep(bool at_least, std::string step_of = "")
      : Construction(ConstructionKind::WidthStep), index_at_least(at_least), step_of_sort(std::move(step_of)) {}
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
class WidthPart final : public Construction {
 public:
  WidthPart(int whole, int index, int count)
      : Construction(ConstructionKind::WidthPart), part_of(whole), part(index), parts(count) {}
  const int part_of;
  const int part, parts;  // part (1-based) of parts
  const char* kind_name() const override { return "width_part"; }
  std::string key() const override { return std::to_string(part_of); }
  std::string detail() const override { return "part " + std::to_string(part) + " of " + std::to_string(parts); }
  std::vector<Value> evaluate(const std::vector<ConstructionInput>& inputs, int n) const override;
};

// The rank of the count of x's value at each position among the counts of every value x can take,
// #{b : count(b) < count(x_i)} (count_rank.cpp: its recognition, the rewrite count_ranks, and its
// MLP): inputs = {x, share_1, ..., share_m}, share_j the mean of `x == values[j]` over every
// position. Two positions' counts compare as their ranks do, and the rank has m values where the
// count has n + 1.
class CountRank final : public Construction {
 public:
  explicit CountRank(std::vector<Value> counted)
      : Construction(ConstructionKind::CountRank), values(std::move(counted)) {}
  const std::vector<Value> values;  // x's values, in the order of the shares
  const char* kind_name() const override { return "count_rank"; }
  std::string key() const override;
  std::string detail() const override { return "its count's rank, summed"; }
  std::vector<Value> evaluate(const std::vector<ConstructionInput>& inputs, int n) const override;
};

// A head that counts the keys its selector selects through BOS's weight: a selector_width, a width
// step or a width part (their MLPs read the count off the scratch dimension the head writes).
inline bool counts_keys(const Node& node) {
  if (node.kind == NodeKind::SelectorWidth) return true;
  const Construction* c = construction_of(node);
  if (c == nullptr) return false;
  switch (c->kind) {
    case ConstructionKind::WidthStep:
    case ConstructionKind::WidthPart: return true;
    case ConstructionKind::CountRank: return false;
  }
  return false;
}

// How many keys query q selects, in a selector input of an input of length n.
inline int selected_keys(const ConstructionInput& selector, int q, int n) {
  const uint8_t* row = selector.selector->data() + size_t(q) * size_t(n);
  int width = 0;
  for (int k = 0; k < n; ++k) width += row[k];
  return width;
}

// A node whose value is the count of the keys its selector selects: a selector_width or a width part.
inline bool holds_count(const Node& node) {
  return node.kind == NodeKind::SelectorWidth || is_construction(node, ConstructionKind::WidthPart);
}

// A node of a construction, its inputs and span still to be set.
inline Node construction_node(std::shared_ptr<const Construction> construction) {
  Node node;
  node.kind = NodeKind::Construction;
  node.construction = std::move(construction);
  return node;
}

}  // namespace raspc::compiler
