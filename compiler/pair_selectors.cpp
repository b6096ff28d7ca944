// A rewrite: a selector conjunct whose comparisons read several s-ops on one side.
//
// A head scores each conjunct (a top-level `and` adds them) as one table over the values of one
// key s-op and one query s-op. `select(tokens, tokens, ==) or select(indices, indices, <)` reads
// two s-ops on each side, and its selection is no sum of tables over the pairs. So the s-ops one
// side reads become one s-op: their tuple (ElementOp::Tuple), whose values are the combinations
// that can occur, computed by one MLP lookup where its parts are ready, like any fused map. Each
// comparison of the conjunct then reads a lookup table of the tuple that gives back what its side
// held, and lower_head.cpp scores the conjunct over tuple values by evaluating the original
// comparisons through those tables. The tables are built here from the parts' values, so a
// tuple's string is never parsed; and the interpreter evaluates the rewritten selector to the
// same selection, so the verification checks the rewrite too. Only a side reading several s-ops
// gets a tuple. Costs: an MLP before the head when the parts are not already in one block's
// residual, and one residual dimension per combination.
#include <algorithm>
#include <map>
#include <optional>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// The s-ops a conjunct's comparisons read (see comparison_source), each side in id order.
struct Sources {
  std::vector<NodeId> keys, queries;
};

void collect_sources(const Program& program, const Inference& inference, NodeId sel, Sources& out) {
  const Node& node = program.node(sel);
  if (node.kind != NodeKind::Select) {
    for (NodeId in : node.inputs) collect_sources(program, inference, in, out);
    return;
  }
  auto add = [&](std::vector<NodeId>& list, NodeId side) {
    NodeId source = comparison_source(program, inference, side);
    if (source < 0 || std::find(list.begin(), list.end(), source) != list.end()) return;
    list.insert(std::upper_bound(list.begin(), list.end(), source), source);
  };
  add(out.keys, node.inputs[0]);
  add(out.queries, node.inputs[1]);
}

// A tuple of several s-ops of the original program, and what each part holds at each tuple value.
struct Tuple {
  NodeId node = -1;  // in the rewritten program
  std::vector<NodeId> parts;
  std::vector<Value> values;
  std::vector<std::vector<Value>> part_values;  // by tuple value, by part
};

class Pairer {
 public:
  Pairer(const Program& program, const Inference& inference) : in_(program), inference_(inference) {}

  // The rewritten program, or nothing where no conjunct reads several s-ops on one side.
  std::optional<Program> run() {
    std::vector<uint8_t> rewrite(in_.nodes.size(), 0);
    bool any = false;
    for (NodeId id = 0; id < NodeId(in_.nodes.size()); ++id) {
      const Node& node = in_.node(id);
      if (!inference_.info[size_t(id)].needed) continue;
      if (node.kind != NodeKind::Aggregate && !counts_keys(node)) continue;
      std::vector<NodeId> conjuncts;
      flatten_selector(in_, node.inputs[0], NodeKind::SelectAnd, conjuncts);
      for (NodeId part : conjuncts)
        if (needs_tuple(part)) rewrite[size_t(id)] = 1, any = true;
    }
    if (!any) return std::nullopt;
    Program out = rewrite_nodes(in_, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& into) {
      if (!rewrite[size_t(id)]) return NodeId(-1);
      out_ = &into;
      remap_ = &remap;
      node.inputs[0] = rewrite_selector(in_.node(id).inputs[0]);
      return push_node(into, std::move(node));
    });
    // The selectors replaced are dead now.
    simplify(out);
    return out;
  }

 private:
  const Program& in_;
  const Inference& inference_;
  // While a node is rewritten: the program being built and where the nodes before it went.
  Program* out_ = nullptr;
  const std::vector<NodeId>* remap_ = nullptr;
  std::map<std::vector<NodeId>, Tuple> tuples_;               // by parts
  std::map<std::pair<NodeId, NodeId>, NodeId> unpacked_;      // (tuple node, side) -> lookup table

  NodeId emit(Node node) { return push_node(*out_, std::move(node)); }
  NodeId remapped(NodeId id) const { return (*remap_)[size_t(id)]; }
  Sources sources(NodeId conjunct) const {
    Sources s;
    collect_sources(in_, inference_, conjunct, s);
    return s;
  }

  bool needs_tuple(NodeId conjunct) const {
    Sources s = sources(conjunct);
    return s.keys.size() > 1 || s.queries.size() > 1;
  }

  NodeId rewrite_selector(NodeId sel) {
    const Node& node = in_.node(sel);
    if (node.kind == NodeKind::SelectAnd) {
      NodeId a = rewrite_selector(node.inputs[0]), b = rewrite_selector(node.inputs[1]);
      if (a == remapped(node.inputs[0]) && b == remapped(node.inputs[1])) return remapped(sel);
      Node copy = node;
      copy.inputs = {a, b};
      return emit(std::move(copy));
    }
    Sources s = sources(sel);
    if (s.keys.size() <= 1 && s.queries.size() <= 1) return remapped(sel);
    const Tuple* keys = s.keys.size() > 1 ? &tuple_of(s.keys, sel, "key") : nullptr;
    const Tuple* queries = s.queries.size() > 1 ? &tuple_of(s.queries, sel, "query") : nullptr;
    return rewrite_conjunct(sel, keys, queries);
  }

  NodeId rewrite_conjunct(NodeId sel, const Tuple* keys, const Tuple* queries) {
    Node copy = in_.node(sel);
    if (copy.kind == NodeKind::Select) {
      copy.inputs[0] = keys ? unpack(*keys, copy.inputs[0]) : remapped(copy.inputs[0]);
      copy.inputs[1] = queries ? unpack(*queries, copy.inputs[1]) : remapped(copy.inputs[1]);
    } else {
      for (NodeId& input : copy.inputs) input = rewrite_conjunct(input, keys, queries);
    }
    return emit(std::move(copy));
  }

  // "a, b" for a tuple's name; "a and b", "a, b and c" for a sentence.
  std::string parts_text(const std::vector<NodeId>& parts, bool sentence = false) const {
    std::string text;
    for (size_t i = 0; i < parts.size(); ++i)
      text += (i == 0 ? "" : sentence && i + 1 == parts.size() ? " and " : ", ") + in_.label(parts[i]);
    return text;
  }

  // The tuple of `parts`, made on first use; refused at `conjunct` when it has too many values.
  const Tuple& tuple_of(const std::vector<NodeId>& parts, NodeId conjunct, const char* side) {
    auto found = tuples_.find(parts);
    if (found != tuples_.end()) return found->second;
    const Span& where = in_.node(conjunct).span;
    const std::string why = std::string("this selector combines comparisons of ") + parts_text(parts, true) + " on the " +
                            side + " side with `or` or `not`, so one attention head scores it over their combinations";
    Node node;
    node.kind = NodeKind::Elementwise;
    node.op = ElementOp::Tuple;
    node.span = where;
    node.name = "(" + parts_text(parts) + ")";
    for (NodeId part : parts) node.inputs.push_back(remapped(part));

    // What the tuple's MLP enumerates: the combinations its inputs can hold together.
    std::vector<NodeId> support;
    for (NodeId part : parts) {
      const Node& p = in_.node(part);
      bool source = p.kind != NodeKind::Elementwise || inference_.cut[size_t(part)] || p.op == ElementOp::Tuple;
      for (NodeId s : source ? std::vector<NodeId>{part} : support_of(in_, part, &inference_.cut))
        if (std::find(support.begin(), support.end(), s) == support.end()) support.push_back(s);
    }
    std::sort(support.begin(), support.end());
    // joint_combinations walks positions only when an input has values by position, and those
    // list every position.
    int positions = 0;
    for (NodeId s : support) positions = std::max(positions, int(inference_.info[size_t(s)].by_position.size()));
    std::vector<JointCombination> combinations;
    if (!joint_combinations(inference_, support, positions, kCombinationLimit, combinations))
      fail_at(where, why + ", and those cannot be enumerated (more than " + std::to_string(kCombinationLimit) +
                         " combinations of their inputs); use a smaller vocabulary or --max-len");
    Tuple tuple;
    tuple.parts = parts;
    std::map<uint32_t, size_t> seen;  // interned tuple string -> index
    std::vector<Value> assignment(support.size()), at(parts.size());
    for (const JointCombination& c : combinations) {
      for (size_t i = 0; i < support.size(); ++i) assignment[i] = inference_.info[size_t(support[i])].values[c.digits[i]];
      bool defined = true;
      for (size_t i = 0; i < parts.size() && defined; ++i)
        defined = evaluate_fused(in_, parts[i], support, assignment, at[i]);
      if (!defined) continue;
      Value value = apply_elementwise(node, at.data());
      if (!seen.emplace(value.string_id, tuple.values.size()).second) continue;
      tuple.values.push_back(value);
      tuple.part_values.push_back(at);
    }
    if (tuple.values.size() > kValueSetLimit)
      fail_at(where, why + ", which can take " + std::to_string(tuple.values.size()) + " values, more than the " +
                         std::to_string(kValueSetLimit) +
                         " a compiled model can hold one dimension each; use a smaller vocabulary or --max-len");
    tuple.node = emit(std::move(node));
    return tuples_.emplace(parts, std::move(tuple)).first->second;
  }

  // What `side` (a part of the tuple, a map of one, or a constant) holds, as a lookup table of the
  // tuple's value.
  NodeId unpack(const Tuple& tuple, NodeId side) {
    if (in_.node(side).kind == NodeKind::Constant) return remapped(side);
    auto found = unpacked_.find({tuple.node, side});
    if (found != unpacked_.end()) return found->second;
    NodeId source = comparison_source(in_, inference_, side);
    size_t part = size_t(std::find(tuple.parts.begin(), tuple.parts.end(), source) - tuple.parts.begin());
    Node table;
    table.kind = NodeKind::Elementwise;
    table.op = ElementOp::LookupTable;
    table.span = in_.node(side).span;
    table.name = in_.label(side) + " of " + out_->label(tuple.node);
    table.inputs = {tuple.node};
    for (size_t v = 0; v < tuple.values.size(); ++v) {
      const Value& held = tuple.part_values[v][part];
      Value value;
      if (side != source && !evaluate_fused(in_, side, {source}, {held}, value)) continue;
      table.table_keys.push_back(tuple.values[v]);
      table.table_values.push_back(side == source ? held : value);
    }
    NodeId id = emit(std::move(table));
    unpacked_.emplace(std::make_pair(tuple.node, side), id);
    return id;
  }
};

}  // namespace

bool pair_selector_sides(Program& program, const Inference& inference) {
  std::optional<Program> paired = Pairer(program, inference).run();
  if (paired) program = std::move(*paired);
  return paired.has_value();
}

}  // namespace raspc::compiler
