// The reference interpreter. One run evaluates the nodes the output depends on, in id order (a
// topological order), each into a buffer that lives as long as the Interpreter: s-ops as n Values,
// selectors as n*n bytes indexed [q*n + k]. Nothing is allocated per run once the buffers have
// grown to the longest input seen, except the returned output.
#include "language/interpret.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace raspc {

namespace {

// A number already reduced and in the small form (den >= 1, num != INT64_MIN).
Value number_value(int64_t num, int64_t den) {
  Value v;
  v.kind = ValueKind::Number;
  v.number = Rational{num, den};
  return v;
}

// `key cmp query` on integers (int64 for the vectorised rows, __int128 for cross-multiplied
// rationals).
template <Comparison kCmp, typename Integer>
inline bool compare_integers(Integer key, Integer query) {
  switch (kCmp) {
    case Comparison::Eq: return key == query;
    case Comparison::Ne: return key != query;
    case Comparison::Lt: return key < query;
    case Comparison::Gt: return key > query;
    case Comparison::Le: return key <= query;
    case Comparison::Ge: return key >= query;
  }
  return false;
}

// The select predicate with fast paths for the cases whose meaning cannot be in doubt (two
// numbers; two interned strings compared for equality); everything else goes to compare_select.
// The comparison is a template argument so the inner loop carries no switch.
template <Comparison kCmp>
inline bool compare_values(const Value& key, const Value& query, const Span& where) {
  if (key.kind == ValueKind::Number && query.kind == ValueKind::Number && !key.number.is_big() &&
      !query.number.is_big()) {
    // Both denominators are positive, so cross-multiplying keeps the order; __int128 cannot overflow.
    // Integers (the common case: tokens, indices, widths) need no multiplication.
    const bool integers = (key.number.den | query.number.den) == 1;
    __int128 a = integers ? __int128(key.number.num) : __int128(key.number.num) * query.number.den;
    __int128 b = integers ? __int128(query.number.num) : __int128(query.number.num) * key.number.den;
    return compare_integers<kCmp>(a, b);
  }
  if (key.kind == ValueKind::String && query.kind == ValueKind::String) {
    if (kCmp == Comparison::Eq) return key.string_id == query.string_id;
    if (kCmp == Comparison::Ne) return key.string_id != query.string_id;
  }
  return compare_select(kCmp, key, query, where);
}

// Both sides as integers where compare_values would compare them as such: integer numbers for any
// comparison, interned strings for == and !=. False otherwise (then every pair goes through
// compare_values).
bool as_integers(const std::vector<Value>& values, int n, std::vector<int64_t>& out) {
  out.resize(size_t(n));
  for (int i = 0; i < n; ++i) {
    const Value& v = values[size_t(i)];
    if (v.kind == ValueKind::Number && v.number.den == 1) out[size_t(i)] = v.number.num;
    else return false;
  }
  return true;
}
template <Comparison kCmp>
bool as_string_ids(const std::vector<Value>& values, int n, std::vector<int64_t>& out) {
  if (kCmp != Comparison::Eq && kCmp != Comparison::Ne) return false;
  out.resize(size_t(n));
  for (int i = 0; i < n; ++i) {
    const Value& v = values[size_t(i)];
    if (v.kind == ValueKind::String) out[size_t(i)] = v.string_id;
    else return false;
  }
  return true;
}

// Fills the n*n selector; `q` tracks the query being compared, for error messages. Where both
// sides are integers (or interned strings under == and !=), the row is a loop over plain integers,
// which the compiler vectorises: the library's sort builds four n*n selectors an input.
template <Comparison kCmp>
void fill_selector(const std::vector<Value>& keys, const std::vector<Value>& queries, uint8_t* matrix, int n,
                   bool causal, const Span& where, int& q) {
  thread_local std::vector<int64_t> key_ints, query_ints;
  if ((as_integers(keys, n, key_ints) && as_integers(queries, n, query_ints)) ||
      (as_string_ids<kCmp>(keys, n, key_ints) && as_string_ids<kCmp>(queries, n, query_ints))) {
    for (q = 0; q < n; ++q) {
      uint8_t* row = matrix + size_t(q) * size_t(n);
      const int visible = causal ? q + 1 : n;
      const int64_t query = query_ints[size_t(q)];
      const int64_t* key = key_ints.data();
      for (int k = 0; k < visible; ++k) row[k] = uint8_t(compare_integers<kCmp, int64_t>(key[k], query));
      std::fill(row + visible, row + n, uint8_t(0));
    }
    return;
  }
  for (q = 0; q < n; ++q) {
    uint8_t* row = matrix + size_t(q) * size_t(n);
    const int visible = causal ? q + 1 : n;
    const Value& query = queries[size_t(q)];
    for (int k = 0; k < visible; ++k) row[k] = compare_values<kCmp>(keys[size_t(k)], query, where);
    std::fill(row + visible, row + n, uint8_t(0));
  }
}

__int128 gcd128(__int128 a, __int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

constexpr __int128 kInt64Max = __int128(INT64_MAX);

std::string position_note(int position) {
  return "note: this happens at position " + std::to_string(position) + " of the input\n";
}

}  // namespace

Interpreter::Interpreter(const Program& program, Mode mode) : program_(program), mode_(mode) {
  const size_t count = program_.nodes.size();
  sop_.resize(count);
  selector_.resize(count);
  evaluated_.assign(count, 0);
  if (program_.output < 0 || size_t(program_.output) >= count)
    throw UserError(format_error(Span{}, "the program has no output s-op; end it with an expression "
                                         "statement such as `hist;`"));
  const Node& out = program_.node(program_.output);
  if (out.is_selector())
    fail_at(out.span, "the output is a selector, not an s-op; aggregate it or take its selector_width");

  std::vector<uint8_t> needed(count, 0);
  needed[size_t(program_.output)] = 1;
  for (size_t id = count; id-- > 0;) {
    if (!needed[id]) continue;
    for (NodeId input : program_.nodes[id].inputs) needed[size_t(input)] = 1;
  }
  for (size_t id = 0; id < count; ++id) {
    if (needed[id])
      needed_.push_back(NodeId(id));
    else
      unneeded_.push_back(NodeId(id));
  }
}

std::vector<Value> Interpreter::run(const std::vector<Value>& input, Trace* trace) {
  const int n = int(input.size());
  std::fill(evaluated_.begin(), evaluated_.end(), 0);
  for (NodeId id : needed_) evaluate(id, input, n);

  if (trace) {
    // The trace shows every node, including those the output does not need. Such a node may be
    // undefined on this input (a mean over strings nobody reads); it is then left empty, with
    // everything built on it, rather than failing a run whose output is fine.
    for (NodeId id : unneeded_) {
      const Node& node = program_.node(id);
      bool inputs_ready = std::all_of(node.inputs.begin(), node.inputs.end(),
                                      [&](NodeId input) { return evaluated_[size_t(input)] != 0; });
      if (!inputs_ready) continue;
      try {
        evaluate(id, input, n);
      } catch (const UserError&) {
        evaluated_[size_t(id)] = 0;
      }
    }
    const size_t count = program_.nodes.size();
    trace->sop.assign(count, {});
    trace->selector.assign(count, {});
    for (size_t id = 0; id < count; ++id) {
      if (!evaluated_[id]) continue;
      if (program_.nodes[id].is_selector())
        trace->selector[id] = selector_[id];
      else
        trace->sop[id] = sop_[id];
    }
  }
  return sop_[size_t(program_.output)];
}

const std::vector<Value>& Interpreter::last_value(NodeId id) const {
  if (id < 0 || size_t(id) >= program_.nodes.size() || program_.node(id).is_selector() ||
      !evaluated_[size_t(id)])
    throw std::logic_error("Interpreter::last_value: node " + std::to_string(id) +
                           " is not an s-op evaluated by the last run (the output does not depend on it; "
                           "pass a Trace to evaluate every node)");
  return sop_[size_t(id)];
}

void Interpreter::set_override(NodeId id, std::vector<Value> values) {
  if (id < 0 || size_t(id) >= program_.nodes.size() || program_.node(id).is_selector())
    throw std::logic_error("Interpreter::set_override: node " + std::to_string(id) + " is not an s-op");
  overrides_[id] = std::move(values);
}

void Interpreter::evaluate(NodeId id, const std::vector<Value>& input, int n) {
  const Node& node = program_.node(id);
  if (auto it = overrides_.empty() ? overrides_.end() : overrides_.find(id); it != overrides_.end()) {
    if (it->second.size() != size_t(n))
      throw std::logic_error("Interpreter: an override of " + std::to_string(it->second.size()) +
                             " values on an input of length " + std::to_string(n));
    sop_[size_t(id)] = it->second;
    evaluated_[size_t(id)] = 1;
    return;
  }
  const bool causal = mode_ == Mode::Causal;
  switch (node.kind) {
    case NodeKind::Tokens:
      sop_[size_t(id)].assign(input.begin(), input.end());
      break;
    case NodeKind::Indices: {
      auto& out = sop_[size_t(id)];
      out.resize(size_t(n));
      for (int q = 0; q < n; ++q) out[size_t(q)] = number_value(q, 1);
      break;
    }
    case NodeKind::Constant:
      sop_[size_t(id)].assign(size_t(n), node.constant);
      break;
    case NodeKind::Elementwise:
      evaluate_elementwise(node, sop_[size_t(id)], n);
      break;
    case NodeKind::Aggregate:
      evaluate_aggregate(node, sop_[size_t(id)], n);
      break;
    case NodeKind::SelectorWidth: {
      const auto& matrix = selector_[size_t(node.inputs[0])];
      auto& out = sop_[size_t(id)];
      out.resize(size_t(n));
      for (int q = 0; q < n; ++q) {
        out[size_t(q)] = number_value(selected_in(matrix.data() + size_t(q) * size_t(n), n), 1);
      }
      break;
    }
    case NodeKind::Construction: {
      std::vector<ConstructionInput> inputs;
      for (NodeId in : node.inputs) {
        if (program_.node(in).is_selector()) inputs.push_back({&selector_[size_t(in)], nullptr});
        else inputs.push_back({nullptr, &sop_[size_t(in)]});
      }
      sop_[size_t(id)] = node.construction->evaluate(inputs, n);
      break;
    }
    case NodeKind::Select: {
      const auto& keys = sop_[size_t(node.inputs[0])];
      const auto& queries = sop_[size_t(node.inputs[1])];
      auto& matrix = selector_[size_t(id)];
      matrix.resize(size_t(n) * size_t(n));
      int q = 0;
      try {
        uint8_t* m = matrix.data();
        switch (node.comparison) {
          case Comparison::Eq: fill_selector<Comparison::Eq>(keys, queries, m, n, causal, node.span, q); break;
          case Comparison::Ne: fill_selector<Comparison::Ne>(keys, queries, m, n, causal, node.span, q); break;
          case Comparison::Lt: fill_selector<Comparison::Lt>(keys, queries, m, n, causal, node.span, q); break;
          case Comparison::Gt: fill_selector<Comparison::Gt>(keys, queries, m, n, causal, node.span, q); break;
          case Comparison::Le: fill_selector<Comparison::Le>(keys, queries, m, n, causal, node.span, q); break;
          case Comparison::Ge: fill_selector<Comparison::Ge>(keys, queries, m, n, causal, node.span, q); break;
        }
      } catch (const UndefinedOnInput&) {
        throw;
      } catch (const UserError& error) {
        throw UndefinedOnInput(error.what() + position_note(q), q);
      }
      break;
    }
    case NodeKind::SelectAnd:
    case NodeKind::SelectOr: {
      const auto& a = selector_[size_t(node.inputs[0])];
      const auto& b = selector_[size_t(node.inputs[1])];
      auto& matrix = selector_[size_t(id)];
      matrix.resize(size_t(n) * size_t(n));
      // Through plain pointers: a byte store through the vectors may alias their own pointers, so
      // indexing them reloads the pointers at every byte and the loop cannot be vectorised.
      const uint8_t* pa = a.data();
      const uint8_t* pb = b.data();
      uint8_t* out = matrix.data();
      const size_t count = matrix.size();
      if (node.kind == NodeKind::SelectAnd)
        for (size_t i = 0; i < count; ++i) out[i] = pa[i] & pb[i];
      else
        for (size_t i = 0; i < count; ++i) out[i] = pa[i] | pb[i];
      break;
    }
    case NodeKind::SelectNot: {
      const auto& a = selector_[size_t(node.inputs[0])];
      auto& matrix = selector_[size_t(id)];
      matrix.resize(size_t(n) * size_t(n));
      const uint8_t* pa = a.data();
      uint8_t* out = matrix.data();  // plain pointers, as for SelectAnd
      for (int q = 0; q < n; ++q) {
        const size_t row = size_t(q) * size_t(n);
        // In causal mode a key after the query stays unselected even under `not`.
        const int visible = causal ? q + 1 : n;
        for (int k = 0; k < n; ++k) out[row + size_t(k)] = uint8_t(k < visible && !pa[row + size_t(k)]);
      }
      break;
    }
  }
  evaluated_[size_t(id)] = 1;
}

void Interpreter::evaluate_elementwise(const Node& node, std::vector<Value>& out, int n) {
  out.resize(size_t(n));
  const size_t arity = node.inputs.size();
  // Three inputs at most in the language; the compiler's tuples (ElementOp::Tuple) may have more.
  std::vector<const std::vector<Value>*> columns(arity);
  for (size_t i = 0; i < arity; ++i) columns[i] = &sop_[size_t(node.inputs[i])];
  std::vector<Value> args(std::max<size_t>(arity, 1));
  int q = 0;
  try {
    for (; q < n; ++q) {
      for (size_t i = 0; i < arity; ++i) args[i] = (*columns[i])[size_t(q)];
      out[size_t(q)] = apply_elementwise(node, args.data());
    }
  } catch (const UndefinedOnInput&) {
    throw;
  } catch (const UserError& error) {
    throw UndefinedOnInput(error.what() + position_note(q), q);
  }
}

void Interpreter::evaluate_aggregate(const Node& node, std::vector<Value>& out, int n) {
  const auto& matrix = selector_[size_t(node.inputs[0])];
  const auto& values = sop_[size_t(node.inputs[1])];
  out.resize(size_t(n));
  for (int q = 0; q < n; ++q) {
    const uint8_t* row = matrix.data() + size_t(q) * size_t(n);
    // Where one key is selected, found after the count (a branch a key was 8% of verifying sort at 64).
    const int selected = selected_in(row, n);
    if (selected == 0)
      out[size_t(q)] = node.default_value;
    else if (selected == 1)
      out[size_t(q)] = values[size_t(static_cast<const uint8_t*>(std::memchr(row, 1, size_t(n))) - row)];
    else
      out[size_t(q)] = mean_of_selected(node, row, values, n, selected, q);
  }
}

// The exact mean of the selected values (numbers, and bools as 0/1), as a reduced rational. The
// sum runs in __int128 while the values are small rationals and the partial sums fit it; past
// that (or on a big value), it starts again in exact rationals of any size.
Value Interpreter::mean_of_selected(const Node& node, const uint8_t* row, const std::vector<Value>& values,
                                    int n, int selected, int q) const {
  __int128 num = 0;
  __int128 den = 1;
  for (int k = 0; k < n; ++k) {
    if (!row[k]) continue;
    const Value& v = values[size_t(k)];
    if (v.kind == ValueKind::String) fail_mean_of_strings(node, row, values, n, selected, q);
    const int64_t v_num = v.kind == ValueKind::Bool ? int64_t(v.boolean) : v.number.num;
    const int64_t v_den = v.kind == ValueKind::Bool ? 1 : v.number.den;
    if (v_den == 0) return exact_mean(node, row, values, n, selected, q);  // a big value
    if (v_den == den) {
      num += v_num;  // at most n * 2^63 in magnitude: no overflow
    } else {
      // Cross-multiplying needs both partial terms below 2^63 in magnitude to stay inside __int128.
      if (num > kInt64Max || num < -kInt64Max || den > kInt64Max) return exact_mean(node, row, values, n, selected, q);
      num = num * v_den + __int128(v_num) * den;
      den *= v_den;
      __int128 g = gcd128(num, den);
      if (g > 1) {
        num /= g;
        den /= g;
      }
    }
  }
  if (den > kInt64Max) return exact_mean(node, row, values, n, selected, q);
  den *= selected;
  __int128 g = gcd128(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
  if (num > kInt64Max || num < -kInt64Max || den > kInt64Max) return exact_mean(node, row, values, n, selected, q);
  return number_value(int64_t(num), int64_t(den));
}

Value Interpreter::exact_mean(const Node& node, const uint8_t* row, const std::vector<Value>& values, int n,
                              int selected, int q) const {
  try {
    Rational sum = Rational::integer(0);
    for (int k = 0; k < n; ++k) {
      if (!row[k]) continue;
      const Value& v = values[size_t(k)];
      if (v.kind == ValueKind::String) fail_mean_of_strings(node, row, values, n, selected, q);
      sum = sum + (v.kind == ValueKind::Bool ? Rational::integer(v.boolean) : v.number);
    }
    return Value::of_number(sum / Rational::integer(selected));
  } catch (const RationalTooLarge& error) {
    throw UndefinedOnInput(format_error(node.span, "the mean at position " + std::to_string(q) + ": " + error.what()),
                           q);
  }
}

void Interpreter::fail_mean_of_strings(const Node& node, const uint8_t* row, const std::vector<Value>& values,
                                       int n, int selected, int q) const {
  std::string listed;
  int shown = 0;
  for (int k = 0; k < n && shown < 4; ++k) {
    if (!row[k]) continue;
    listed += (shown ? ", " : "") + to_source(values[size_t(k)]);
    ++shown;
  }
  if (selected > shown) listed += ", ...";
  throw UndefinedOnInput(
      format_error(node.span, "at position " + std::to_string(q) + " this aggregate selects " +
                                  std::to_string(selected) + " positions and would average their values (" +
                                  listed + "), but a mean needs numbers; make the selector pick at most one "
                                           "position there, or aggregate a numeric s-op"),
      q);
}

}  // namespace raspc
