// A rewrite: a stable sort whose values are a function of its keys becomes a counting sort.
//
// The library's `sort(seq, key)` gives every position a target (how many keys sort before it, a
// selector width whose tie break `select(indices, indices, <)` has no O(1) head) and copies `seq`
// from the key whose target is the query's index. Its model grows with n^2 (docs/long-contexts.md).
// When `seq` is `key` or a map of it, which element lands at position i does not matter, only its
// key: with the key's values v_1 < ... < v_m and c_j the number of keys <= v_j, position i holds
// g(v_j) for the first j with i < c_j. Each `i < c_j` is one head and one MLP step, whatever n
// (constructions/width_step.cpp). The rest is a lookup over m - 1 booleans.
//
// Tracr's unique sort, `aggregate(select(selector_width(select(key, key, <)), indices, ==), seq)`,
// has no tie break: equal keys share the target c_{j-1} (the keys below v_j), which gets their mean,
// and the slots after it in their run get the aggregate's default. Where `seq` is a number-valued
// function g of the key, position i holds g(v_j) if it is the first of v_j's run and the default
// otherwise. The run, its rank j, is the counting sort of the ranks; the first slot is where the
// rank differs from the one before (a shift by one: constructions/numerical_selector.cpp).
//
// Bidirectional only (a causal query sees a prefix, and its counts are not the sorted order's).
#include <algorithm>
#include <map>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// The most key values a counting sort takes: each costs a head (and a unit of the lookup over the
// steps, a decision list: lower_mlp.cpp).
constexpr size_t kMaxCountedKeys = 16;
// A unique sort is counted from a maximum length of this many times its key values on. Its rank,
// the shift and the copy take a block and m + 1 heads more than the counting sort, and below the
// crossover the one-hot model of Tracr's construction is the smaller; measured (sort_unique.rasp
// over 1..m): m = 2 crosses at max length 12-16, 4 at 20-24, 8 at 40-48, 16 at about 134 (15 heads
// make n_embd 255 there).
constexpr int kUniqueSortLengthPerKey = 9;
// The most combinations of the key's and the values' sources evaluated to see that the values are
// a function of the key.
constexpr size_t kMaxEvaluated = 1 << 14;

bool is_select(const Program& p, NodeId id, NodeId key, NodeId query, Comparison cmp) {
  const Node& n = p.node(id);
  return n.kind == NodeKind::Select && n.comparison == cmp && n.inputs[0] == key && n.inputs[1] == query;
}

// `a op b` or `b op a`.
bool either_order(const Program& p, NodeId id, NodeKind op, const std::function<bool(NodeId, NodeId)>& match) {
  const Node& n = p.node(id);
  if (n.kind != op || n.inputs.size() != 2) return false;
  return match(n.inputs[0], n.inputs[1]) || match(n.inputs[1], n.inputs[0]);
}

// The key of `aggregate(select(selector_width(key < key' or (key == key' and index < index')),
// indices, ==), seq)`, the library's sort, or -1; with `unique` set, the key of the same without the
// tie break, `aggregate(select(selector_width(select(key, key, <)), indices, ==), seq)`.
NodeId sort_key(const Program& p, NodeId id, bool& unique) {
  const Node& agg = p.node(id);
  if (agg.kind != NodeKind::Aggregate) return -1;
  const Node& by_target = p.node(agg.inputs[0]);
  if (by_target.kind != NodeKind::Select || by_target.comparison != Comparison::Eq) return -1;
  const Node& target = p.node(by_target.inputs[0]);
  if (target.kind != NodeKind::SelectorWidth || p.node(by_target.inputs[1]).kind != NodeKind::Indices)
    return -1;
  const NodeId indices = by_target.inputs[1];
  const Node& less_only = p.node(target.inputs[0]);
  unique = less_only.kind == NodeKind::Select && less_only.comparison == Comparison::Lt &&
           less_only.inputs[0] == less_only.inputs[1];
  if (unique) return less_only.inputs[0];
  NodeId key = -1;
  either_order(p, target.inputs[0], NodeKind::SelectOr, [&](NodeId less, NodeId tie) {
    const Node& l = p.node(less);
    if (l.kind != NodeKind::Select || l.comparison != Comparison::Lt || l.inputs[0] != l.inputs[1]) return false;
    const NodeId k = l.inputs[0];
    bool ok = either_order(p, tie, NodeKind::SelectAnd, [&](NodeId same, NodeId earlier) {
      return is_select(p, same, k, k, Comparison::Eq) && is_select(p, earlier, indices, indices, Comparison::Lt);
    });
    if (ok) key = k;
    return ok;
  });
  return key;
}

struct CountingSort {
  NodeId key = -1, indices = -1;
  std::vector<Value> keys;     // in sorted order
  std::vector<Value> written;  // g(keys[j])
  bool unique = false;         // Tracr's unique sort: g(keys[j]) on the first slot of its run only
};

// The counting sort for node `id`, when it is a sort whose values are a function of its keys:
// evaluated on every combination of what both are computed from, equal keys always write equal
// values (and both are defined wherever they can be computed: where they are not, the sort raises
// an error the counting sort might not).
std::optional<CountingSort> counting_sort(const Program& p, const Inference& inference, const CompileOptions& options,
                                          NodeId id) {
  bool unique = false;
  const NodeId key = sort_key(p, id, unique);
  if (key < 0) return std::nullopt;
  const SopInfo& key_info = inference.info[size_t(key)];
  // A head a key value against the stable sort's one-hots of n + 1 widths: below a maximum length
  // of m the stable sort is the smaller (measured: 4 keys at max length 3, 8 at 7).
  if (!key_info.values_known || key_info.values.size() < 2 || key_info.values.size() > kMaxCountedKeys ||
      size_t(options.max_len) < key_info.values.size())
    return std::nullopt;
  if (unique && size_t(options.max_len) < kUniqueSortLengthPerKey * key_info.values.size()) return std::nullopt;
  CountingSort plan;
  plan.key = key;
  plan.unique = unique;
  plan.indices = p.node(p.node(id).inputs[0]).inputs[1];
  plan.keys = ordered_values(key_info.values, p.node(id).span);
  if (plan.keys.empty()) return std::nullopt;
  const NodeId seq = p.node(id).inputs[1];
  std::vector<NodeId> support;
  for (NodeId side : {key, seq}) {
    const std::vector<NodeId> from =
        p.node(side).kind == NodeKind::Elementwise ? support_of(p, side) : std::vector<NodeId>{side};
    support.insert(support.end(), from.begin(), from.end());
  }
  std::sort(support.begin(), support.end());
  support.erase(std::unique(support.begin(), support.end()), support.end());
  std::vector<JointCombination> combinations;
  if (!joint_combinations(inference, support, options.max_len, kMaxEvaluated, combinations)) return std::nullopt;
  const MapValues keys = evaluate_on(p, inference, key, support, combinations);
  const MapValues values = evaluate_on(p, inference, seq, support, combinations);
  std::vector<std::optional<Value>> written(plan.keys.size());
  for (size_t c = 0; c < combinations.size(); ++c) {
    if (!keys.defined[c] || !values.defined[c]) return std::nullopt;
    size_t j = 0;
    while (j < plan.keys.size() && !same_value(plan.keys[j], keys.value[c])) ++j;
    if (j == plan.keys.size()) return std::nullopt;
    if (written[j] && !same_value(*written[j], values.value[c])) return std::nullopt;
    written[j] = values.value[c];
  }
  for (const std::optional<Value>& v : written) {
    if (!v) return std::nullopt;  // a key value no input produces
    // A unique sort's first slot gets the mean of its run: a number stays itself, a bool becomes
    // a number where the run is longer than one, and strings are an error the rewrite would hide.
    if (plan.unique && !v->is_number()) return std::nullopt;
    plan.written.push_back(*v);
  }
  return plan;
}

}  // namespace

bool count_sorts(Program& program, const Inference& inference, const CompileOptions& options) {
  if (options.mode != Mode::Bidirectional) return false;
  std::vector<std::optional<CountingSort>> plans(program.nodes.size());
  bool any = false;
  FusedCacheScope cache(program);
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    if (!inference.info[size_t(id)].needed) continue;
    plans[size_t(id)] = counting_sort(program, inference, options, id);
    any = any || plans[size_t(id)].has_value();
  }
  if (!any) return false;
  std::map<std::string, std::string> steps;  // by the name of each `indices < c_j`: which step it is
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    if (!plans[size_t(id)]) return NodeId(-1);
    const CountingSort& plan = *plans[size_t(id)];
    const std::string name = program.label(id);
    const NodeMaker maker{out, node.span};
    // below[j]: `indices < c_j`, c_j the number of keys <= keys[j] (constructions/width_step.cpp makes each
    // one head and one step).
    std::vector<NodeId> below;
    for (size_t j = 0; j + 1 < plan.keys.size(); ++j) {
      const NodeId selector = maker.make(NodeKind::Select, {remap[size_t(plan.key)], maker.constant(plan.keys[j])});
      out.nodes[size_t(selector)].comparison = Comparison::Le;
      const NodeId width = maker.make(NodeKind::SelectorWidth, {selector}, name + "_count_" + std::to_string(j + 1));
      const std::string step = name + "_below_" + std::to_string(j + 1);
      steps[step] = "step " + std::to_string(j + 1) + " of " + std::to_string(plan.keys.size() - 1);
      below.push_back(maker.map(ElementOp::Lt, {remap[size_t(plan.indices)], width}, step));
    }
    // written[j] if below[j] else (... else written[m-1]), built from the last key up.
    auto decision_list = [&](const std::vector<Value>& written) {
      NodeId chain = maker.constant(written.back());
      for (size_t j = below.size(); j-- > 0;)
        chain = maker.map(ElementOp::IfElse, {maker.constant(written[j]), below[j], chain});
      return chain;
    };
    NodeId chain = -1;
    if (!plan.unique) {
      chain = decision_list(plan.written);
    } else {
      // The rank j of the run position i lies in, the rank one position before (0 at the first:
      // nothing selected), and g(v_j) where the two differ.
      std::vector<Value> ranks;
      for (size_t j = 0; j < plan.keys.size(); ++j) ranks.push_back(Value::of_int(int64_t(j) + 1));
      const NodeId rank = decision_list(ranks);
      out.nodes[size_t(rank)].name = name + "_rank";
      const NodeId earlier = maker.map(ElementOp::Sub, {remap[size_t(plan.indices)], maker.constant(Value::of_int(1))},
                                       name + "_position_before");
      const NodeId just_before = maker.make(NodeKind::Select, {remap[size_t(plan.indices)], earlier}, name + "_one_back");
      out.nodes[size_t(just_before)].comparison = Comparison::Eq;
      const NodeId rank_before = maker.make(NodeKind::Aggregate, {just_before, rank}, name + "_rank_before");
      out.nodes[size_t(rank_before)].default_value = Value::of_int(0);
      // The rank at i itself, copied by a head beside the one that reads i - 1: the output's
      // lookup then reads two one-hots of m and m + 1 values, where read through the steps it
      // would enumerate 2^(m-1) (m + 1) combinations (1,152 units at m = 8).
      const NodeId here = maker.make(NodeKind::Select, {remap[size_t(plan.indices)], remap[size_t(plan.indices)]},
                                     name + "_same_position");
      out.nodes[size_t(here)].comparison = Comparison::Eq;
      const NodeId rank_here = maker.make(NodeKind::Aggregate, {here, rank}, name + "_rank_here");
      const NodeId same = maker.map(ElementOp::Eq, {rank_here, rank_before}, name + "_same_run");
      const NodeId first = maker.map(ElementOp::Not, {same}, name + "_first_of_run");
      const NodeId value = maker.map(ElementOp::LookupTable, {rank_here}, name + "_run_value");
      out.nodes[size_t(value)].table_keys = ranks;
      out.nodes[size_t(value)].table_values = plan.written;
      chain = maker.map(ElementOp::IfElse, {value, first, maker.constant(node.default_value)});
    }
    out.nodes[size_t(chain)].name = node.name;
    out.nodes[size_t(chain)].annotation = node.annotation;
    return chain;
  });
  // The comparisons `indices < c_j` just built become width steps, each named by its sort's step.
  width_steps(program);
  for (Node& node : program.nodes) {
    auto it = steps.find(node.name);
    if (it != steps.end() && is_construction(node, WidthHeadKind::WidthStep))
      node.construction = std::make_shared<WidthStep>(
          static_cast<const WidthStep&>(*node.construction).index_at_least, it->second);
  }
  return true;
}

}  // namespace raspc::compiler
