#include "language/program.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace raspc {

NodeId Program::find(const std::string& name) const {
  for (const auto& [bound, id] : named)
    if (bound == name) return id;
  return -1;
}

bool Program::named_in_source(NodeId id) const {
  const Node& n = node(id);
  if (!n.name.empty() && (!n.span.valid() || n.span.file->name == kLibraryFileName)) return true;
  return std::any_of(named.begin(), named.end(), [&](const auto& entry) { return entry.second == id; });
}

namespace {

// A node's expression on one line (runs of white space as one space), cut where it runs long.
std::string one_line(const std::string& source) {
  std::string text;
  for (const char c : source) {
    const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space && (text.empty() || text.back() == ' ')) continue;
    text += space ? ' ' : c;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  constexpr size_t kLongest = 60;
  if (text.size() > kLongest) {
    size_t cut = kLongest;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a code point
    text = text.substr(0, cut) + "...";
  }
  return text;
}

std::string detail_of(const Node& n) { return n.kind == NodeKind::Construction ? n.construction->detail() : n.detail; }

}  // namespace

std::string Program::source_of(NodeId id) const {
  const Node& n = node(id);
  const std::string detail = detail_of(n);
  const std::string more = detail.empty() ? "" : ", " + detail;
  if (!n.span.valid()) return "`" + label(id) + "`" + more;
  const SourceExcerpt excerpt = excerpt_of(n.span);
  return "`" + one_line(excerpt.text) + "` at " + excerpt.file + ":" + std::to_string(excerpt.at.line) + ":" +
         std::to_string(excerpt.at.column) + more;
}

std::string Program::describe(NodeId id) const {
  if (named_in_source(id)) return "`" + label(id) + "`";
  const Node& n = node(id);
  if (!n.local_name.empty()) return "`" + n.local_name + "` (" + source_of(id) + ")";
  return source_of(id);
}

std::string Program::shown_name(NodeId id) const {
  // The program's own name first: `n_tokens = length;` shows `n_tokens`, not the library's name.
  for (const auto& [name, named_id] : named)
    if (named_id == id) return name;
  const Node& n = node(id);
  if (named_in_source(id) || !n.span.valid()) return label(id);
  if (!n.local_name.empty()) return n.local_name;
  const std::string detail = detail_of(n);
  return one_line(excerpt_of(n.span).text) + (detail.empty() ? "" : ", " + detail);
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
    case NodeKind::Construction: kind = n.construction->kind_name(); break;
  }
  return std::string(kind) + "#" + std::to_string(id);
}

namespace {

// Runs exact arithmetic, turning a result too large to hold into a UserError at `where`.
template <class Body>
Rational exactly(const Span& where, Body&& body) {
  try {
    return body();
  } catch (const RationalTooLarge& error) {
    fail_at(where, error.what());
  }
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
    case ValueKind::Number: return !v.number.is_zero();
    case ValueKind::Bool: return v.boolean;
    case ValueKind::String: return !v.string().empty();
  }
  return false;
}

[[noreturn]] void type_error(const char* verb, const char* joiner, const Value& a, const Value& b, const Span& where) {
  fail_at(where, std::string("cannot ") + verb + " " + kind_name(a) + " " + joiner + " " + kind_name(b));
}

Rational power(const Rational& base, const Rational& exponent, const Span& where) {
  int64_t e = 0;
  if (!exponent.is_integer())
    fail_at(where, "cannot raise a number to a fractional power exactly; use an integer exponent");
  if (base.is_zero() && exponent.sign() < 0) fail_at(where, "cannot raise zero to a negative power (division by zero)");
  if (!exponent.to_int64(e)) {
    // An exponent beyond int64: only 0, 1 and -1 have a power that can be held.
    if (base.is_zero() || base == Rational::integer(1)) return base;
    if (base == Rational::integer(-1)) {
      const std::string digits = exponent.numerator();
      return Rational::integer((digits.back() - '0') % 2 == 0 ? 1 : -1);
    }
    fail_at(where, RationalTooLarge().what());
  }
  return exactly(where, [&] { return raspc::power(base, e); });
}

int compare_ordered(const Value& a, const Value& b, const Span& where) {
  Rational x, y;
  if (numeric(a, x) && numeric(b, y)) return compare(x, y);
  if (a.is_string() && b.is_string()) return a.string().compare(b.string());
  type_error("compare", "and", a, b, where);
}

Value arithmetic(ElementOp op, const Value& a, const Value& b, const Span& where) {
  Rational x, y;
  bool both_numeric = numeric(a, x) && numeric(b, y);
  switch (op) {
    case ElementOp::Add:
      if (both_numeric) return Value::of_number(exactly(where, [&] { return x + y; }));
      if (a.is_string() && b.is_string()) return Value::of_string(a.string() + b.string());
      type_error("add", "and", a, b, where);
    case ElementOp::Sub:
      if (both_numeric) return Value::of_number(exactly(where, [&] { return x - y; }));
      type_error("subtract", "from", b, a, where);
    case ElementOp::Mul:
      if (both_numeric) return Value::of_number(exactly(where, [&] { return x * y; }));
      {
        // Python repeats a string by an integer count.
        const Value* text = a.is_string() ? &a : (b.is_string() ? &b : nullptr);
        const Value* count = a.is_string() ? &b : &a;
        Rational n;
        if (text && numeric(*count, n) && n.is_integer()) {
          int64_t times = 0;
          if (!n.to_int64(times) || times > (1 << 20) || times * int64_t(text->string().size()) > (1 << 20))
            fail_at(where, "this string repetition is longer than a million characters");
          std::string repeated;
          for (int64_t i = 0; i < times; ++i) repeated += text->string();
          return Value::of_string(repeated);
        }
      }
      type_error("multiply", "and", a, b, where);
    case ElementOp::Div:
      if (both_numeric) {
        if (y.is_zero()) fail_at(where, "division by zero");
        return Value::of_number(exactly(where, [&] { return x / y; }));
      }
      type_error("divide", "by", a, b, where);
    case ElementOp::Mod:
      if (both_numeric) {
        if (y.is_zero()) fail_at(where, "modulo by zero");
        // Python's %: the result has the divisor's sign. x - y * floor(x / y), exactly.
        return Value::of_number(exactly(where, [&] { return x - y * floor(x / y); }));
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
      if (node.op == ElementOp::Neg) x = exactly(where, [&] { return -x; });
      return Value::of_number(x);
    }
    case ElementOp::Not: return Value::of_bool(!truthy(in[0]));
    case ElementOp::Round: {
      Rational x;
      if (!numeric(in[0], x)) fail_at(where, std::string("cannot round ") + kind_name(in[0]));
      return Value::of_number(exactly(where, [&] { return round_half_even(x); }));
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
