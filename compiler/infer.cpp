// The infer pass: the exact value set of every s-op (from the vocabulary and the maximum length)
// and its encoding.
//
// Encodings follow docs/language.md: an s-op whose values are averaged over possibly several positions
// is numerical; a map of a numerical s-op with numeric values stays numerical; everything else is
// categorical, unless `categorical()` / `numerical()` says otherwise. An aggregate copies (is
// categorical) when its selector provably selects at most one key, or when its values are not
// numbers (a mean of those is undefined anyway).
//
// Over 500 lines: one class, Inferrer, walks the program once, and each node's rule reads what the
// rules before it left (value sets by position, cuts, number roles); split by node kind, every part
// would carry that state through an interface of its own. The joint combinations every pass
// enumerates are combinations.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "compiler/ir.hpp"

namespace raspc::compiler {

std::vector<Value> ordered_values(const std::vector<Value>& values, const Span& where) {
  std::vector<Value> sorted = values;
  try {
    for (const Value& a : values)
      for (const Value& b : values) {
        const bool lt = compare_select(Comparison::Lt, a, b, where), gt = compare_select(Comparison::Lt, b, a, where);
        const bool eq = compare_select(Comparison::Eq, a, b, where);
        if (int(lt) + int(gt) + int(eq) != 1 || compare_select(Comparison::Le, a, b, where) != (lt || eq)) return {};
      }
    std::sort(sorted.begin(), sorted.end(),
              [&](const Value& a, const Value& b) { return compare_select(Comparison::Lt, a, b, where); });
  } catch (const UserError&) {
    return {};
  }
  return sorted;
}

namespace {

// The most values of a sort's key checked to be ordered (ordered_values compares every pair), and
// of a tie-broken key's (x value, position) pairs evaluated to see that it differs between positions.
constexpr size_t kMaxOrderedValues = 512;
constexpr size_t kMaxPositionKeys = size_t(1) << 16;

bool numeric_value(const Value& v, Rational& out) {
  if (v.is_number()) return out = v.number, true;
  if (v.is_bool()) return out = Rational::integer(v.boolean ? 1 : 0), true;
  return false;
}

// Exact sums for the value sets of means; false where the sum is too large to hold.
bool add_rational(const Rational& a, const Rational& b, Rational& out) {
  try {
    out = a + b;
  } catch (const RationalTooLarge&) {
    return false;
  }
  return true;
}

Rational divide_by(const Rational& a, int64_t k) { return a / Rational::integer(k); }

std::vector<Value> sorted_unique(std::vector<Value> values) {
  std::sort(values.begin(), values.end(), ValueLess{});
  values.erase(std::unique(values.begin(), values.end(),
                           [](const Value& a, const Value& b) { return !value_less(a, b) && !value_less(b, a); }),
               values.end());
  return values;
}

void set_bounds(SopInfo& info) {
  bool first = true;
  for (const Value& v : info.values) {
    Rational q;
    if (!numeric_value(v, q)) continue;
    double d = q.to_double();
    if (first) info.lo = info.hi = d, first = false;
    info.lo = std::min(info.lo, d), info.hi = std::max(info.hi, d);
  }
}

bool all_numeric(const std::vector<Value>& values) {
  Rational q;
  for (const Value& v : values)
    if (!numeric_value(v, q)) return false;
  return true;
}

bool all_numbers(const std::vector<Value>& values) {
  for (const Value& v : values)
    if (!v.is_number()) return false;
  return true;
}

std::string describe_count(size_t n) { return std::to_string(n) + " values"; }

class Inferrer {
 public:
  Inferrer(const Program& program, const CompileOptions& options, std::vector<uint8_t> cut,
           const PositionNumbers& numbers, bool past_model_limit)
      : program_(program), options_(options), past_model_limit_(past_model_limit) {
    result_.info.resize(program.nodes.size());
    result_.cut = std::move(cut);
    result_.numbers = numbers;
    depth_.assign(program.nodes.size(), -1);
  }

  Inference run() {
    mark_needed();
    collect_disjoint_widths();
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id)
      if (result_.info[id].needed) infer_node(id);
    return std::move(result_);
  }

 private:
  const Program& program_;
  const CompileOptions& options_;
  const bool past_model_limit_;
  Inference result_;
  std::vector<int> depth_;

  // Attention layers on the longest path to a node: which of two inputs is ready later.
  int depth(NodeId id) {
    int& d = depth_[size_t(id)];
    if (d >= 0) return d;
    const Node& node = program_.node(id);
    int m = 0;
    for (NodeId in : node.inputs) m = std::max(m, depth(in));
    d = (node.kind == NodeKind::Aggregate || counts_keys(node)) ? m + 1 : m;
    return d;
  }

  int numerical_sources(const std::vector<NodeId>& support) {
    int n = 0;
    for (NodeId s : support) n += info(s).encoding == Encoding::Numerical;
    return n;
  }

  // A map of two numerical s-ops through different inputs: each input but the latest becomes a
  // node of its own (a lookup over one numerical s-op), so this map reads one numerical value.
  std::vector<NodeId> cut_inputs(NodeId id, std::vector<NodeId> support) {
    const Node& node = program_.node(id);
    if (numerical_sources(support) <= 1 || node.annotation == Encoding::Numerical) return support;
    NodeId latest = -1;
    for (NodeId in : node.inputs)
      if (numerical_sources(support_of(program_, in, &result_.cut)) > 0 && (latest < 0 || depth(in) > depth(latest)))
        latest = in;
    for (NodeId in : node.inputs)
      if (in != latest && program_.node(in).kind == NodeKind::Elementwise &&
          numerical_sources(support_of(program_, in, &result_.cut)) > 0)
        result_.cut[size_t(in)] = 1;
    return support_of(program_, id, &result_.cut);
  }

  SopInfo& info(NodeId id) { return result_.info[size_t(id)]; }

  void collect_disjoint_widths() {
    std::map<int, size_t> group_of;
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      const Node& node = program_.node(id);
      if (!info(id).needed || !is_construction(node, WidthHeadKind::WidthPart)) continue;
      const int whole = static_cast<const WidthPart&>(*node.construction).part_of;
      auto [it, fresh] = group_of.emplace(whole, result_.disjoint_widths.size());
      if (fresh) {
        DisjointWidths group;
        for (int p = 0; p < options_.max_len; ++p)
          group.keys_at.push_back(options_.mode == Mode::Causal ? p + 1 : options_.max_len);
        result_.disjoint_widths.push_back(std::move(group));
      }
      result_.disjoint_widths[it->second].members.push_back(id);
    }
  }

  // The value a side of a comparison holds at position p, when it is a constant or a map of
  // indices (false otherwise: then what it holds depends on the input, not only on p).
  bool positional_value(NodeId side, int p, Value& out) {
    const Node& node = program_.node(side);
    if (node.kind == NodeKind::Constant) return out = node.constant, true;
    std::vector<NodeId> support = support_of(program_, side, &result_.cut);
    if (support.size() != 1 || program_.node(support[0]).kind != NodeKind::Indices) return false;
    return evaluate_fused(program_, side, support, {Value::of_int(p)}, out);
  }

  // Whether query position q selects key position k (by [k][q]), for a selector whose comparisons
  // read only indices, maps of them and constants; empty for any other selector.
  std::vector<std::vector<uint8_t>> positional_selection(NodeId selector) {
    const int n = options_.max_len;
    std::vector<std::vector<uint8_t>> holds(size_t(n), std::vector<uint8_t>(size_t(n), 0));
    bool positional = true;
    auto evaluate = [&](auto&& self, NodeId sel, int k, int q) -> bool {
      const Node& node = program_.node(sel);
      switch (node.kind) {
        case NodeKind::Select: {
          Value key, query;
          if (!positional_value(node.inputs[0], k, key) || !positional_value(node.inputs[1], q, query))
            return positional = false;
          try {
            return compare_select(node.comparison, key, query, node.span);
          } catch (const UserError&) {
            return positional = false;
          }
        }
        case NodeKind::SelectAnd: return self(self, node.inputs[0], k, q) && self(self, node.inputs[1], k, q);
        case NodeKind::SelectOr: return self(self, node.inputs[0], k, q) || self(self, node.inputs[1], k, q);
        case NodeKind::SelectNot: return !self(self, node.inputs[0], k, q);
        default: return positional = false;
      }
    };
    for (int k = 0; k < n && positional; ++k)
      for (int q = 0; q < n && positional; ++q) holds[size_t(k)][size_t(q)] = evaluate(evaluate, selector, k, q);
    if (!positional) return {};
    return holds;
  }

  // The numbers of keys a query at each position can select: exact for a positional selector (over
  // every length that has the position), 0..q+1 for any selector in causal mode. Empty when every
  // position allows 0..max_len.
  std::vector<std::vector<int>> widths_by_position(NodeId selector) {
    const int n = options_.max_len;
    const bool causal = options_.mode == Mode::Causal;
    std::vector<std::vector<uint8_t>> holds = positional_selection(selector);
    if (holds.empty() && !causal) return {};
    auto widths = std::vector<std::vector<int>>(size_t(n));
    // A causal query sees its own key: at least 1 where the selector always selects it.
    const int fewest = holds.empty() && selects_own_key(selector) ? 1 : 0;
    for (int q = 0; q < n; ++q) {
      if (holds.empty()) {
        for (int w = fewest; w <= q + 1; ++w) widths[size_t(q)].push_back(w);
        continue;
      }
      // A key must exist (k < length) and, in causal mode, be visible (k <= q).
      std::set<int> seen;
      int count = 0;
      for (int length = 1; length <= n; ++length) {
        int k = length - 1;
        if (holds[size_t(k)][size_t(q)] && (!causal || k <= q)) ++count;
        if (length > q) seen.insert(count);
      }
      widths[size_t(q)].assign(seen.begin(), seen.end());
    }
    return widths;
  }

  void mark_needed() {
    if (program_.output < 0) fail_file("raspc compile", "the program has no output s-op; end it with an expression");
    std::vector<NodeId> stack{program_.output};
    while (!stack.empty()) {
      NodeId id = stack.back();
      stack.pop_back();
      if (info(id).needed) continue;
      info(id).needed = true;
      for (NodeId in : program_.node(id).inputs) stack.push_back(in);
    }
  }

  void refuse_large(const Node& node, size_t count, const char* what) {
    fail_at(node.span, std::string("this ") + what + " can take " + describe_count(count) + ", more than the " +
                           std::to_string(kValueSetLimit) +
                           " a compiled model can hold one dimension or threshold each; use a smaller "
                           "vocabulary or --max-len");
  }

  void infer_node(NodeId id) {
    const Node& node = program_.node(id);
    SopInfo& out = info(id);
    const int n = options_.max_len;
    switch (node.kind) {
      case NodeKind::Tokens:
        out.values = sorted_unique(options_.vocab);
        out.encoding = Encoding::Categorical;
        out.why = "tokens: one dimension per vocabulary symbol";
        break;
      case NodeKind::Indices:
        for (int i = 0; i < n; ++i) out.values.push_back(Value::of_int(i));
        for (int i = 0; i < n; ++i) out.by_position.push_back({Value::of_int(i)});
        out.encoding = Encoding::Categorical;
        out.why = "indices: one dimension per position";
        if (!result_.numbers.indices_group && !result_.numbers.indices_onehot)
          out.why = "indices: read only by prefix means, so two digits (" +
                    std::to_string(result_.numbers.digit_base + result_.numbers.digit_count) +
                    " dimensions) in the position embedding instead of one dimension per position";
        else if (!result_.numbers.indices_onehot && result_.numbers.digit_base > 0)
          out.why = "indices: read only by numerical selectors and prefix means, so a number group of 6 "
                    "dimensions and two digits in the position embedding instead of one dimension per position";
        else if (result_.numbers.indices_group)
          out.why = result_.numbers.indices_onehot
                        ? "indices: one dimension per position, and a number group (6 dimensions) for numerical "
                          "selectors"
                        : "indices: read only by numerical selectors, so a number group of 6 dimensions in the "
                          "position embedding instead of one dimension per position";
        break;
      case NodeKind::Constant:
        out.values = {node.constant};
        out.encoding = Encoding::Categorical;
        out.why = "a constant: folded into whatever reads it";
        break;
      case NodeKind::Elementwise: infer_elementwise(id); break;
      case NodeKind::Aggregate: infer_aggregate(id); break;
      case NodeKind::SelectorWidth: infer_width(id); break;
      case NodeKind::Construction:
        if (const MlpConstruction* c = mlp_construction_of(node)) {
          c->infer(out);
          set_bounds(out);
          break;
        }
        switch (width_head_of(node)->kind) {
          case WidthHeadKind::WidthStep:
            out.values = {Value::of_bool(false), Value::of_bool(true)};
            out.encoding = Encoding::Categorical;
            out.why = std::string(static_cast<const WidthStep&>(*node.construction).index_at_least
                                      ? "indices >= selector_width"
                                      : "indices < selector_width") +
                      ", one head and one step at any length: BOS, scoring ln(i + 1/2) above the keys, holds less "
                      "than half the attention exactly where the width exceeds the index";
            break;
          case WidthHeadKind::WidthPart: infer_width(id); break;
        }
        break;
      case NodeKind::Select: infer_select(id); break;
      case NodeKind::SelectAnd:
        out.at_most_one = info(node.inputs[0]).at_most_one || info(node.inputs[1]).at_most_one;
        break;
      case NodeKind::SelectOr:
      case NodeKind::SelectNot: break;
    }
    if (node.kind == NodeKind::Constant || node.is_selector()) return;
    if (node.annotation == Encoding::Numerical && node.kind != NodeKind::Elementwise &&
        node.kind != NodeKind::Aggregate) {
      if (!all_numeric(out.values))
        fail_at(node.span, "numerical() needs numbers, but this s-op can hold non-numeric values");
      out.encoding = Encoding::Numerical;
      out.why = "numerical(): one dimension holding the number";
    }
    if (out.encoding == Encoding::Categorical && out.values.size() > kValueSetLimit && !past_model_limit_)
      refuse_large(node, out.values.size(), "categorical s-op");
    set_bounds(out);
  }

  // Whether a selector selects every query's own key whatever the input: `select(x, x, ==)` (a value
  // equals itself), an `and` of two such, an `or` with one. Its width is then at least 1.
  bool selects_own_key(NodeId selector) const {
    const Node& node = program_.node(selector);
    switch (node.kind) {
      case NodeKind::Select:
        return node.inputs[0] == node.inputs[1] && node.comparison == Comparison::Eq;
      case NodeKind::SelectAnd:
        return selects_own_key(node.inputs[0]) && selects_own_key(node.inputs[1]);
      case NodeKind::SelectOr:
        return selects_own_key(node.inputs[0]) || selects_own_key(node.inputs[1]);
      default:
        return false;
    }
  }

  // Whether a selector selects exactly one key at every position of every input: a sort's
  // `select(target, indices, ==)` whose target ranks the positions (orders_positions), in
  // bidirectional mode, where every query sees every key: the targets of an input of length L are
  // 0..L-1, each once, so its aggregate copies one value and never gives its default (a sort of a
  // sort's output then has the first sort's values as its keys: Tracr's sort_twice).
  bool selects_one_per_position(NodeId selector) {
    const Node& node = program_.node(selector);
    return options_.mode == Mode::Bidirectional && node.kind == NodeKind::Select &&
           node.comparison == Comparison::Eq && program_.node(node.inputs[1]).kind == NodeKind::Indices &&
           orders_positions(node.inputs[0]);
  }

  // Whether a width counts, at each position, the positions before it in a strict total order of
  // positions: the width of `select(r, r, <) or (select(r, r, ==) and select(indices, indices, <))`
  // (the library's stable sort; tiebreak_keys writes Tracr's tie-broken keys so), either direction
  // of each comparison, where `<` and `==` order r's values strictly and totally, of
  // `select(indices, indices, <)` alone, or of Tracr's `select(k, k, <)` over a key that differs
  // between any two positions (position_unique_key); also that width split into its two parts and
  // summed (split_widths).
  bool orders_positions(NodeId width) {
    const Node& node = program_.node(width);
    std::vector<NodeId> parts;
    if (node.kind == NodeKind::SelectorWidth) {
      flatten_selector(program_, node.inputs[0], NodeKind::SelectOr, parts);
    } else if (node.kind == NodeKind::Elementwise && node.op == ElementOp::Add) {
      for (NodeId in : node.inputs) {
        const Node& part = program_.node(in);
        if (!is_construction(part, WidthHeadKind::WidthPart)) return false;
        parts.push_back(part.inputs[0]);
      }
    } else {
      return false;
    }
    auto strict = [&](NodeId sel, bool positions) {
      const Node& s = program_.node(sel);
      return s.kind == NodeKind::Select && s.inputs[0] == s.inputs[1] &&
             (s.comparison == Comparison::Lt || s.comparison == Comparison::Gt) &&
             (program_.node(s.inputs[0]).kind == NodeKind::Indices) == positions;
    };
    if (parts.size() == 1)
      return strict(parts[0], true) || (strict(parts[0], false) && position_unique_key(program_.node(parts[0]).inputs[0]));
    if (parts.size() != 2) return false;
    for (int first = 0; first < 2; ++first) {
      const Node& before = program_.node(parts[size_t(first)]);
      std::vector<NodeId> tie;
      flatten_selector(program_, parts[size_t(1 - first)], NodeKind::SelectAnd, tie);
      if (!strict(parts[size_t(first)], false) || tie.size() != 2) continue;
      const NodeId r = before.inputs[0];
      for (int same = 0; same < 2; ++same) {
        const Node& eq = program_.node(tie[size_t(same)]);
        if (eq.kind == NodeKind::Select && eq.comparison == Comparison::Eq && eq.inputs[0] == r &&
            eq.inputs[1] == r && strict(tie[size_t(1 - same)], true) && info(r).values_known &&
            info(r).values.size() <= kMaxOrderedValues && !ordered_values(info(r).values, before.span).empty())
          return true;
      }
    }
    return false;
  }

  // Whether a key made of a categorical x and the position (Tracr's tie-broken `x + i * eps`) is a
  // number that differs between any two positions, whatever x holds at each: evaluated at every (x
  // value, position) pair, as tiebreak_keys does, and sorted. Its `<` then orders the positions.
  bool position_unique_key(NodeId key) {
    const size_t n = size_t(options_.max_len);
    const std::optional<PositionKeys> evaluated =
        keys_by_position(program_, key, &result_.cut, options_.max_len, [&](NodeId x) {
          const SopInfo& xi = info(x);
          return xi.values_known && xi.values.size() * n <= kMaxPositionKeys ? &xi.values : nullptr;
        });
    if (!evaluated) return false;
    std::vector<std::pair<Rational, size_t>> keys;  // (key, position)
    for (const std::vector<Value>& row : evaluated->at)
      for (size_t i = 0; i < n; ++i) {
        if (!row[i].is_number()) return false;
        keys.emplace_back(row[i].number, i);
      }
    std::sort(keys.begin(), keys.end(), [](const auto& p, const auto& q) {
      const int c = compare(p.first, q.first);
      return c != 0 ? c < 0 : p.second < q.second;
    });
    for (size_t j = 1; j < keys.size(); ++j)
      if (compare(keys[j - 1].first, keys[j].first) == 0 && keys[j - 1].second != keys[j].second) return false;
    return true;
  }

  // A count of selected keys (a selector_width, a width part): 0..n (1..n where the selector selects
  // the query's own key), by position where the selector depends on positions only.
  void infer_width(NodeId id) {
    const Node& node = program_.node(id);
    SopInfo& out = info(id);
    const int n = options_.max_len;
    std::vector<std::vector<int>> widths = widths_by_position(node.inputs[0]);
    std::vector<uint8_t> possible(size_t(n) + 1, widths.empty());
    // Listed by position above (a positional selector's exactly, a causal one's from the keys a query
    // sees, its own counted), or else 0..n, where one that selects every query's own key never has
    // width 0 (hist's count is 1..n: a value, a dimension and an output token fewer). BOS, whose
    // width head sees only itself, reads as width 0 all the same: the lowering simulates BOS's
    // residual through every block and corrects each later head's reads of it (lower_head.cpp), so
    // what an MLP writes at BOS for a value outside its table is never an error.
    if (widths.empty() && selects_own_key(node.inputs[0])) possible[0] = 0;
    for (const std::vector<int>& at : widths) {
      out.by_position.emplace_back();
      for (int w : at) out.by_position.back().push_back(Value::of_int(w)), possible[size_t(w)] = 1;
    }
    for (int i = 0; i <= n; ++i)
      if (possible[size_t(i)]) out.values.push_back(Value::of_int(i));
    out.encoding = Encoding::Categorical;
    const std::string range = (possible[0] ? "0.." : "1..") + std::to_string(n);
    out.why = "selector_width: categorical " + range + ", read from BOS's attention weight 1/(w+1)";
    if (is_construction(node, WidthHeadKind::WidthPart))
      out.why = "selector_width: categorical " + range +
                ", a part of a split width, read from its keys' attention weight w/(w+Z), BOS weighing as Z = " +
                std::to_string(int64_t(width_bos_weight(node, n))) + " of them";
    if (result_.numbers.of(id) == NumberRole::WidthNumber)
      out.why = "selector_width: " + range + ", " + result_.numbers.why[size_t(id)];
    else if (result_.numbers.of(id) != NumberRole::None)
      out.why = "length: " + result_.numbers.why[size_t(id)];
  }

  void infer_select(NodeId id) {
    const Node& node = program_.node(id);
    if (result_.numbers.of(id) == NumberRole::Select) {
      // Keys that are an injective map of indices match once; widths may repeat; an order selects a range.
      const NumericSelect& plan = result_.numbers.selects.at(id);
      info(id).at_most_one = plan.comparison == Comparison::Eq && plan.key_width < 0;
      return;
    }
    for (NodeId side : node.inputs) {
      // The caret on the select that is refused, a note at the numerical s-op it was given.
      if (info(side).encoding == Encoding::Numerical)
        throw UserError(format_error(node.span.valid() ? node.span : program_.node(side).span,
                                     "a selector cannot compare a numerical s-op (attention compares one-hot values); "
                                     "make it categorical with categorical(...) or compare a categorical s-op") +
                        (node.span.valid() ? format_note(program_.node(side).span, "this s-op is numerical: " + info(side).why)
                                           : ""));
    }
    info(id).at_most_one = node.comparison == Comparison::Eq && unique_per_position(node.inputs[0]);
  }

  // Whether no two positions of an input hold the same value: indices, and maps of indices (and
  // of position-invariant s-ops) that are injective in the index for every value of the rest.
  bool unique_per_position(NodeId id) {
    const Node& node = program_.node(id);
    if (node.kind == NodeKind::Indices) return true;
    if (node.kind != NodeKind::Elementwise) return false;
    std::vector<NodeId> support = support_of(program_, id, &result_.cut), rest;
    size_t index_slot = support.size();
    for (size_t i = 0; i < support.size(); ++i) {
      if (program_.node(support[i]).kind == NodeKind::Indices) index_slot = i;
      else if (position_invariant(program_, support[i], options_.mode, &result_.cut) && info(support[i]).values_known)
        rest.push_back(support[i]);
      else return false;
    }
    if (index_slot == support.size()) return false;
    // Every combination of the rest that an input can have occurs at position 0 too, so the
    // combinations that occur at some position are all there are.
    std::vector<JointCombination> combinations;
    if (!joint_combinations(result_, rest, options_.max_len, kCombinationLimit, combinations)) return false;
    std::vector<Value> assignment(support.size());
    for (const JointCombination& c : combinations) {
      for (size_t i = 0, r = 0; i < support.size(); ++i)
        if (i != index_slot) assignment[i] = info(support[i]).values[c.digits[r++]];
      std::vector<Value> seen;
      for (int p = 0; p < options_.max_len; ++p) {
        assignment[index_slot] = Value::of_int(p);
        Value v;
        if (!evaluate_fused(program_, id, support, assignment, v)) return false;
        seen.push_back(v);
      }
      if (sorted_unique(seen).size() != seen.size()) return false;
    }
    return true;
  }

  bool enumerate_support(const std::vector<NodeId>& support, std::vector<JointCombination>& combinations) {
    for (NodeId s : support)
      if (!info(s).values_known) return false;
    return joint_combinations(result_, support, options_.max_len, combination_limit(support), combinations);
  }

  // How many combinations of `support` a lookup may list. With one numerical input the lookup is
  // a table over the categorical ones, each stepping through the numerical one's values where the
  // map changes (lower_mlp.cpp): the categorical combinations are held to kCombinationLimit
  // there, and listing the numerical values costs no units. A table over categorical inputs alone
  // costs a unit a combination, so it stays within kCombinationLimit.
  size_t combination_limit(const std::vector<NodeId>& support) {
    size_t numerical = 0;
    for (NodeId s : support) numerical += info(s).encoding == Encoding::Numerical;
    return numerical == 1 ? kSingleInputLimit : kCombinationLimit;
  }

  // A fused lookup over at most this many input combinations is not worth splitting.
  static constexpr size_t kSmallTable = 256;

  // Whether every s-op reading `n` is a layer deeper, so that computing `n` in its own block's
  // MLP delays none of them. (A map of tokens and indices alone is read by first-block heads,
  // which fold it into their weights; it is never worth an MLP.)
  bool read_only_later(NodeId n) {
    for (NodeId id = n + 1; id < NodeId(program_.nodes.size()); ++id) {
      const Node& node = program_.node(id);
      if (!info(id).needed || node.is_selector()) continue;
      if (std::find(node.inputs.begin(), node.inputs.end(), n) != node.inputs.end() && depth(id) <= depth(n))
        return false;
    }
    return true;
  }

  // A fused map with too many input combinations: the categorical maps inside it that are ready
  // an attention layer earlier become lookups of their own (an earlier block's MLP computes them,
  // so no block is added) and are read as one-hots. With `same_layer`, also the maps ready only
  // after the same attention layer: their lookup may take an MLP of its own, a block more, the
  // price of a table too large to list (`indices + (length - first token)` over 50 token values:
  // 104,000 combinations at max length 64 fused, 7,300 with `length - first token` cut; long_addition
  // at 128 takes two blocks more than RASP's six this way).
  // Whether anything was cut.
  bool cut_earlier_maps(NodeId id, bool same_layer = false) {
    bool any = false;
    std::vector<NodeId> stack(program_.node(id).inputs.begin(), program_.node(id).inputs.end());
    std::vector<uint8_t> seen(program_.nodes.size(), 0);
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      if (seen[size_t(n)] || result_.cut[size_t(n)]) continue;
      seen[size_t(n)] = 1;
      const Node& node = program_.node(n);
      if (node.kind != NodeKind::Elementwise) continue;
      const SopInfo& in = info(n);
      if (depth(n) >= 1 && in.encoding == Encoding::Categorical && in.values_known &&
          ((depth(n) < depth(id) && read_only_later(n)) || same_layer)) {
        result_.cut[size_t(n)] = 1;
        any = true;
        continue;
      }
      stack.insert(stack.end(), node.inputs.begin(), node.inputs.end());
    }
    return any;
  }

  // Why a categorical map's value set cannot be listed: an input without a finite value set, or
  // inputs whose combinations at this maximum length outnumber what one lookup table may hold.
  std::string unenumerable_reason(const std::vector<NodeId>& support) {
    std::string names;
    for (NodeId s : support) {
      if (!result_.info[size_t(s)].values_known)
        return "this s-op's value set cannot be enumerated: its input " + program_.describe(s) +
               " has no finite value set at --max-len " + std::to_string(options_.max_len);
      names += (names.empty() ? "" : ", ") + program_.describe(s);
    }
    return "this s-op's value set cannot be enumerated: its inputs (" + names + ") take more than " +
           std::to_string(combination_limit(support)) + " combinations at --max-len " +
           std::to_string(options_.max_len) + ", the most one MLP lookup table may list";
  }

  void infer_elementwise(NodeId id) {
    const Node& node = program_.node(id);
    SopInfo& out = info(id);
    if (result_.numbers.of(id) == NumberRole::Affine) {
      out.encoding = Encoding::Numerical;
      out.values_known = false;
      out.why = result_.numbers.why[size_t(id)];
      return;
    }
    std::vector<NodeId> support = cut_inputs(id, support_of(program_, id, &result_.cut));
    std::vector<JointCombination> combinations;
    bool enumerable = enumerate_support(support, combinations);
    if (!enumerable || combinations.size() > kSmallTable) {
      // Try reading the earlier maps as one-hots; keep that if the table is at least halved.
      std::vector<uint8_t> before = result_.cut;
      std::vector<JointCombination> fewer;
      std::vector<NodeId> cut_support;
      bool better = false;
      if (cut_earlier_maps(id)) {
        cut_support = cut_inputs(id, support_of(program_, id, &result_.cut));
        better = enumerate_support(cut_support, fewer) && (!enumerable || 2 * fewer.size() < combinations.size());
      }
      // A table too large to list is split at the maps computed after the same attention layer:
      // at most a block more, where the table was refused.
      if (!better && !enumerable) {
        result_.cut = before;
        if (cut_earlier_maps(id, true)) {
          cut_support = cut_inputs(id, support_of(program_, id, &result_.cut));
          better = enumerate_support(cut_support, fewer);
        }
      }
      if (better) {
        support = std::move(cut_support);
        combinations = std::move(fewer);
        enumerable = true;
      } else {
        result_.cut = std::move(before);
      }
    }
    bool numerical_input = false;
    int numerical_inputs = 0;
    for (NodeId s : support)
      if (info(s).encoding == Encoding::Numerical) numerical_input = true, ++numerical_inputs;
    if (enumerable) {
      // Each distinct value once, and by position which of them occur there: a table has many
      // more combinations than values (long_addition's carries: 10^5 of them, 2 values).
      std::map<Value, size_t, ValueLess> index_of;
      const bool positional = !combinations.empty() && !combinations[0].positions.empty();
      // By position, the indices (into index_of, in order of discovery) of the values there: lists,
      // not a flag per value, since a map of a prefix mean has hundreds of thousands of values and
      // each position a few hundred of them.
      std::vector<std::vector<size_t>> occurs_at(positional ? size_t(options_.max_len) : 0);
      std::vector<Value> assignment(support.size());
      for (const JointCombination& c : combinations) {
        for (size_t i = 0; i < support.size(); ++i) assignment[i] = info(support[i]).values[c.digits[i]];
        Value v;
        if (!evaluate_fused(program_, id, support, assignment, v)) continue;
        size_t index = index_of.emplace(std::move(v), index_of.size()).first->second;
        for (int p : c.positions) occurs_at[size_t(p)].push_back(index);
      }
      if (index_of.empty()) {
        const std::string why = last_fused_failure();
        fail_at(node.span, "this expression is undefined on every input (every combination of its inputs fails" +
                               (why.empty() ? std::string(")") : ", for example: " + why + ")"));
      }
      std::vector<size_t> rank(index_of.size());  // index -> place in `values`
      for (const auto& [v, index] : index_of) {  // sorted by ValueLess
        rank[index] = out.values.size();
        out.values.push_back(v);
      }
      for (std::vector<size_t>& here : occurs_at) {
        for (size_t& index : here) index = rank[index];
        std::sort(here.begin(), here.end());
        here.erase(std::unique(here.begin(), here.end()), here.end());
        std::vector<Value>& at = out.by_position.emplace_back();
        at.reserve(here.size());
        for (size_t r : here) at.push_back(out.values[r]);
      }
    } else {
      out.values_known = false;
      // Bounds from the corners of the inputs' bounds: exact for the affine maps that numerical
      // s-ops without a finite value set are limited to.
      bool first = true;
      std::vector<Value> corner(support.size());
      for (size_t mask = 0; mask < (size_t(1) << std::min<size_t>(support.size(), 12)); ++mask) {
        for (size_t i = 0; i < support.size(); ++i) {
          double b = (mask >> i) & 1 ? info(support[i]).hi : info(support[i]).lo;
          corner[i] = Value::of_number(divide_by(Rational::integer(std::llround(b * 1000000)), 1000000));
        }
        Value v;
        Rational q;
        if (!evaluate_fused(program_, id, support, corner, v) || !numeric_value(v, q)) continue;
        double d = q.to_double();
        if (first) out.lo = out.hi = d, first = false;
        out.lo = std::min(out.lo, d), out.hi = std::max(out.hi, d);
      }
    }
    if (node.annotation == Encoding::Categorical) {
      out.encoding = Encoding::Categorical;
      out.why = "categorical(): one dimension per value";
      if (!out.values_known)
        fail_at(node.span, "categorical() needs a finite value set, but this s-op's values cannot be enumerated");
    } else if (node.annotation == Encoding::Numerical) {
      if (out.values_known && !all_numeric(out.values))
        fail_at(node.span, "numerical() needs numbers, but this map can produce non-numeric values");
      out.encoding = Encoding::Numerical;
      out.why = "numerical(): one dimension holding the number";
    } else if (numerical_input && (!out.values_known || (numerical_inputs > 1 && all_numbers(out.values)) ||
                                   out.values.size() > kValueSetLimit)) {
      // One MLP discretises one numerical input; a map of several can only be an affine one.
      out.encoding = Encoding::Numerical;
      // The note a refusal reading it shows: name the limit it hit.
      out.why = numerical_inputs > 1 ? "a numeric map of several numerical s-ops: numerical, an affine MLP"
                : out.values_known
                    ? "a map of a numerical s-op with " + std::to_string(out.values.size()) +
                          " values at --max-len " + std::to_string(options_.max_len) + ", more than the " +
                          std::to_string(kValueSetLimit) + " a value set may list: numerical"
                    : "a map of a numerical s-op whose values cannot be listed: numerical";
    } else {
      out.encoding = Encoding::Categorical;
      out.why = numerical_input ? "a map of one numerical s-op with a finite value set: categorical, by discretisation"
                                : "a map of categorical s-ops: categorical, one dimension per value";
      if (!out.values_known) fail_at(node.span, unenumerable_reason(support));
    }
    if (out.values_known) set_bounds(out);
  }

  void infer_aggregate(NodeId id) {
    const Node& node = program_.node(id);
    SopInfo& out = info(id);
    const SopInfo& sel = info(node.inputs[0]);
    const SopInfo& val = info(node.inputs[1]);
    bool numeric_values = val.values_known && all_numeric(val.values);
    if (node.annotation == Encoding::Numerical) {
      out.encoding = Encoding::Numerical;
      out.why = "numerical(): the mean of the selected values";
    } else if (node.annotation == Encoding::Categorical) {
      out.encoding = Encoding::Categorical;
      out.why = "categorical(): copies the one selected value";
    } else if (program_.node(node.inputs[1]).kind == NodeKind::Constant) {
      // The mean of any number of copies of c is c: a copy, exact whatever the selector selects.
      out.encoding = Encoding::Categorical;
      out.why = "its value is a constant, the same whichever keys are selected: categorical {value, default}";
    } else if (val.encoding == Encoding::Numerical) {
      out.encoding = Encoding::Numerical;
      out.why = "averages a numerical s-op: numerical";
    } else if (sel.at_most_one) {
      out.encoding = Encoding::Categorical;
      out.why = "its selector selects at most one key: copies that value, categorical";
    } else if (numeric_values) {
      out.encoding = Encoding::Numerical;
      out.why = "its selector may select several keys and its values are numbers: the mean, numerical";
    } else {
      out.encoding = Encoding::Categorical;
      out.why = "its values are not numbers, so a defined result selects one key: copies it, categorical";
    }
    if (out.encoding == Encoding::Categorical) {
      if (!val.values_known)
        fail_at(node.span, "a categorical aggregate needs the value set of what it copies, which cannot be enumerated");
      out.values = val.values;
      if (!selects_one_per_position(node.inputs[0])) out.values.push_back(node.default_value);
      out.values = sorted_unique(std::move(out.values));
      return;
    }
    Rational dq;
    if (!numeric_value(node.default_value, dq))
      fail_at(node.span, "a numerical aggregate (a mean) needs a numeric default, not " + to_source(node.default_value));
    if (val.values_known && !numeric_values)
      fail_at(program_.node(node.inputs[1]).span.valid() ? program_.node(node.inputs[1]).span : node.span,
              "a numerical aggregate takes the mean of these values, but they include non-numbers; aggregate "
              "numbers, or make the selector select a single key");
    if (!val.values_known) {
      out.values_known = false;
      out.lo = std::min(val.lo, dq.to_double());
      out.hi = std::max(val.hi, dq.to_double());
      return;
    }
    // Means of k values for k = 1..max_len: the achievable sums of k values, divided by k.
    std::vector<Rational> base;
    for (const Value& v : val.values) {
      Rational q;
      numeric_value(v, q);
      base.push_back(q);
    }
    auto less = [](const Rational& a, const Rational& b) { return compare(a, b) < 0; };
    std::set<Rational, decltype(less)> sums(base.begin(), base.end(), less);
    std::vector<std::vector<Value>> means_of(size_t(options_.max_len) + 1);  // by the number of keys averaged
    means_of[0] = {node.default_value};
    size_t total = 1;
    bool known = true;
    for (int k = 1; k <= options_.max_len && known; ++k) {
      if (k > 1) {
        std::set<Rational, decltype(less)> next(less);
        for (const Rational& s : sums)
          for (const Rational& b : base) {
            Rational t;
            if (!add_rational(s, b, t)) { known = false; break; }
            next.insert(t);
          }
        sums = std::move(next);
      }
      if (sums.size() > 4 * kValueSetLimit) known = false;
      for (const Rational& s : sums) means_of[size_t(k)].push_back(Value::of_number(divide_by(s, k)));
      total += sums.size();
      if (total > kSingleInputLimit) known = false;
    }
    if (known) {
      std::vector<std::vector<int>> widths = widths_by_position(node.inputs[0]);
      // By position only where that stays within kPositionEntryLimit in all: a mean over
      // positions that every query sees (full_s) can hold nearly every value at every position,
      // n times the value set (330 million at 1,024), and narrows nothing.
      size_t entries = 0;
      for (const std::vector<int>& at : widths)
        for (int w : at) entries += means_of[size_t(w)].size();
      if (entries > kPositionEntryLimit) widths.clear();
      std::vector<Value> means;
      for (const std::vector<int>& at : widths) {
        std::vector<Value> here;
        for (int w : at) here.insert(here.end(), means_of[size_t(w)].begin(), means_of[size_t(w)].end());
        out.by_position.push_back(sorted_unique(std::move(here)));
        means.insert(means.end(), out.by_position.back().begin(), out.by_position.back().end());
      }
      if (widths.empty())
        for (const std::vector<Value>& m : means_of) means.insert(means.end(), m.begin(), m.end());
      out.values = sorted_unique(std::move(means));
    } else {
      out.values_known = false;
      out.values.clear();
    }
    out.lo = std::min(val.lo, dq.to_double());
    out.hi = std::max(val.hi, dq.to_double());
  }
};

}  // namespace

namespace {
bool queries_are_constant(const Program& program, NodeId selector) {
  const Node& node = program.node(selector);
  if (node.kind == NodeKind::Select) return program.node(node.inputs[1]).kind == NodeKind::Constant;
  for (NodeId in : node.inputs)
    if (!queries_are_constant(program, in)) return false;
  return true;
}
}  // namespace

bool position_invariant(const Program& program, NodeId id, Mode mode, const std::vector<uint8_t>* cut) {
  const Node& node = program.node(id);
  switch (node.kind) {
    case NodeKind::Constant: return true;
    case NodeKind::Elementwise:
      for (NodeId s : support_of(program, id, cut))
        if (s == id || !position_invariant(program, s, mode, cut)) return false;
      return true;
    case NodeKind::Construction:
      if (!holds_count(node)) return false;  // a width step compares its count with the index
      [[fallthrough]];
    case NodeKind::Aggregate:
    case NodeKind::SelectorWidth:
      return mode == Mode::Bidirectional && queries_are_constant(program, node.inputs[0]);
    default: return false;
  }
}

Inference infer(const Program& program, const CompileOptions& options, bool past_model_limit) {
  if (options.max_len < 1) fail_file("raspc compile", "--max-len must be at least 1");
  if (options.vocab.empty()) fail_file("raspc compile", "the vocabulary is empty; give --vocab");
  // Cutting a map out of a fused chain changes how the maps after it are enumerated: infer again
  // with the cuts fixed until none is added (cuts only grow).
  // A numerical selector whose keys are computed from selector widths needs them to be integers
  // within the number group's reach, and one whose query adds categorical terms needs their values
  // to keep every query that misses before the first key: where inference finds otherwise, plan
  // again without it.
  FusedCacheScope keep_map_values(program);
  std::map<NodeId, std::string> excluded;
  for (;;) {
    std::vector<uint8_t> cut(program.nodes.size(), 0);
    const PositionNumbers numbers = plan_position_numbers(program, options, excluded);
    Inference inference = Inferrer(program, options, cut, numbers, past_model_limit).run();
    while (inference.cut != cut) {
      cut = inference.cut;
      inference = Inferrer(program, options, cut, numbers, past_model_limit).run();
    }
    bool replan = false;
    for (NodeId sel = 0; sel < NodeId(program.nodes.size()); ++sel) {
      if (inference.numbers.of(sel) != NumberRole::PrefixDigits) continue;
      if (std::string why = prefix_mean_refusal(program, inference, sel); !why.empty()) {
        excluded[sel] = why;
        replan = true;
      }
    }
    for (auto& [sel, plan] : inference.numbers.selects) {
      if (!plan.terms.empty()) {
        std::string why;
        if (settle_query_terms(program, inference, options, sel, plan, why)) inference.numbers.why[size_t(sel)] = why;
        else excluded[sel] = why, replan = true;
      }
      if (plan.key_width < 0) continue;
      const SopInfo& key = inference.info[size_t(plan.key_width)];
      bool in_range = key.values_known;
      for (const Value& v : key.values)
        in_range = in_range && v.is_number() && v.number.is_integer() &&
                   std::fabs(v.number.to_double() - numbers.centre) <= kComputedKeyReach * numbers.extent;
      if (!in_range) {
        excluded[sel] = "one-hot: its keys, computed from selector widths, are not all integers within a number "
                        "group's reach";
        replan = true;
      }
    }
    if (!replan) {
      inference.from_scratch = maps_from_scratch(program, inference, options);
      return inference;
    }
  }
}

}  // namespace raspc::compiler
