// A rewrite: a comparison of keys made from one s-op x and the position, ordered by x first and the
// position second, compares x's order and then the positions.
//
// Tracr has no stable sort; its programs and the benchmarks built on it make keys unique with
// `SequenceMap(lambda x, i: x + i * eps, x, indices)` (lib.make_sort's `x + min_key * i / n`) and
// sort them with `select(k, k, <)`. Compiled as written, k is a map of two inputs: an MLP lists
// every (x, i) pair as a one-hot of |x| n values, in a block of its own before the sort's width,
// whose attention layer is unused. But wherever two positions differ, `k_key < k_query` is `x_key
// before x_query in x's order, or the same and key before query`: the library's stable sort's
// selector, whose width is a counting sort (count_sorts.cpp) or the sum of two parts
// (split_widths.cpp), and whose ties read the positions' one-hots. A position compared with itself
// needs nothing of the kind: k == k there, and the index comparison says what `<` or `<=` does.
//
// The order is checked, not assumed: the key is evaluated at every (x value, position) pair, and
// the comparison at every two pairs of different positions must be all true or all false between
// two classes of x's values (x's order, with ties where the key's does not tell them apart) and
// the index comparison, one direction for all, within a class. Both modes: it holds key by key.
#include <algorithm>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

// The most key comparisons made to check one selector: m^2 n^2 for m values of x at max length n
// (about a second at this many).
constexpr size_t kMaxComparisons = size_t(1) << 24;

// How `key(a, i) cmp key(b, j)` goes over every i != j, for x values a (at the key) and b (at the
// query).
enum class Pattern { Always, Never, KeyEarlier, KeyLater, Mixed };

struct TiebreakPlan {
  NodeId x = -1, indices = -1;
  bool x_in_order = false;     // the classes are x's own values in x's `<` order: compare x itself
  std::vector<int64_t> rank;   // else x's rank by its value's digit (equal within a class)
  size_t classes = 0;
  Comparison index_cmp = Comparison::Lt;
};

Pattern pattern_of(const std::vector<Value>& at_a, const std::vector<Value>& at_b, Comparison cmp, const Span& where) {
  bool always = true, never = true, earlier = true, later = true;
  const size_t n = at_a.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const bool c = compare_select(cmp, at_a[i], at_b[j], where);
      always = always && c;
      never = never && !c;
      earlier = earlier && c == (i < j);
      later = later && c == (i > j);
      if (!always && !never && !earlier && !later) return Pattern::Mixed;
    }
  return always ? Pattern::Always : never ? Pattern::Never : earlier ? Pattern::KeyEarlier
                                          : later ? Pattern::KeyLater : Pattern::Mixed;
}

std::optional<TiebreakPlan> plan_for(const Program& p, const Inference& inference, const CompileOptions& options,
                                     NodeId id) {
  const Node& select = p.node(id);
  if (select.kind != NodeKind::Select || select.inputs[0] != select.inputs[1]) return std::nullopt;
  const Comparison cmp = select.comparison;
  if (cmp != Comparison::Lt && cmp != Comparison::Le && cmp != Comparison::Gt && cmp != Comparison::Ge)
    return std::nullopt;
  const NodeId key = select.inputs[0];
  if (p.node(key).kind != NodeKind::Elementwise) return std::nullopt;
  const std::vector<NodeId> support = support_of(p, key, &inference.cut);
  if (support.size() != 2) return std::nullopt;
  TiebreakPlan plan;
  for (NodeId s : support) (p.node(s).kind == NodeKind::Indices ? plan.indices : plan.x) = s;
  if (plan.indices < 0 || plan.x < 0) return std::nullopt;
  const SopInfo& x_info = inference.info[size_t(plan.x)];
  const size_t m = x_info.values.size(), n = size_t(options.max_len);
  if (!x_info.values_known || m == 0 || n < 2 || x_info.encoding != Encoding::Categorical) return std::nullopt;
  if (m * m * n * n > kMaxComparisons) return std::nullopt;

  // key[a][i]: the key where x holds its a-th value at position i.
  const bool indices_first = support[0] == plan.indices;
  std::vector<std::vector<Value>> keys(m, std::vector<Value>(n));
  for (size_t a = 0; a < m; ++a)
    for (size_t i = 0; i < n; ++i) {
      const Value position = Value::of_int(int64_t(i));
      const std::vector<Value> at = indices_first ? std::vector<Value>{position, x_info.values[a]}
                                                  : std::vector<Value>{x_info.values[a], position};
      if (!evaluate_fused(p, key, support, at, keys[a][i])) return std::nullopt;
    }

  std::vector<std::vector<Pattern>> pattern(m, std::vector<Pattern>(m));
  try {
    for (size_t a = 0; a < m; ++a)
      for (size_t b = 0; b < m; ++b) pattern[a][b] = pattern_of(keys[a], keys[b], cmp, select.span);
    // A position against itself: k cmp k, the same for every value (the index comparison's own).
    const bool itself = compare_select(cmp, keys[0][0], keys[0][0], select.span);
    for (size_t a = 0; a < m; ++a)
      for (size_t i = 0; i < n; ++i)
        if (compare_select(cmp, keys[a][i], keys[a][i], select.span) != itself) return std::nullopt;
    // Within a class: one direction for every pair, x's values each in a class of their own or with others.
    const Pattern tie = pattern[0][0];
    if (tie != Pattern::KeyEarlier && tie != Pattern::KeyLater) return std::nullopt;
    plan.index_cmp = tie == Pattern::KeyEarlier ? (itself ? Comparison::Le : Comparison::Lt)
                                                : (itself ? Comparison::Ge : Comparison::Gt);
    std::vector<size_t> cls(m);
    std::vector<size_t> representative;
    for (size_t a = 0; a < m; ++a) {
      size_t c = 0;
      while (c < representative.size() && pattern[representative[c]][a] != tie) ++c;
      if (c == representative.size()) representative.push_back(a);
      cls[a] = c;
    }
    const size_t classes = plan.classes = representative.size();
    // Between classes: the key's side below the query's always or never, and a strict total order.
    std::vector<size_t> below_count(classes, 0);
    for (size_t a = 0; a < m; ++a)
      for (size_t b = 0; b < m; ++b) {
        const Pattern pt = pattern[a][b];
        if (cls[a] == cls[b] ? pt != tie : pt != Pattern::Always && pt != Pattern::Never) return std::nullopt;
        if (cls[a] != cls[b] && pt != pattern[representative[cls[a]]][representative[cls[b]]]) return std::nullopt;
      }
    for (size_t c = 0; c < classes; ++c)
      for (size_t d = 0; d < classes; ++d)
        if (c != d && pattern[representative[d]][representative[c]] == Pattern::Always) ++below_count[c];
    for (size_t c = 0; c < classes; ++c)
      for (size_t d = 0; d < classes; ++d) {
        if (c == d) continue;
        const bool key_below = pattern[representative[c]][representative[d]] == Pattern::Always;
        const bool query_below = pattern[representative[d]][representative[c]] == Pattern::Always;
        if (key_below == query_below || key_below != (below_count[c] < below_count[d])) return std::nullopt;
      }
    plan.rank.resize(m);
    for (size_t a = 0; a < m; ++a) plan.rank[a] = int64_t(below_count[cls[a]]);
    // x itself where its values are the classes and its `<`, `==` agree with their order.
    plan.x_in_order = classes == m;
    for (size_t a = 0; a < m && plan.x_in_order; ++a)
      for (size_t b = 0; b < m && plan.x_in_order; ++b)
        plan.x_in_order = compare_select(Comparison::Lt, x_info.values[a], x_info.values[b], select.span) ==
                              (plan.rank[a] < plan.rank[b]) &&
                          compare_select(Comparison::Eq, x_info.values[a], x_info.values[b], select.span) == (a == b);
  } catch (const UserError&) {
    return std::nullopt;  // a comparison the interpreter refuses (a string against a number)
  }
  return plan;
}

}  // namespace

bool tiebreak_keys(Program& program, const Inference& inference, const CompileOptions& options) {
  std::vector<std::optional<TiebreakPlan>> plans(program.nodes.size());
  bool any = false;
  {
    FusedCacheScope cache(program);
    for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
      if (!inference.info[size_t(id)].needed) continue;
      plans[size_t(id)] = plan_for(program, inference, options, id);
      any = any || plans[size_t(id)].has_value();
    }
  }
  if (!any) return false;
  program = rewrite_nodes(program, [&](NodeId id, Node& node, const std::vector<NodeId>& remap, Program& out) {
    if (!plans[size_t(id)]) return NodeId(-1);
    const TiebreakPlan& plan = *plans[size_t(id)];
    const NodeMaker maker{out, node.span};
    auto select = [&](NodeId keys, NodeId queries, Comparison cmp, const std::string& name = "") {
      const NodeId s = maker.make(NodeKind::Select, {keys, queries}, name);
      out.nodes[size_t(s)].comparison = cmp;
      return s;
    };
    const NodeId indices = remap[size_t(plan.indices)];
    // One class: the key orders the positions alone.
    if (plan.classes == 1) return select(indices, indices, plan.index_cmp, node.name);
    NodeId order = remap[size_t(plan.x)];
    if (!plan.x_in_order) {
      // x's rank in the key's order: a map of x, which the heads that read it fold into their weights.
      // Named after the key where the program names it (`tiebreak_keys_order`).
      const Node& key = program.node(program.node(id).inputs[0]);
      const std::string key_name = key.name.empty() ? key.local_name : key.name;
      order = maker.map(ElementOp::LookupTable, {order}, key_name.empty() ? "" : key_name + "_order");
      Node& rank = out.nodes[size_t(order)];
      rank.table_keys = inference.info[size_t(plan.x)].values;
      for (int64_t r : plan.rank) rank.table_values.push_back(Value::of_int(r));
    }
    const NodeId before = select(order, order, Comparison::Lt);
    const NodeId same = select(order, order, Comparison::Eq);
    const NodeId positions = select(indices, indices, plan.index_cmp);
    const NodeId tie = maker.make(NodeKind::SelectAnd, {same, positions});
    return maker.make(NodeKind::SelectOr, {before, tie}, node.name);
  });
  return true;
}

}  // namespace raspc::compiler
