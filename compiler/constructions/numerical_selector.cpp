// The numerical selector, a construction: which selectors compare integers built from positions
// and become one numerical head instead of a one-hot table (its recognition, part of the infer
// pass: plan_position_numbers, settle_query_terms), and the scores its head and `length`'s
// (numerical_selector_scores, called by lower_head.cpp). docs/long-contexts.md has the argument.
//
// Over 500 lines: the recognition proves each plan exact over every (length, position) before
// the head is built, and those proofs (affine forms, query terms, fallbacks, float32 bounds) are
// one argument; split, each part would need the others' invariants restated.
//
// A selector `select(keys, queries, ==)` is numerical when the keys are an injective affine map of
// indices, k = a*i + g, and the queries an affine map of indices and `length` (q = A*i + B*L + C,
// integer coefficients, checked on every (i, L) that occurs). The head scores
// beta*(2*q~*k~ - k~^2) = beta*(q~^2 - (q~-k~)^2) with q~, k~ centred on the keys' middle value:
// the query reads [q~, 1] and the key [2k~, -k~^2], both linear in the number groups that
// indices and length carry (k~^2 is in the group). The matching key outscores any other by at
// least beta. Where no key may match, BOS must win instead: it scores beta*(q~^2 - 1/2), which
// needs q~^2 at the query, so the query must be a map of indices alone; otherwise the compiler
// proves, over every (length, position), that some key matches, and BOS never wins, or that every
// query that matches none lies beyond the first position's key (before it where the keys rise),
// where BOS is read as the key of position -1 (its key sides hold that position's values).
//
// A shift by a computed amount: the query may add categorical s-ops (or maps of one) times
// integers, read linearly off their one-hots (NumberTerm), and a key that adds `length` or a
// position-invariant term moves it to the query: `select(indices + (length - p), indices, ==)`
// is `select(indices, indices - length + p, ==)`. The terms' values are known after inference,
// which then bounds the query (settle_query_terms) and chooses the fallback.
//
// `length` read this way needs no selector-width MLP: in bidirectional mode one head scoring
// beta*i puts all but e^-beta of its weight on the last position and copies its indices group
// (length - 1); in causal mode length is indices + 1.
//
// Keys computed from a selector width (`select(w, indices, ==)`, sort_unique's target position)
// are numerical too where float32 allows: the width's MLP writes w's number group instead of a
// one-hot, and the head is the same. The MLP's steps from 1/(w+1) are steep, so the group carries
// float32 rounding that grows like n^4; computed_key_rounding bounds it, and past the bound (max
// length 15 and up for a width) the selector stays one-hot.
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <tuple>

#include "compiler/lower_internal.hpp"

namespace raspc::compiler {

double numeric_select_beta(int max_len) { return 2.0 * (std::log(double(max_len) + 1.0) + 16.0); }

namespace {
// float32's unit roundoff, and how many of them one score may collect: the LayerNorm'd reads
// and the weights each carry one, the products and the sum of a handful of terms a few more.
constexpr double kFloat32Epsilon = 1.0 / (1 << 24);
constexpr double kScoreRoundings = 4.0;

// The float32 note for a numerical selector's --explain text, or the refusal at the selector.
std::string float32_note(const Program& program, NodeId id, const NumericSelect& plan, int max_len);

// Chooses where BOS wins from the range [lo, hi] of what the query holds at each (length, position)
// (`query_at`; causal: the length is max_len, the keys those up to the query): nowhere, when every
// query matches a key it sees; beyond the first position's key, when every query that can miss
// lies there (a = +-1: no gaps between the keys), where BOS is read as the key of position -1.
// Sets max_query (and max_key); "" or why neither holds.
std::string choose_fallback(NumericSelect& plan, int n, bool causal, double centre,
                            const std::function<std::pair<int64_t, int64_t>(int64_t, int64_t)>& query_at) {
  const int64_t a = plan.key.indices, g = plan.key.constant;
  const double key_centre = double(a) * centre + double(g);
  bool every_query_matches = true, misses_before_keys = a == 1 || a == -1;
  plan.max_query = 0;
  for (int64_t length = causal ? n : 1; length <= n; ++length)
    for (int64_t i = 0; i < length; ++i) {
      const auto [lo, hi] = query_at(length, i);
      plan.max_query = std::max({plan.max_query, std::fabs(double(lo) - key_centre), std::fabs(double(hi) - key_centre)});
      const int64_t last_key = causal ? i : length - 1;
      const int64_t kmin = std::min(g, a * last_key + g), kmax = std::max(g, a * last_key + g);
      bool matched = lo >= kmin && hi <= kmax && (lo == hi ? (lo - g) % a == 0 : a == 1 || a == -1);
      every_query_matches = every_query_matches && matched;
      misses_before_keys = misses_before_keys && (a > 0 ? hi <= kmax : lo >= kmin);
      if (!every_query_matches && !misses_before_keys)
        return "one-hot: at length " + std::to_string(length) + " position " + std::to_string(i) +
               "'s query can match no key and lie past the last key, and BOS, without the query's square, is the "
               "fallback only before the first";
    }
  plan.fallback = every_query_matches ? Fallback::None : Fallback::BeforeKeys;
  // BOS, as the key of position -1, reaches one step beyond the first key.
  if (plan.fallback == Fallback::BeforeKeys) plan.max_key = std::fabs(double(a)) * (centre + 1.0);
  return "";
}

std::string fallback_text(const NumericSelect& plan) {
  switch (plan.fallback) {
    case Fallback::Square: return "BOS wins where no key matches";
    case Fallback::BeforeKeys: return "BOS, as the key of position -1, wins where the query lies before the first key";
    case Fallback::None: break;
  }
  return "every query matches a key, checked at every length";
}

bool is_term_source(const Node& node) { return node.kind == NodeKind::Aggregate || node.kind == NodeKind::Tokens; }

// The largest coefficient, and term value, a query's linear form takes: far beyond what float32
// resolves in a score at any --max-len, and far from int64's overflow.
constexpr int64_t kLinearReach = int64_t(1) << 24;

}  // namespace

double order_match_score(const NumericSelect& plan, int max_len) {
  return numeric_select_beta(max_len) * (plan.reach + 1.0);
}

NumericMargin numeric_select_margin(const NumericSelect& plan, int max_len) {
  const double beta = numeric_select_beta(max_len);
  if (plan.comparison != Comparison::Eq) {
    // A selected key beats BOS, and BOS every other key, by beta/2; scores reach the other
    // conjuncts' matches and the order's own term.
    const double reach = (plan.conjuncts - 1) * order_match_score(plan, max_len) + beta * (plan.reach + 0.5);
    return {beta / 2, kScoreRoundings * kFloat32Epsilon * reach};
  }
  const double Q = plan.max_query, K = plan.max_key;
  // A key's score sums terms up to beta (2QK + K^2). Where BOS scores beta (q~^2 - 1/2) (Square),
  // its own score is as large as beta Q^2, which exceeds that where queries reach beyond the keys.
  // BOS as the key of position -1 is within K (max_key counts it), and a constant -10 beta is exact.
  double largest = 2 * Q * K + K * K;
  if (plan.fallback == Fallback::Square) largest = std::max(largest, Q * Q + 0.5);
  return {plan.fallback == Fallback::Square ? beta / 2 : beta, kScoreRoundings * kFloat32Epsilon * beta * largest};
}

namespace {

bool always_true(const Program& program, NodeId selector) {
  const Node& node = program.node(selector);
  if (node.kind != NodeKind::Select) return false;
  const Node& key = program.node(node.inputs[0]);
  const Node& query = program.node(node.inputs[1]);
  if (key.kind != NodeKind::Constant || query.kind != NodeKind::Constant) return false;
  try {
    return compare_select(node.comparison, key.constant, query.constant, node.span);
  } catch (const UserError&) {
    return false;
  }
}

class Planner {
 public:
  Planner(const Program& program, const CompileOptions& options, const std::map<NodeId, std::string>& excluded)
      : program_(program), options_(options), n_(options.max_len), causal_(options.mode == Mode::Causal),
        mode_(options.mode), excluded_(excluded) {
    size_t count = program.nodes.size();
    out_.role.assign(count, NumberRole::None);
    out_.why.assign(count, "");
    users_.resize(count);
    needed_.assign(count, 0);
    for (NodeId id = 0; id < NodeId(count); ++id)
      for (NodeId in : program.node(id).inputs) users_[size_t(in)].push_back(id);
    if (program.output >= 0) mark_needed(program.output);
    out_.centre = 0.5 * double(n_ - 1);
    out_.extent = std::max(0.5, out_.centre);
  }

  PositionNumbers run() {
    std::map<NodeId, NumericSelect> candidates;
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      const Node& node = program_.node(id);
      if (node.kind == NodeKind::Indices) indices_ = id;
      if (!needed_[size_t(id)] || node.kind != NodeKind::Select || node.comparison == Comparison::Ne) continue;
      NumericSelect plan;
      if (node.comparison == Comparison::Eq ? consider(id, plan) : consider_order(id, plan)) candidates[id] = plan;
    }
    // Reading `length` as a number replaces its width head only where nothing else reads it; in
    // bidirectional mode a selector whose query needs it is numerical only then.
    std::vector<uint8_t> number_only;
    for (;;) {
      number_only = number_only_nodes(candidates);
      bool dropped = false;
      for (auto it = candidates.begin(); it != candidates.end();) {
        bool lost = false;
        NodeId length = it->second.length;
        if (length >= 0 && !causal_ && !read_only_as_number(length, number_only, candidates)) lost = true;
        if (lost) {
          out_.why[size_t(it->first)] =
              "one-hot: its query reads `length`, which something else reads as a one-hot, so it has no "
              "number of its own";
          it = candidates.erase(it);
          dropped = true;
        } else {
          ++it;
        }
      }
      if (!dropped) break;
    }
    // A width read as a number has no one-hot: every reader must be such a selector, as its key.
    for (auto it = candidates.begin(); it != candidates.end();) {
      NodeId width = it->second.key_width;
      bool only_keys = width < 0 || width != program_.output;
      if (width >= 0)
        for (NodeId user : users_[size_t(width)]) {
          if (!needed_[size_t(user)]) continue;
          auto other = candidates.find(user);
          only_keys = only_keys && other != candidates.end() && other->second.key_width == width &&
                      program_.node(user).inputs[1] != width;
        }
      if (only_keys) {
        ++it;
        continue;
      }
      out_.why[size_t(it->first)] =
          "one-hot: its keys are a selector width that something else reads as a one-hot";
      it = candidates.erase(it);
    }
    for (auto& [id, plan] : candidates) {
      // A plan with terms is checked once their values are inferred (settle_query_terms).
      if (plan.terms.empty()) out_.why[size_t(id)] += float32_note(program_, id, plan, n_);
      if (plan.key_width >= 0) {
        out_.role[size_t(plan.key_width)] = NumberRole::WidthNumber;
        out_.why[size_t(plan.key_width)] =
            "read only as the key of numerical selectors: its MLP reads 1/(w+1) and writes w's number group "
            "(6 dimensions, O(n) units) instead of a one-hot";
      }
      out_.role[size_t(id)] = NumberRole::Select;
      out_.selects[id] = plan;
      out_.indices_group = true;
    }
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      if (!number_only[size_t(id)]) continue;
      out_.role[size_t(id)] = NumberRole::Affine;
      out_.why[size_t(id)] = "an affine map of indices and length (and categorical s-ops) read only by numerical "
                             "selectors: no dimension of its own, each selector's query reads it linearly from the "
                             "number groups (and one-hots)";
    }
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      if (!is_length(id) || !needed_[size_t(id)] || !read_only_as_number(id, number_only, candidates)) continue;
      bool read = false;
      for (const auto& [sel, plan] : candidates) read = read || plan.length == id;
      if (!read) continue;
      out_.role[size_t(id)] = causal_ ? NumberRole::CausalLength : NumberRole::LastIndex;
      out_.why[size_t(id)] =
          causal_ ? "read only as a number by numerical selectors: indices + 1 in causal mode, no head"
                  : "read only as a number by numerical selectors: one head copies the last position's indices "
                    "group (length - 1), beta*index scores, no MLP";
    }
    // Prefix means over the position's digits (prefix_mean.cpp), where no reason to keep the table
    // was found once inferred.
    bool digits = false;
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
      if (!needed_[size_t(id)] || candidates.count(id) || !prefix_digits_candidate(program_, id, options_)) continue;
      if (auto excluded = excluded_.find(id); excluded != excluded_.end()) {
        out_.why[size_t(id)] = excluded->second;
        continue;
      }
      out_.role[size_t(id)] = NumberRole::PrefixDigits;
      out_.why[size_t(id)] = prefix_digits_why(n_);
      digits = true;
    }
    // Where something else reads indices' one-hot, the digits add dimensions instead of replacing
    // it, and a block with one head more pads n_embd: measured, the table is smaller below max
    // length 16 and the digits from 32 on (bench/RESULTS.md, "Prefix means over digits").
    if (digits && indices_ >= 0 && n_ < kPrefixDigitsBesideOneHot &&
        !read_only_as_number(indices_, number_only, candidates)) {
      for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id) {
        if (out_.role[size_t(id)] != NumberRole::PrefixDigits) continue;
        out_.role[size_t(id)] = NumberRole::None;
        out_.why[size_t(id)] = "one-hot: indices' one-hot stays for its other readers, and below max length " +
                               std::to_string(kPrefixDigitsBesideOneHot) +
                               " a table over it is smaller than two heads over the position's digits";
      }
      digits = false;
    }
    if (digits) std::tie(out_.digit_base, out_.digit_count) = prefix_digits(n_);
    if (indices_ >= 0) {
      out_.role[size_t(indices_)] = out_.indices_group ? NumberRole::Indices : NumberRole::None;
      out_.indices_onehot =
          !(out_.indices_group || digits) || !read_only_as_number(indices_, number_only, candidates);
    }
    // A width output of many values: its number group, read by the unembedding (number_output.cpp).
    if (number_output(program_, options_) && out_.role[size_t(program_.output)] == NumberRole::None) {
      out_.role[size_t(program_.output)] = NumberRole::WidthNumber;
      out_.why[size_t(program_.output)] = number_output_why();
    }
    return std::move(out_);
  }

 private:
  const Program& program_;
  const CompileOptions& options_;
  const int n_;
  const bool causal_;
  const Mode mode_;
  const std::map<NodeId, std::string>& excluded_;  // selectors infer() found cannot be numerical, and why
  PositionNumbers out_;
  std::vector<std::vector<NodeId>> users_;
  std::vector<uint8_t> needed_;
  NodeId indices_ = -1;

  void mark_needed(NodeId id) {
    if (needed_[size_t(id)]) return;
    needed_[size_t(id)] = 1;
    for (NodeId in : program_.node(id).inputs) mark_needed(in);
  }

  bool is_length(NodeId id) const {
    const Node& node = program_.node(id);
    return holds_count(node) && always_true(program_, node.inputs[0]);
  }
  // A selector width or part, which holds a number (a width step holds a boolean).
  bool is_counting_width(NodeId id) const { return holds_count(program_.node(id)); }

  std::vector<NodeId> lengths_in(NodeId side) const {
    std::vector<NodeId> out;
    if (is_length(side)) return {side};
    if (program_.node(side).kind != NodeKind::Elementwise) return out;
    for (NodeId s : support_of(program_, side))
      if (is_length(s)) out.push_back(s);
    return out;
  }

  // The affine form of a comparison side over indices and length, checked on every (i, L) that
  // occurs; false where it is not one (another s-op, a non-integer, a non-affine map).
  bool affine_form(NodeId side, AffineForm& form) const {
    const Node& node = program_.node(side);
    if (node.kind == NodeKind::Constant) {
      int64_t c = 0;
      if (!node.constant.is_number() || !node.constant.number.to_int64(c)) return false;
      form = {0, 0, c};
      return true;
    }
    if (node.annotation != Encoding::Unspecified) return false;
    std::vector<NodeId> support;
    if (node.kind == NodeKind::Indices || is_length(side)) support = {side};
    else if (node.kind == NodeKind::Elementwise) support = support_of(program_, side);
    else return false;
    bool uses_length = false;
    for (NodeId s : support) {
      if (is_length(s)) uses_length = true;
      else if (program_.node(s).kind != NodeKind::Indices) return false;
    }
    auto at = [&](int64_t i, int64_t length, int64_t& value) {
      std::vector<Value> values;
      for (NodeId s : support) values.push_back(Value::of_int(is_length(s) ? (causal_ ? i + 1 : length) : i));
      Value v;
      if (support.size() == 1 && support[0] == side) v = values[0];
      else if (!evaluate_fused(program_, side, support, values, v)) return false;
      return v.is_number() && v.number.to_int64(value);
    };
    int64_t f01 = 0, f02 = 0, f12 = 0;
    if (!at(0, 1, f01)) return false;
    if (n_ >= 2 && (!at(0, 2, f02) || !at(1, 2, f12))) return false;
    bool two_d = uses_length && !causal_;
    form.indices = n_ >= 2 ? f12 - f02 : 0;
    form.length = two_d && n_ >= 2 ? f02 - f01 : 0;
    form.constant = f01 - form.length;
    if (causal_ && uses_length && n_ < 2) form.indices = 0;
    // Every (i, L) with i < L: the whole domain, so the form is exact, not a guess.
    for (int64_t length = two_d ? 1 : n_; length <= n_; ++length)
      for (int64_t i = 0; i < length; ++i) {
        int64_t value = 0;
        if (!at(i, length, value) || value != form.indices * i + form.length * length + form.constant) return false;
      }
    return true;
  }

  // A selector width (not `length`) as the key, or a map of one (`w + 1`): an integer the MLP that
  // reads the width's 1/(w+1) writes as a number group; infer() checks its values are integers
  // within a group's reach. A map of two widths (a stable sort's target w1 + w2, width_part.cpp) is
  // not one: its MLP steps along a line through both 1/(w+1) (project_reads.cpp), whose gaps are
  // far smaller than one width's, and float32 loses the square already at max length 12 (measured).
  bool is_counted_key(NodeId side) const {
    const Node& node = program_.node(side);
    if (counts_keys(node)) return is_counting_width(side) && !is_length(side);
    if (node.kind != NodeKind::Elementwise || node.annotation != Encoding::Unspecified) return false;
    std::vector<NodeId> support = support_of(program_, side);
    return support.size() == 1 && is_counting_width(support[0]) && !is_length(support[0]);
  }

  bool reads_several_widths(NodeId side) const {
    const Node& node = program_.node(side);
    if (node.kind != NodeKind::Elementwise) return false;
    size_t widths = 0;
    for (NodeId s : support_of(program_, side)) widths += is_counting_width(s);
    return widths > 1;
  }

  // What a computed key holds where its width is w (w itself for the width), for w = 0..n; NaN
  // where the map is undefined.
  std::vector<double> computed_key_values(NodeId side) const {
    std::vector<double> out;
    const bool is_width = counts_keys(program_.node(side));
    std::vector<NodeId> support = is_width ? std::vector<NodeId>{side} : support_of(program_, side);
    for (int w = 0; w <= n_; ++w) {
      Value v;
      if (is_width) out.push_back(double(w));
      else if (evaluate_fused(program_, side, support, {Value::of_int(w)}, v) && v.is_number())
        out.push_back(v.number.to_double());
      else out.push_back(std::nan(""));
    }
    return out;
  }

  // A comparison side as an affine form over indices and length plus categorical terms: sums,
  // differences, negations and integer multiples of affine maps (affine_form, checked on every
  // (i, L)) and of categorical s-ops or maps of one (terms, whose values infer() checks later).
  bool linear_form(NodeId side, int64_t coefficient, AffineForm& form, std::vector<NumberTerm>& terms) const {
    AffineForm affine;
    if (std::llabs(coefficient) > kLinearReach) return false;
    if (affine_form(side, affine)) {
      if (std::llabs(affine.indices) > kLinearReach || std::llabs(affine.length) > kLinearReach ||
          std::llabs(affine.constant) > kLinearReach)
        return false;
      form.indices += coefficient * affine.indices;
      form.length += coefficient * affine.length;
      form.constant += coefficient * affine.constant;
      return true;
    }
    const Node& node = program_.node(side);
    if (node.annotation != Encoding::Unspecified && node.kind == NodeKind::Elementwise) return false;
    if (node.kind == NodeKind::Elementwise) {
      auto integer = [&](NodeId in, int64_t& c) {
        const Node& n = program_.node(in);
        if (n.kind != NodeKind::Constant || !n.constant.is_number() || !n.constant.number.to_int64(c)) return false;
        return std::llabs(c) <= kLinearReach;
      };
      int64_t c = 0;
      switch (node.op) {
        case ElementOp::Add:
          return linear_form(node.inputs[0], coefficient, form, terms) &&
                 linear_form(node.inputs[1], coefficient, form, terms);
        case ElementOp::Sub:
          return linear_form(node.inputs[0], coefficient, form, terms) &&
                 linear_form(node.inputs[1], -coefficient, form, terms);
        case ElementOp::Neg: return linear_form(node.inputs[0], -coefficient, form, terms);
        case ElementOp::Pos: return linear_form(node.inputs[0], coefficient, form, terms);
        case ElementOp::Mul:
          if (integer(node.inputs[0], c)) return linear_form(node.inputs[1], coefficient * c, form, terms);
          if (integer(node.inputs[1], c)) return linear_form(node.inputs[0], coefficient * c, form, terms);
          break;
        default: break;
      }
    }
    const std::vector<NodeId> support =
        node.kind == NodeKind::Elementwise ? support_of(program_, side) : std::vector<NodeId>{side};
    if (support.size() != 1 || !is_term_source(program_.node(support[0]))) return false;
    terms.push_back({side, coefficient});
    return true;
  }

  // An order between positions, `select(indices, indices, <)` inside has_focus: every reader asks
  // only whether some key is selected, so the selected keys need not score alike, only above BOS.
  bool consider_order(NodeId id, NumericSelect& plan) {
    const Node& node = program_.node(id);
    std::vector<NumberTerm> key_terms;
    if (!reads_positions(id) || !linear_form(node.inputs[0], 1, plan.key, key_terms) ||
        !linear_form(node.inputs[1], 1, plan.query, plan.terms) || !key_terms.empty() || !plan.terms.empty())
      return false;
    std::string& why = out_.why[size_t(id)];
    std::vector<NodeId> heads;
    if (!only_any_selected(id, heads) || heads.empty()) {
      why = "one-hot: something reads it that needs every selected key to score alike (a width, a mean, an `or`)";
      return false;
    }
    for (NodeId head : heads) {
      std::vector<NodeId> parts;
      flatten_selector(program_, program_.node(head).inputs[0], NodeKind::SelectAnd, parts);
      for (NodeId part : parts)
        if (part != id && is_position_order(part)) {
          why = "one-hot: a head that reads it compares positions in another conjunct too";
          return false;
        }
      plan.conjuncts = std::max(plan.conjuncts, int(parts.size()));
    }
    plan.comparison = node.comparison;
    plan.query.length -= plan.key.length;
    plan.query.constant -= plan.key.constant;
    plan.key.length = plan.key.constant = 0;
    for (NodeId side : node.inputs)
      for (NodeId length : lengths_in(side)) plan.length = length;
    // |q - k| over the keys and queries of every length: q and k are affine in the index.
    for (int64_t length = causal_ ? n_ : 1; length <= n_; ++length) {
      auto at = [&](const AffineForm& f, int64_t i) { return double(f.indices * i + f.length * length + f.constant); };
      const double q0 = at(plan.query, 0), q1 = at(plan.query, length - 1), k0 = at(plan.key, 0),
                   k1 = at(plan.key, length - 1);
      plan.reach = std::max({plan.reach, std::fabs(q0 - k0), std::fabs(q0 - k1), std::fabs(q1 - k0), std::fabs(q1 - k1)});
    }
    why = "numerical: only whether some key is selected matters, so one head scores beta * (q - k) across the "
          "comparison's step over the number groups, above BOS exactly where it holds, O(1) dimensions instead of "
          "one per position";
    return true;
  }

  // Whether a comparison reads indices or length on either side.
  bool reads_positions(NodeId sel) const {
    for (NodeId side : program_.node(sel).inputs)
      if (program_.node(side).kind != NodeKind::Constant)
        for (NodeId s : program_.node(side).kind == NodeKind::Elementwise ? support_of(program_, side)
                                                                           : std::vector<NodeId>{side})
          if (program_.node(s).kind == NodeKind::Indices || is_length(s)) return true;
    return false;
  }

  bool is_position_order(NodeId sel) const {
    const Node& node = program_.node(sel);
    return node.kind == NodeKind::Select && node.comparison != Comparison::Eq && node.comparison != Comparison::Ne &&
           reads_positions(sel);
  }

  // The aggregates that read `sel` through `and`s only, each of a constant (so only whether some key
  // is selected shows); false where anything else reads it.
  bool only_any_selected(NodeId sel, std::vector<NodeId>& heads) const {
    for (NodeId user : users_[size_t(sel)]) {
      if (!needed_[size_t(user)]) continue;
      const Node& u = program_.node(user);
      if (u.kind == NodeKind::SelectAnd) {
        if (!only_any_selected(user, heads)) return false;
      } else if (u.kind == NodeKind::Aggregate && u.inputs[0] == sel &&
                 program_.node(u.inputs[1]).kind == NodeKind::Constant) {
        heads.push_back(user);
      } else {
        return false;
      }
    }
    return true;
  }

  bool consider(NodeId id, NumericSelect& plan) {
    const Node& node = program_.node(id);
    std::string& why = out_.why[size_t(id)];
    auto excluded = excluded_.find(id);
    if (excluded != excluded_.end()) {
      why = excluded->second;
      return false;
    }
    if (is_counted_key(node.inputs[0])) return consider_width_key(id, plan);
    if (reads_several_widths(node.inputs[0])) {
      why = "one-hot: its keys are a map of several selector widths (a stable sort's w1 + w2), which one MLP "
            "reads along a line through their scratch values whose steps float32 cannot make precise enough for "
            "a number's square";
      return false;
    }
    bool position_sides = true;
    for (NodeId side : node.inputs) {
      const Node& s = program_.node(side);
      position_sides = position_sides && (s.kind == NodeKind::Indices || s.kind == NodeKind::Constant ||
                                          is_length(side) || s.kind == NodeKind::Elementwise || is_term_source(s));
    }
    if (!position_sides) return false;
    if (!reads_positions(id)) return false;
    std::vector<NumberTerm> key_terms;
    if (!linear_form(node.inputs[0], 1, plan.key, key_terms) || !linear_form(node.inputs[1], 1, plan.query, plan.terms)) {
      if (program_.node(node.inputs[0]).kind == NodeKind::Indices)
        why = "one-hot: its query is not an affine map of indices and length (plus categorical s-ops) with integer "
              "coefficients";
      return false;
    }
    if (plan.key.indices == 0) {
      why = "one-hot: its keys are not an injective map of indices (a*indices + ..., a != 0)";
      return false;
    }
    // k + t == q is k == q - t where t (length, or a term) holds one value at every position.
    for (const NumberTerm& term : key_terms) {
      if (!position_invariant(program_, term.sop, mode_)) {
        why = "one-hot: its keys add " + program_.describe(term.sop) +
              ", which can differ from position to position, so the sum is not a shift of indices";
        return false;
      }
      plan.terms.push_back({term.sop, -term.coefficient});
    }
    plan.query.length -= plan.key.length;
    plan.key.length = 0;
    for (NodeId user : users_[size_t(id)]) {
      const Node& u = program_.node(user);
      if (u.kind != NodeKind::Aggregate) {
        why = "one-hot: it is combined with another selector or counted by selector_width, which need equal "
              "scores on every selected key";
        return false;
      }
    }
    for (NodeId side : node.inputs)
      for (NodeId length : lengths_in(side)) plan.length = length;
    const int64_t a = plan.key.indices;
    plan.max_key = std::fabs(double(a)) * out_.centre;
    if (!plan.terms.empty()) {
      why = "numerical, once its terms' values are known";
      return true;
    }
    // BOS is kept out of the softmax where every query matches (its weight would otherwise carry
    // float32's rounding of its score into the copy); a query of indices alone can fall back on its
    // square, one of length on BOS as the key before the first.
    const NumericSelect exact = plan;
    std::string reason = choose_fallback(plan, n_, causal_, out_.centre, [&](int64_t length, int64_t i) {
      int64_t q = plan.query.indices * i + plan.query.length * length + plan.query.constant;
      return std::pair{q, q};
    });
    if (plan.query.length == 0 && (!reason.empty() || plan.fallback != Fallback::None)) {
      plan = exact;
      plan.fallback = Fallback::Square;
      const double key_centre = double(a) * out_.centre + double(plan.key.constant);
      for (int64_t i = 0; i < n_; ++i)
        plan.max_query = std::max(plan.max_query, std::fabs(double(plan.query.indices * i + plan.query.constant) - key_centre));
    } else if (!reason.empty()) {
      why = reason;
      return false;
    }
    why = "numerical: one head scores -(q-k)^2 up to a per-query constant over the number groups (" +
          fallback_text(plan) + "), O(1) dimensions instead of one per position";
    return true;
  }

  // How far float32 may move a computed key's score, in units of (k - centre)^2 (a score unit over
  // beta). The MLP writes w's number group from 1/(w+1) by a step between every two widths; the
  // step between w and w+1 has slope 2*10.5/gap with gap = 1/((w+1)(w+2)) (lower_mlp.cpp), so where
  // the read is 1 (w = 0) its pre-activation is about 21*(w+1)*(w+2), and its two units' difference
  // carries float32's rounding of that, times what the step writes: the change of (k - centre)^2
  // and, through 2*q*k, of k times the query's reach Q. Measured: sort_unique verifies at 16 (bound
  // 0.11) and mismatches from 24 (0.51); 20 (0.25) verified with a numerical error of 3e-3. At 16
  // the dense forward and the verification's (runtime/verification_backend.*) already differ by
  // 5e-4 of the logits (a uniform shift, 2e-3 in logits near 4.5), above the 2.5e-4 their test
  // allows; at 8 (bound 0.008) by 2e-5. The limit is a sixteenth: to max length 14. (That is the
  // rounding of steps half a unit wide, as measured then; the steps are now kStepHalfWidth wide
  // and round several times less (lower_internal.hpp), so the bound is conservative, and the
  // limit has not been measured again.)
  double computed_key_rounding(const std::vector<double>& key, double Q) const {
    double square = 0, linear = 0;
    const double c = out_.centre;
    for (int w = 0; w < n_; ++w) {
      const double z = 21.0 * (w + 1.0) * (w + 2.0);
      const double a = key[size_t(w)], b = key[size_t(w) + 1];
      if (std::isnan(a) || std::isnan(b)) continue;
      square += z * std::fabs((b - c) * (b - c) - (a - c) * (a - c));
      linear += z * std::fabs(b - a);
    }
    return 2.0 * kFloat32Epsilon * (square + 2.0 * Q * linear);
  }

  // select(width, queries, ==): the keys are w in 0..n, centred like indices, and a query that can
  // miss every key falls back on BOS, so the query is a map of indices alone (it carries q~^2).
  bool consider_width_key(NodeId id, NumericSelect& plan) {
    const Node& node = program_.node(id);
    std::string& why = out_.why[size_t(id)];
    if (!affine_form(node.inputs[1], plan.query)) {
      why = "one-hot: its keys are computed from a selector width, but its query is not an affine map of indices and "
            "length (a number from a width is compared with positions only)";
      return false;
    }
    if (plan.query.length != 0 && !causal_) {
      why = "one-hot: its keys are a selector width, which need not match every query, and with `length` in the "
            "query BOS cannot be the fallback";
      return false;
    }
    for (NodeId user : users_[size_t(id)])
      if (needed_[size_t(user)] && program_.node(user).kind != NodeKind::Aggregate) {
        why = "one-hot: it is combined with another selector or counted by selector_width, which need equal "
              "scores on every selected key";
        return false;
      }
    plan.key = {1, 0, 0};
    plan.key_width = node.inputs[0];
    plan.fallback = Fallback::Square;
    for (int64_t i = 0; i < n_; ++i) {
      int64_t q = plan.query.indices * i + plan.query.length * (i + 1) + plan.query.constant;
      plan.max_query = std::max(plan.max_query, std::fabs(double(q) - out_.centre));
    }
    const std::vector<double> keys = computed_key_values(node.inputs[0]);
    for (double k : keys)
      if (!std::isnan(k)) plan.max_key = std::max(plan.max_key, std::fabs(k - out_.centre));
    if (plan.max_key > kComputedKeyReach * out_.extent) {
      why = "one-hot: its keys, computed from a selector width, reach beyond what a number group holds";
      return false;
    }
    const double rounding = computed_key_rounding(keys, plan.max_query);
    if (rounding > 1.0 / 16) {
      char text[400];
      std::snprintf(text, sizeof text,
                    "one-hot: its keys are computed from selector widths, and at --max-len %d float32 rounds the "
                    "number group the MLP writes from 1/(w+1) by up to %.3g in (k - centre)^2 (steps as steep as "
                    "1/(w+1)'s gaps), more than the sixteenth of a unit kept for it (the float32 limit)",
                    n_, rounding);
      why = text;
      return false;
    }
    why = "numerical: its keys are a selector width (or a map of one) read as an integer (one MLP of O(n) "
          "units writes its number group); one head scores -(q-k)^2 up to a per-query constant, BOS wins where "
          "no key matches, O(1) dimensions instead of one per width";
    return true;
  }

  // Elementwise maps of indices and length all of whose readers are numerical selectors or such maps.
  std::vector<uint8_t> number_only_nodes(const std::map<NodeId, NumericSelect>& selects) const {
    std::vector<uint8_t> only(program_.nodes.size(), 0);
    for (NodeId id = NodeId(program_.nodes.size()) - 1; id >= 0; --id) {
      const Node& node = program_.node(id);
      if (!needed_[size_t(id)] || node.kind != NodeKind::Elementwise || id == program_.output ||
          node.annotation != Encoding::Unspecified || users_[size_t(id)].empty())
        continue;
      // Positions, and the categorical s-ops a query adds as terms, but at least one position: a map
      // of a categorical s-op alone is a term, read through its one-hot like any categorical map.
      bool all = true, positions = false;
      for (NodeId s : support_of(program_, id)) {
        bool position = program_.node(s).kind == NodeKind::Indices || is_length(s);
        positions = positions || position;
        all = all && (position || is_term_source(program_.node(s)));
      }
      all = all && positions;
      for (NodeId user : users_[size_t(id)])
        all = all && (selects.count(user) || only[size_t(user)] || !needed_[size_t(user)]);
      only[size_t(id)] = all;
    }
    return only;
  }

  bool read_only_as_number(NodeId id, const std::vector<uint8_t>& only,
                           const std::map<NodeId, NumericSelect>& selects) const {
    if (id == program_.output) return false;
    for (NodeId user : users_[size_t(id)])
      if (needed_[size_t(user)] && !selects.count(user) && !only[size_t(user)] &&
          out_.of(user) != NumberRole::PrefixDigits)
        return false;
    return true;
  }
};

std::string float32_note(const Program& program, NodeId id, const NumericSelect& plan, int max_len) {
  const NumericMargin bound = numeric_select_margin(plan, max_len);
  const double error = bound.rounding, margin = bound.margin;
  char text[320];
  if (error <= margin / 2) {
    std::snprintf(text, sizeof text, "; %s by %.3g, float32 rounds a score by at most %.3g",
                  plan.comparison == Comparison::Eq ? "the matching key wins" : "a selected key beats BOS", margin,
                  error);
    return text;
  }
  std::snprintf(text, sizeof text,
                "at --max-len %d this numerical selector's scores reach %.3g, and float32 rounds them by up to "
                "%.3g, more than half the margin of %.3g between %s (the float32 limit); use a smaller --max-len",
                max_len, error / (kScoreRoundings * kFloat32Epsilon), error, margin,
                plan.comparison == Comparison::Eq ? "the matching key and the next" : "a selected key and BOS");
  fail_at(program.node(id).span, text);
}

}  // namespace

PositionNumbers plan_position_numbers(const Program& program, const CompileOptions& options,
                                      const std::map<NodeId, std::string>& excluded) {
  return Planner(program, options, excluded).run();
}

bool settle_query_terms(const Program& program, const Inference& inference, const CompileOptions& options,
                        NodeId selector, NumericSelect& plan, std::string& why) {
  const int n = options.max_len;
  const bool causal = options.mode == Mode::Causal;
  // Each term's reach at each last key a query sees (index: that key's position): [lo, hi] of
  // coefficient * value. A copy of indices (an aggregate of them) holds a position the query sees
  // or its default, so its values are bounded by that position; other terms by their value sets.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> reach;
  for (const NumberTerm& term : plan.terms) {
    const Node& node = program.node(term.sop);
    const std::vector<NodeId> support =
        node.kind == NodeKind::Elementwise ? support_of(program, term.sop, &inference.cut) : std::vector{term.sop};
    const std::string name = program.describe(term.sop);
    if (support.size() != 1 || !is_term_source(program.node(support[0])) ||
        inference.info[size_t(support[0])].encoding != Encoding::Categorical ||
        !inference.info[size_t(support[0])].values_known) {
      why = "one-hot: its query adds " + name + ", which is not read off a categorical s-op's one-hot";
      return false;
    }
    const Node& source = program.node(support[0]);
    const bool index_copy = source.kind == NodeKind::Aggregate &&
                            program.node(source.inputs[1]).kind == NodeKind::Indices;
    // (bound on the source value, the term's value) for every value the source can hold.
    std::vector<std::pair<double, int64_t>> values;
    for (const Value& v : inference.info[size_t(support[0])].values) {
      Value t;
      if (support[0] == term.sop) t = v;
      else if (!evaluate_fused(program, term.sop, support, {v}, t)) continue;  // an input there is an error
      if (!(t.is_bool() || (t.is_number() && t.number.is_integer() && std::fabs(number_of(t)) <= double(kLinearReach)))) {
        why = "one-hot: its query adds " + name + ", which can hold " + to_source(t) + ", not an integer within 2^24";
        return false;
      }
      const bool is_default = index_copy && same_value(v, source.default_value);
      const double bound = index_copy && !is_default && v.is_number() ? v.number.to_double() : -1.0;
      values.push_back({bound, term.coefficient * int64_t(number_of(t))});
    }
    if (values.empty()) {
      why = "one-hot: its query adds " + name + ", which no input defines";
      return false;
    }
    std::vector<std::pair<int64_t, int64_t>> by_last(size_t(n), {INT64_MAX, INT64_MIN});
    for (int last = 0; last < n; ++last)
      for (const auto& [bound, value] : values)
        if (bound <= double(last)) by_last[size_t(last)] = {std::min(by_last[size_t(last)].first, value),
                                                            std::max(by_last[size_t(last)].second, value)};
    for (auto& [lo, hi] : by_last)
      if (lo > hi) lo = hi = 0;  // no value is possible there: the term adds nothing
    reach.push_back(std::move(by_last));
  }
  std::string reason = choose_fallback(plan, n, causal, inference.numbers.centre, [&](int64_t length, int64_t i) {
    int64_t q = plan.query.indices * i + plan.query.length * length + plan.query.constant;
    std::pair<int64_t, int64_t> range{q, q};
    const size_t last = size_t(causal ? i : length - 1);
    for (const auto& term : reach) range = {range.first + term[last].first, range.second + term[last].second};
    return range;
  });
  if (!reason.empty()) {
    why = reason;
    return false;
  }
  std::string terms;
  for (const NumberTerm& term : plan.terms) terms += (terms.empty() ? "" : ", ") + program.describe(term.sop);
  why = "numerical: one head scores -(q-k)^2 up to a per-query constant over the number groups, its query adding " +
        terms + " read off the one-hot (" + fallback_text(plan) + "), O(1) dimensions instead of one per position" +
        float32_note(program, selector, plan, n);
  return true;
}

namespace {

// An aggregate of a constant whose selector's conjunct `order` compares positions by <, <=, > or >=
// (recognised above): the order scores beta * (s (q - k) + h), s = +-1 and h = -+1/2, at least
// beta/2 where it holds and at most -beta/2 where not; each other conjunct's match scores G, more
// than the order can swing. BOS scores G per other conjunct: below every selected key, above every
// other.
HeadScores order_scores(const LowerContext& ctx, NodeId order, NodeId selector) {
  const PositionNumbers& numbers = ctx.inference.numbers;
  const NumericSelect& plan = numbers.selects.at(order);
  const double beta = numeric_select_beta(ctx.options.max_len), G = order_match_score(plan, ctx.options.max_len);
  const int one = ctx.allocation.one;
  int m = 0;
  std::vector<Term> terms = selector_terms(ctx, selector, G, order, m);
  const bool below = plan.comparison == Comparison::Lt || plan.comparison == Comparison::Le;  // k below q
  const double s = below ? 1.0 : -1.0;
  const double h = plan.comparison == Comparison::Lt || plan.comparison == Comparison::Gt ? -0.5 : 0.5;
  // q - k = (q - a c) - a (i - c), c the centre, so that both factors stay near the number groups' scale.
  const double a = double(plan.key.indices), c = numbers.centre;
  Functional q = ctx.affine_value(plan.query, plan.length);
  q.push_back({one, -a * c});
  Functional query_part = scaled(q, beta * s);
  query_part.push_back({one, beta * h});
  terms.push_back({query_part, ctx.unit(one)});
  if (a != 0) {
    Functional k = ctx.number_value(ctx.indices_number());
    k.push_back({one, -c});
    terms.push_back({ctx.unit(one, -beta * s * a), k});
  }
  return {terms, ctx.unit(one, double(m) * G), {}};
}

}  // namespace

std::optional<HeadScores> numerical_selector_scores(const LowerContext& ctx, NodeId id) {
  const Program& program = ctx.program;
  const Node& node = program.node(id);
  const PositionNumbers& numbers = ctx.inference.numbers;
  const double beta = numeric_select_beta(ctx.options.max_len);
  const int one = ctx.allocation.one;
  const NodeId indices = ctx.indices_number();
  if (numbers.of(id) == NumberRole::LastIndex) {
    // beta * (i - centre): the last position wins by beta over the one before it; BOS never.
    Functional key = ctx.number_value(indices);
    key.push_back({one, -numbers.centre});
    return HeadScores{{{ctx.unit(one, beta), key}}, ctx.unit(one, -beta * (numbers.extent + 10.0)), {}};
  }
  if (node.kind == NodeKind::Aggregate && numbers.of(node.inputs[0]) == NumberRole::Select &&
      numbers.selects.at(node.inputs[0]).comparison == Comparison::Eq) {
    const NodeId sel = node.inputs[0];
    const NumericSelect& plan = numbers.selects.at(sel);
    const double a = double(plan.key.indices), key_centre = a * numbers.centre + double(plan.key.constant);
    // q~ = q - key_centre, k~ = a * (i - centre): scores beta * (2 q~ k~ - k~^2).
    Functional q = ctx.affine_value(plan.query, plan.length);
    for (const NumberTerm& term : plan.terms)
      for (const auto& [dim, w] : ctx.numeric_view(term.sop)) q.push_back({dim, w * double(term.coefficient)});
    q.push_back({one, -key_centre});
    // The keys' numbers: indices' group in the position embedding, or the width's from its MLP.
    const NodeId key_source = plan.key_width >= 0 ? plan.key_width : indices;
    Functional k = ctx.number_value(key_source);
    k.push_back({one, -numbers.centre});
    std::vector<Term> terms{{scaled(q, beta), scaled(k, 2.0 * a)},
                            {ctx.unit(one, beta), scaled(ctx.centred_square(key_source), -a * a)}};
    if (plan.fallback == Fallback::None) return HeadScores{terms, ctx.unit(one, -10.0 * beta), {}};
    if (plan.fallback == Fallback::BeforeKeys) {
      // BOS is the key of position -1, k~ = a*(-1 - centre), read through the same terms as every
      // key: it matches the queries one step before the first key and is nearest to those further
      // before, and a query that matches a key beats it by beta or more.
      const double c = numbers.centre;
      return HeadScores{terms, {}, {2.0 * a * (-1.0 - c), -a * a * (1.0 + c) * (1.0 + c)}};
    }
    // q~ = A (i - centre) + d, so q~^2 = A^2 (i - centre)^2 + 2 A d (i - centre) + d^2.
    const double A = double(plan.query.indices);
    const double d = A * numbers.centre + double(plan.query.constant) - key_centre;
    Functional centred = ctx.number_value(indices);
    centred.push_back({one, -numbers.centre});
    Functional bos = scaled(ctx.centred_square(indices), beta * A * A);
    for (const auto& entry : scaled(centred, 2.0 * beta * A * d)) bos.push_back(entry);
    bos.push_back({one, beta * (d * d - 0.5)});
    return HeadScores{terms, bos, {}};
  }
  if (node.kind == NodeKind::Aggregate) {
    std::vector<NodeId> parts;
    flatten_selector(program, node.inputs[0], NodeKind::SelectAnd, parts);
    for (NodeId part : parts)
      if (numbers.of(part) == NumberRole::Select) return order_scores(ctx, part, node.inputs[0]);
  }
  return std::nullopt;
}

}  // namespace raspc::compiler
