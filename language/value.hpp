// Atom values of RASP: exact numbers, booleans and strings.
//
// Numbers are exact rationals of any size, so means such as k/n compare and round exactly
// (round((indices+1) * mean) is never off by float error), and a float that a Tracr program
// computes (3 * 0.00001 is 4427218577690293 / 2^67) is held as the exact binary value it is. A
// literal 1.5 is the rational 3/2. Arithmetic that cannot be exact (2 ^ 0.5) is a UserError at the
// expression that caused it.
// Values stay 24 trivially-copyable bytes, which keeps the interpreter (the trainer's label
// source) fast: a number whose reduced numerator and denominator fit int64 is stored as them (the
// small form, all the hot paths read); any other is a GMP rational interned in a table that lives
// until exit, as strings are, and stored as its index (the big form). Every value has exactly one
// form, so equality and hashing compare the fields.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace raspc {

struct Rational {
  int64_t num = 0;  // small form: the reduced numerator; big form: the index of the interned value
  int64_t den = 1;  // small form: the denominator (>= 1); 0 marks the big form

  static Rational integer(int64_t n) { return n == INT64_MIN ? of(n, 1) : Rational{n, 1}; }
  // num/den reduced (den != 0; any sign), in the form it fits.
  static Rational of(int64_t num, int64_t den);
  // A decimal numerator and denominator ("-12", "7"), of any size; den must not be "0".
  static Rational of_decimal(std::string_view num, std::string_view den);

  bool is_big() const { return den == 0; }
  bool is_integer() const;
  bool is_zero() const { return den != 0 && num == 0; }
  int sign() const;
  // The value as an int64 where it is an integer that fits one (the small form's integers).
  bool to_int64(int64_t& out) const {
    if (den != 1) return false;
    out = num;
    return true;
  }
  double to_double() const;
  std::string numerator() const;    // in decimal, with its sign
  std::string denominator() const;  // in decimal, >= 1
  std::string to_string() const;    // "12", "-1/3", in full whatever the size
  friend bool operator==(const Rational&, const Rational&) = default;
};

// A result whose numerator or denominator would need more than kMaxRationalBits bits: no program
// means that, and a loop that squares a number would otherwise exhaust the memory.
constexpr long kMaxRationalBits = 1 << 16;
struct RationalTooLarge : std::runtime_error {
  RationalTooLarge() : std::runtime_error("the value of this expression has more than 65,536 bits") {}
};

// Exact arithmetic; each may throw RationalTooLarge. Division by zero is the caller's to refuse.
Rational operator+(const Rational& a, const Rational& b);
Rational operator-(const Rational& a, const Rational& b);
Rational operator*(const Rational& a, const Rational& b);
Rational operator/(const Rational& a, const Rational& b);
Rational operator-(const Rational& a);
int compare(const Rational& a, const Rational& b);  // -1, 0, 1
Rational floor(const Rational& q);
Rational round_half_even(const Rational& q);
Rational power(const Rational& base, int64_t exponent);  // base != 0 when exponent < 0
// "12", "-3/4" (the interpreter's display form) as a rational; false for anything else.
bool parse_rational(std::string_view text, Rational& out);

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

// How a value is printed in outputs and expect lines: integers as 12, other rationals as 1/3 (in
// full, whatever their size),
// bools as True/False, strings as their text (no quotes).
std::string to_display(const Value& v);
// How a value is written in RASP source and error messages: strings quoted, e.g. "a".
std::string to_source(const Value& v);

}  // namespace raspc
