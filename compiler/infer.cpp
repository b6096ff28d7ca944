// Pass 1, infer: the exact value set of every s-op (from the vocabulary and the maximum length)
// and its encoding.
//
// Encodings follow LANGUAGE.md: an s-op whose values are averaged over possibly several positions
// is numerical; a map of a numerical s-op with numeric values stays numerical; everything else is
// categorical, unless `categorical()` / `numerical()` says otherwise. An aggregate copies (is
// categorical) when its selector provably selects at most one key, or when its values are not
// numbers (a mean of those is undefined anyway).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "compiler/ir.hpp"

namespace raspc::compiler {
namespace {

bool numeric_value(const Value& v, Rational& out) {
  if (v.is_number()) return out = v.number, true;
  if (v.is_bool()) return out = Rational::integer(v.boolean ? 1 : 0), true;
  return false;
}

// Exact sums and quotients for the value sets of means; nullopt-style `ok` on overflow.
bool add_rational(const Rational& a, const Rational& b, Rational& out) {
  __int128 num = __int128(a.num) * b.den + __int128(b.num) * a.den;
  __int128 den = __int128(a.den) * b.den;
  __int128 x = num < 0 ? -num : num, y = den;
  while (y != 0) { __int128 t = x % y; x = y; y = t; }
  if (x > 1) num /= x, den /= x;
  if (num > INT64_MAX || num < -INT64_MAX || den > INT64_MAX) return false;
  out = {int64_t(num), int64_t(den)};
  return true;
}

Rational divide_by(const Rational& a, int64_t k) {
  __int128 num = a.num, den = __int128(a.den) * k;
  __int128 x = num < 0 ? -num : num, y = den;
  while (y != 0) { __int128 t = x % y; x = y; y = t; }
  if (x > 1) num /= x, den /= x;
  return {int64_t(num), int64_t(den)};
}

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
  Inferrer(const Program& program, const CompileOptions& options) : program_(program), options_(options) {
    result_.info.resize(program.nodes.size());
    result_.cut.assign(program.nodes.size(), 0);
    depth_.assign(program.nodes.size(), -1);
  }

  Inference run() {
    mark_needed();
    for (NodeId id = 0; id < NodeId(program_.nodes.size()); ++id)
      if (result_.info[id].needed) infer_node(id);
    return std::move(result_);
  }

 private:
  const Program& program_;
  const CompileOptions& options_;
  Inference result_;
  std::vector<int> depth_;

  // Attention layers on the longest path to a node: which of two inputs is ready later.
  int depth(NodeId id) {
    int& d = depth_[size_t(id)];
    if (d >= 0) return d;
    const Node& node = program_.node(id);
    int m = 0;
    for (NodeId in : node.inputs) m = std::max(m, depth(in));
    d = (node.kind == NodeKind::Aggregate || node.kind == NodeKind::SelectorWidth) ? m + 1 : m;
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
        out.encoding = Encoding::Categorical;
        out.why = "indices: one dimension per position";
        break;
      case NodeKind::Constant:
        out.values = {node.constant};
        out.encoding = Encoding::Categorical;
        out.why = "a constant: folded into whatever reads it";
        break;
      case NodeKind::Elementwise: infer_elementwise(id); break;
      case NodeKind::Aggregate: infer_aggregate(id); break;
      case NodeKind::SelectorWidth:
        for (int i = 0; i <= n; ++i) out.values.push_back(Value::of_int(i));
        out.encoding = Encoding::Categorical;
        out.why = "selector_width: categorical 0.." + std::to_string(n) + ", read from BOS's attention weight 1/(w+1)";
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
    if (out.encoding == Encoding::Categorical && out.values.size() > kValueSetLimit)
      refuse_large(node, out.values.size(), "categorical s-op");
    set_bounds(out);
  }

  void infer_select(NodeId id) {
    const Node& node = program_.node(id);
    for (NodeId side : node.inputs) {
      if (info(side).encoding == Encoding::Numerical)
        fail_at(program_.node(side).span,
                "a selector cannot compare a numerical s-op (attention compares one-hot values); make it "
                "categorical with categorical(...) or compare a categorical s-op");
    }
    info(id).at_most_one = node.comparison == Comparison::Eq && unique_per_position(node.inputs[0]);
  }

  // Whether no two positions hold the same value: indices, and injective maps of indices.
  bool unique_per_position(NodeId id) {
    const Node& node = program_.node(id);
    if (node.kind == NodeKind::Indices) return true;
    if (node.kind != NodeKind::Elementwise) return false;
    std::vector<NodeId> support = support_of(program_, id, &result_.cut);
    if (support.size() != 1 || program_.node(support[0]).kind != NodeKind::Indices) return false;
    std::vector<Value> seen;
    for (int i = 0; i < options_.max_len; ++i) {
      Value v;
      if (!evaluate_fused(program_, id, support, {Value::of_int(i)}, v)) return false;
      seen.push_back(v);
    }
    return sorted_unique(seen).size() == seen.size();
  }

  void infer_elementwise(NodeId id) {
    const Node& node = program_.node(id);
    SopInfo& out = info(id);
    std::vector<NodeId> support = cut_inputs(id, support_of(program_, id, &result_.cut));
    bool numerical_input = false;
    int numerical_inputs = 0;
    size_t combinations = 1;
    bool enumerable = true;
    for (NodeId s : support) {
      const SopInfo& in = info(s);
      if (in.encoding == Encoding::Numerical) numerical_input = true, ++numerical_inputs;
      if (!in.values_known) enumerable = false;
      combinations *= std::max<size_t>(1, in.values.size());
      if (combinations > kCombinationLimit) enumerable = false;
    }
    if (enumerable) {
      std::vector<Value> values;
      std::vector<size_t> digit(support.size(), 0);
      std::vector<Value> assignment(support.size());
      for (;;) {
        for (size_t i = 0; i < support.size(); ++i) assignment[i] = info(support[i]).values[digit[i]];
        Value v;
        if (evaluate_fused(program_, id, support, assignment, v)) values.push_back(v);
        size_t i = 0;
        for (; i < support.size(); ++i) {
          if (++digit[i] < info(support[i]).values.size()) break;
          digit[i] = 0;
        }
        if (i == support.size()) break;
      }
      out.values = sorted_unique(std::move(values));
      if (out.values.empty())
        fail_at(node.span, "this expression is undefined on every input (every combination of its inputs fails)");
    } else {
      out.values_known = false;
      // Bounds from the corners of the inputs' bounds: exact for the affine maps that numerical
      // s-ops without a finite value set are limited to.
      bool first = true;
      std::vector<Value> corner(support.size());
      for (size_t mask = 0; mask < (size_t(1) << std::min<size_t>(support.size(), 12)); ++mask) {
        for (size_t i = 0; i < support.size(); ++i) {
          double b = (mask >> i) & 1 ? info(support[i]).hi : info(support[i]).lo;
          corner[i] = Value::of_number(divide_by({int64_t(std::llround(b * 1000000)), 1}, 1000000));
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
      out.why = numerical_inputs > 1 ? "a numeric map of several numerical s-ops: numerical, an affine MLP"
                                     : "a map of a numerical s-op with too many values to list: numerical";
    } else {
      out.encoding = Encoding::Categorical;
      out.why = numerical_input ? "a map of one numerical s-op with a finite value set: categorical, by discretisation"
                                : "a map of categorical s-ops: categorical, one dimension per value";
      if (!out.values_known)
        fail_at(node.span, "this s-op's value set cannot be enumerated (too many input combinations)");
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
      out.values.push_back(node.default_value);
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
    auto less = [](const Rational& a, const Rational& b) {
      return __int128(a.num) * b.den < __int128(b.num) * a.den;
    };
    std::set<Rational, decltype(less)> sums(base.begin(), base.end(), less);
    std::vector<Value> means{node.default_value};
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
      for (const Rational& s : sums) means.push_back(Value::of_number(divide_by(s, k)));
      if (means.size() > 64 * kValueSetLimit) known = false;
    }
    if (known) {
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

Inference infer(const Program& program, const CompileOptions& options) {
  if (options.max_len < 1) fail_file("raspc compile", "--max-len must be at least 1");
  if (options.vocab.empty()) fail_file("raspc compile", "the vocabulary is empty; give --vocab");
  return Inferrer(program, options).run();
}

}  // namespace raspc::compiler
