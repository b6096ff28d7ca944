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
// the index comparison, one direction for all, within a class. The keys are ranked by one sort,
// so the check is O(|x|^2 n) beside the |x| n evaluations. Both modes: it holds key by key.
#include <algorithm>
#include <climits>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

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

// Each key's rank in the order the comparisons see, equal keys one rank, from one sort of them all
// (the interpreter's `<`, which raises where values do not compare: a string against a number).
std::vector<std::vector<int64_t>> ranks_of(const std::vector<std::vector<Value>>& keys, const Span& where) {
  std::vector<std::pair<size_t, size_t>> order;
  for (size_t a = 0; a < keys.size(); ++a)
    for (size_t i = 0; i < keys[a].size(); ++i) order.emplace_back(a, i);
  auto less = [&](const std::pair<size_t, size_t>& p, const std::pair<size_t, size_t>& q) {
    return compare_select(Comparison::Lt, keys[p.first][p.second], keys[q.first][q.second], where);
  };
  std::sort(order.begin(), order.end(), less);
  std::vector<std::vector<int64_t>> rank(keys.size(), std::vector<int64_t>(keys[0].size()));
  int64_t r = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && less(order[k - 1], order[k])) ++r;
    rank[order[k].first][order[k].second] = r;
  }
  return rank;
}

// How `rank_a[i] < rank_b[j]` (`<=` unless strict) goes over every i != j. The comparison falls as
// rank_a rises and rises with rank_b, so "for every i in a set" is "at the set's extreme": each
// pattern is a pass over prefix and suffix extremes, O(n) where the pairs are n^2.
Pattern pattern_of(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool strict) {
  auto holds = [strict](int64_t x, int64_t y) { return strict ? x < y : x <= y; };
  const size_t n = a.size();
  constexpr int64_t kBig = INT64_MAX, kSmall = INT64_MIN;
  // b's extremes over every j but i: its two smallest and two largest.
  size_t lo = 0, hi = 0;
  for (size_t j = 1; j < n; ++j) {
    if (b[j] < b[lo]) lo = j;
    if (b[j] > b[hi]) hi = j;
  }
  int64_t lo2 = kBig, hi2 = kSmall;
  for (size_t j = 0; j < n; ++j) {
    if (j != lo) lo2 = std::min(lo2, b[j]);
    if (j != hi) hi2 = std::max(hi2, b[j]);
  }
  // a's extremes over i < j and over i > j.
  std::vector<int64_t> max_before(n, kSmall), min_before(n, kBig), max_after(n, kSmall), min_after(n, kBig);
  for (size_t j = 1; j < n; ++j) {
    max_before[j] = std::max(max_before[j - 1], a[j - 1]);
    min_before[j] = std::min(min_before[j - 1], a[j - 1]);
  }
  for (size_t j = n - 1; j-- > 0;) {
    max_after[j] = std::max(max_after[j + 1], a[j + 1]);
    min_after[j] = std::min(min_after[j + 1], a[j + 1]);
  }
  bool always = true, never = true, earlier = true, later = true;
  for (size_t i = 0; i < n; ++i) {
    always = always && holds(a[i], i == lo ? lo2 : b[lo]);
    never = never && !holds(a[i], i == hi ? hi2 : b[hi]);
  }
  for (size_t j = 0; j < n; ++j) {
    if (j > 0) earlier = earlier && holds(max_before[j], b[j]) , later = later && !holds(min_before[j], b[j]);
    if (j + 1 < n) earlier = earlier && !holds(min_after[j], b[j]), later = later && holds(max_after[j], b[j]);
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
  if (options.max_len < 2) return std::nullopt;
  const std::optional<PositionKeys> evaluated =
      keys_by_position(p, select.inputs[0], &inference.cut, options.max_len, [&](NodeId x) {
        const SopInfo& info = inference.info[size_t(x)];
        return info.values_known && info.encoding == Encoding::Categorical ? &info.values : nullptr;
      });
  if (!evaluated) return std::nullopt;
  TiebreakPlan plan;
  plan.x = evaluated->x;
  plan.indices = evaluated->indices;
  const SopInfo& x_info = inference.info[size_t(plan.x)];
  const size_t m = x_info.values.size();
  const std::vector<std::vector<Value>>& keys = evaluated->at;

  std::vector<std::vector<Pattern>> pattern(m, std::vector<Pattern>(m));
  try {
    // `>` and `>=` are `<` and `<=` of the ranks negated.
    std::vector<std::vector<int64_t>> rank = ranks_of(keys, select.span);
    const bool descending = cmp == Comparison::Gt || cmp == Comparison::Ge;
    const bool strict = cmp == Comparison::Lt || cmp == Comparison::Gt;
    if (descending)
      for (auto& row : rank)
        for (int64_t& r : row) r = -r;
    for (size_t a = 0; a < m; ++a)
      for (size_t b = 0; b < m; ++b) pattern[a][b] = pattern_of(rank[a], rank[b], strict);
    // A position against itself: k cmp k, which `<=` and `>=` select (the index comparison's own).
    const bool itself = !strict;
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

std::optional<PositionKeys> keys_by_position(const Program& p, NodeId key, const std::vector<uint8_t>* cut, int n,
                                             const std::function<const std::vector<Value>*(NodeId)>& values_of) {
  if (p.node(key).kind != NodeKind::Elementwise) return std::nullopt;
  const std::vector<NodeId> support = support_of(p, key, cut);
  if (support.size() != 2) return std::nullopt;
  PositionKeys keys;
  for (NodeId s : support) (p.node(s).kind == NodeKind::Indices ? keys.indices : keys.x) = s;
  if (keys.indices < 0 || keys.x < 0) return std::nullopt;
  const std::vector<Value>* xs = values_of(keys.x);
  if (xs == nullptr || xs->empty()) return std::nullopt;
  const bool indices_first = support[0] == keys.indices;
  keys.at.assign(xs->size(), std::vector<Value>(size_t(n)));
  for (size_t a = 0; a < xs->size(); ++a)
    for (int i = 0; i < n; ++i) {
      const Value position = Value::of_int(int64_t(i));
      const std::vector<Value> at = indices_first ? std::vector<Value>{position, (*xs)[a]}
                                                  : std::vector<Value>{(*xs)[a], position};
      if (!evaluate_fused(p, key, support, at, keys.at[a][size_t(i)])) return std::nullopt;
    }
  return keys;
}

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
