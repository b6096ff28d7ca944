// Atom values of RASP: exact numbers, booleans and strings.
//
// Numbers are exact rationals (int64 numerator and denominator, always reduced, denominator > 0),
// so means such as k/n compare and round exactly: round((indices+1) * mean) is never off by
// float error. A literal 1.5 is the rational 3/2. Arithmetic that overflows int64 or cannot be
// exact (2 ^ 0.5) is a UserError at the expression that caused it, never a silent wrap.
// Strings are interned: a Value is 24 trivially-copyable bytes, which keeps the interpreter
// (the trainer's label source) fast.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace raspc {

struct Rational {
  int64_t num = 0;
  int64_t den = 1;

  static Rational integer(int64_t n) { return {n, 1}; }
  bool is_integer() const { return den == 1; }
  double to_double() const { return double(num) / double(den); }
  friend bool operator==(const Rational&, const Rational&) = default;
};

enum class ValueKind : uint8_t { Number, Bool, String };

struct Value {
  ValueKind kind = ValueKind::Number;
  bool boolean = false;    // kind == Bool
  uint32_t string_id = 0;  // kind == String: index into the global string table
  Rational number;         // kind == Number

  static Value of_number(Rational q);
  static Value of_int(int64_t n) { return of_number(Rational::integer(n)); }
  static Value of_bool(bool b);
  static Value of_string(std::string_view s);  // interns s

  bool is_number() const { return kind == ValueKind::Number; }
  bool is_bool() const { return kind == ValueKind::Bool; }
  bool is_string() const { return kind == ValueKind::String; }
  const std::string& string() const;  // kind == String

  // Exact equality with Python's meaning for mixed kinds: True == 1, "1" != 1.
  friend bool operator==(const Value& a, const Value& b);
};

// A strict weak order over all values (numbers, then bools, then strings; numbers by value),
// used for value sets and for sorting them deterministically. Not Python's `<`.
bool value_less(const Value& a, const Value& b);
struct ValueLess {
  bool operator()(const Value& a, const Value& b) const { return value_less(a, b); }
};
struct ValueHash {
  size_t operator()(const Value& v) const;
};

// How a value is printed in outputs and expect lines: integers as 12, other rationals as 1/3,
// bools as True/False, strings as their text (no quotes).
std::string to_display(const Value& v);
// How a value is written in RASP source and error messages: strings quoted, e.g. "a".
std::string to_source(const Value& v);

}  // namespace raspc
