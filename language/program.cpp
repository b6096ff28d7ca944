#include "language/program.hpp"

#include <cstdlib>
#include <numeric>

namespace raspc {

NodeId Program::find(const std::string& name) const {
  for (const auto& [bound, id] : named)
    if (bound == name) return id;
  return -1;
}

std::string Program::label(NodeId id) const {
  const Node& n = node(id);
  if (!n.name.empty()) return n.name;
  if (!n.local_name.empty()) return n.local_name + "#" + std::to_string(id);
  const char* kind = "node";
  switch (n.kind) {
    case NodeKind::Tokens: kind = "tokens"; break;
    case NodeKind::Indices: kind = "indices"; break;
    case NodeKind::Constant: kind = "constant"; break;
    case NodeKind::Elementwise: kind = "map"; break;
    case NodeKind::Aggregate: kind = "aggregate"; break;
    case NodeKind::SelectorWidth: kind = "selector_width"; break;
    case NodeKind::Select: kind = "select"; break;
    case NodeKind::SelectAnd: kind = "select_and"; break;
    case NodeKind::SelectOr: kind = "select_or"; break;
    case NodeKind::SelectNot: kind = "select_not"; break;
  }
  return std::string(kind) + "#" + std::to_string(id);
}

namespace {

// Exact rational arithmetic; every result is reduced and checked to fit int64.
Rational make_rational(__int128 num, __int128 den, const Span& where) {
  if (den == 1 && num <= INT64_MAX && num >= -INT64_MAX) return {int64_t(num), 1};  // the common case
  if (den < 0) num = -num, den = -den;
  __int128 a = num < 0 ? -num : num, b = den;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) num /= a, den /= a;
  if (num > INT64_MAX || num < -INT64_MAX || den > INT64_MAX)
    fail_at(where, "the value of this expression overflows 64-bit integers");
  return {int64_t(num), int64_t(den)};
}

const char* kind_name(const Value& v) {
  switch (v.kind) {
    case ValueKind::Number: return "a number";
    case ValueKind::Bool: return "a boolean";
    case ValueKind::String: return "a string";
  }
  return "a value";
}

// Python treats bools as the ints 0 and 1 in arithmetic.
bool numeric(const Value& v, Rational& out) {
  if (v.is_number()) return out = v.number, true;
  if (v.is_bool()) return out = Rational::integer(v.boolean), true;
  return false;
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case ValueKind::Number: return v.number.num != 0;
    case ValueKind::Bool: return v.boolean;
    case ValueKind::String: return !v.string().empty();
  }
  return false;
}

[[noreturn]] void type_error(const char* verb, const char* joiner, const Value& a, const Value& b, const Span& where) {
  fail_at(where, std::string("cannot ") + verb + " " + kind_name(a) + " " + joiner + " " + kind_name(b));
}

int64_t floor_div(__int128 num, __int128 den) {  // den > 0
  __int128 q = num / den;
  if ((num % den != 0) && (num < 0)) --q;
  return int64_t(q);
}

Rational round_half_even(const Rational& q) {
  __int128 floor = floor_div(q.num, q.den);
  __int128 twice_remainder = 2 * (__int128(q.num) - floor * q.den);  // in [0, 2*den)
  __int128 result = floor;
  if (twice_remainder > q.den || (twice_remainder == q.den && (floor % 2 != 0))) result = floor + 1;
  return Rational::integer(int64_t(result));
}

Rational power(const Rational& base, const Rational& exponent, const Span& where) {
  if (!exponent.is_integer())
    fail_at(where, "cannot raise a number to a fractional power exactly; use an integer exponent");
  int64_t e = exponent.num;
  if (base.num == 0 && e < 0) fail_at(where, "cannot raise zero to a negative power (division by zero)");
  Rational b = base;
  if (e < 0) {
    b = make_rational(b.den, b.num, where);
    e = -e;
  }
  if (b.num == 0 || b == Rational::integer(1)) return e == 0 ? Rational::integer(1) : b;
  if (b == Rational::integer(-1)) return Rational::integer(e % 2 == 0 ? 1 : -1);
  if (e > 126) fail_at(where, "the value of this expression overflows 64-bit integers");
  Rational result = Rational::integer(1);
  for (int64_t i = 0; i < e; ++i)
    result = make_rational(__int128(result.num) * b.num, __int128(result.den) * b.den, where);
  return result;
}

int compare_ordered(const Value& a, const Value& b, const Span& where) {
  Rational x, y;
  if (numeric(a, x) && numeric(b, y)) {
    __int128 l = __int128(x.num) * y.den, r = __int128(y.num) * x.den;
    return l < r ? -1 : (l > r ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) return a.string().compare(b.string());
  type_error("compare", "and", a, b, where);
}

Value arithmetic(ElementOp op, const Value& a, const Value& b, const Span& where) {
  Rational x, y;
  bool both_numeric = numeric(a, x) && numeric(b, y);
  switch (op) {
    case ElementOp::Add:
      if (both_numeric)
        return Value::of_number(make_rational(__int128(x.num) * y.den + __int128(y.num) * x.den,
                                              __int128(x.den) * y.den, where));
      if (a.is_string() && b.is_string()) return Value::of_string(a.string() + b.string());
      type_error("add", "and", a, b, where);
    case ElementOp::Sub:
      if (both_numeric)
        return Value::of_number(make_rational(__int128(x.num) * y.den - __int128(y.num) * x.den,
                                              __int128(x.den) * y.den, where));
      type_error("subtract", "from", b, a, where);
    case ElementOp::Mul:
      if (both_numeric)
        return Value::of_number(make_rational(__int128(x.num) * y.num, __int128(x.den) * y.den, where));
      {
        // Python repeats a string by an integer count.
        const Value* text = a.is_string() ? &a : (b.is_string() ? &b : nullptr);
        const Value* count = a.is_string() ? &b : &a;
        Rational n;
        if (text && numeric(*count, n) && n.is_integer()) {
          if (n.num > (1 << 20) || n.num * int64_t(text->string().size()) > (1 << 20))
            fail_at(where, "this string repetition is longer than a million characters");
          std::string repeated;
          for (int64_t i = 0; i < n.num; ++i) repeated += text->string();
          return Value::of_string(repeated);
        }
      }
      type_error("multiply", "and", a, b, where);
    case ElementOp::Div:
      if (both_numeric) {
        if (y.num == 0) fail_at(where, "division by zero");
        return Value::of_number(make_rational(__int128(x.num) * y.den, __int128(x.den) * y.num, where));
      }
      type_error("divide", "by", a, b, where);
    case ElementOp::Mod:
      if (both_numeric) {
        if (y.num == 0) fail_at(where, "modulo by zero");
        // Python's %: the result has the divisor's sign. x - y * floor(x / y), exactly.
        __int128 qn = __int128(x.num) * y.den, qd = __int128(x.den) * y.num;
        if (qd < 0) qn = -qn, qd = -qd;
        __int128 floor = qn / qd;
        if (qn % qd != 0 && qn < 0) --floor;
        Rational f = make_rational(floor, 1, where);
        Rational product = make_rational(__int128(y.num) * f.num, y.den, where);
        return Value::of_number(make_rational(__int128(x.num) * product.den - __int128(product.num) * x.den,
                                              __int128(x.den) * product.den, where));
      }
      type_error("take the remainder of", "by", a, b, where);
    case ElementOp::Pow:
      if (both_numeric) return Value::of_number(power(x, y, where));
      type_error("raise", "to the power of", a, b, where);
    default: break;
  }
  return Value();
}

// A tuple is a string, not a new kind of Value: it only ever needs equality (it is a categorical
// s-op's value and a lookup table's key), which strings have; it prints readably in residual
// labels, and the 24-byte Value stays as it is. Strings are quoted with `"` and `\` escaped and
// other values printed bare, so different combinations never give the same string. Nothing parses
// it back: the compiler keeps each tuple value's parts (pair_selectors.cpp).
Value tuple_of(const Value* in, size_t arity) {
  std::string text = "(";
  for (size_t i = 0; i < arity; ++i) {
    if (i) text += ", ";
    if (!in[i].is_string()) {
      text += to_display(in[i]);
      continue;
    }
    text += '"';
    for (char c : in[i].string()) {
      if (c == '"' || c == '\\') text += '\\';
      text += c;
    }
    text += '"';
  }
  return Value::of_string(text + ")");
}

}  // namespace

Value apply_elementwise(const Node& node, const Value* in) {
  const Span& where = node.span;
  switch (node.op) {
    case ElementOp::Neg:
    case ElementOp::Pos: {
      Rational x;
      if (!numeric(in[0], x))
        fail_at(where, std::string("cannot ") + (node.op == ElementOp::Neg ? "negate " : "apply unary + to ") +
                           kind_name(in[0]));
      if (node.op == ElementOp::Neg) x.num = -x.num;
      return Value::of_number(x);
    }
    case ElementOp::Not: return Value::of_bool(!truthy(in[0]));
    case ElementOp::Round: {
      Rational x;
      if (!numeric(in[0], x)) fail_at(where, std::string("cannot round ") + kind_name(in[0]));
      return Value::of_number(round_half_even(x));
    }
    case ElementOp::Indicator: return Value::of_int(truthy(in[0]) ? 1 : 0);
    case ElementOp::Add:
    case ElementOp::Sub:
    case ElementOp::Mul:
    case ElementOp::Div:
    case ElementOp::Mod:
    case ElementOp::Pow: return arithmetic(node.op, in[0], in[1], where);
    case ElementOp::Eq: return Value::of_bool(in[0] == in[1]);
    case ElementOp::Lt: return Value::of_bool(compare_ordered(in[0], in[1], where) < 0);
    case ElementOp::Gt: return Value::of_bool(compare_ordered(in[0], in[1], where) > 0);
    case ElementOp::Le: return Value::of_bool(compare_ordered(in[0], in[1], where) <= 0);
    case ElementOp::Ge: return Value::of_bool(compare_ordered(in[0], in[1], where) >= 0);
    // Python's `and`/`or` return one of their operands, not a bool.
    case ElementOp::And: return truthy(in[0]) ? in[1] : in[0];
    case ElementOp::Or: return truthy(in[0]) ? in[0] : in[1];
    case ElementOp::InTable:
      for (const Value& key : node.table_keys)
        if (key == in[0]) return Value::of_bool(true);
      return Value::of_bool(false);
    case ElementOp::LookupTable:
      for (size_t i = 0; i < node.table_keys.size(); ++i)
        if (node.table_keys[i] == in[0]) return node.table_values[i];
      fail_at(where, "the table has no entry for " + to_source(in[0]));
    case ElementOp::IfElse: return truthy(in[1]) ? in[0] : in[2];
    case ElementOp::Tuple: return tuple_of(in, node.inputs.size());
  }
  return Value();
}

bool compare_select(Comparison cmp, const Value& key, const Value& query, const Span& where) {
  switch (cmp) {
    case Comparison::Eq: return key == query;
    case Comparison::Ne: return !(key == query);
    case Comparison::Lt: return compare_ordered(key, query, where) < 0;
    case Comparison::Gt: return compare_ordered(key, query, where) > 0;
    case Comparison::Le: return compare_ordered(key, query, where) <= 0;
    case Comparison::Ge: return compare_ordered(key, query, where) >= 0;
  }
  return false;
}

}  // namespace raspc
