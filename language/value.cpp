#include "language/value.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include <gmpxx.h>

namespace raspc {

namespace {

// The global string table. Interning happens while programs and inputs are read, possibly from
// several threads; reading a string back happens in the interpreter's inner loop. Strings live in
// fixed-size chunks that never move, so readers take no lock.
class StringTable {
 public:
  uint32_t intern(std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = ids_.find(std::string(text));
    if (found != ids_.end()) return found->second;
    uint32_t id = count_.load(std::memory_order_relaxed);
    size_t chunk = id >> kChunkBits;
    if (chunk >= kMaxChunks) throw std::length_error("the string table is full");
    if (!chunks_[chunk]) chunks_[chunk] = std::make_unique<std::string[]>(size_t(1) << kChunkBits);
    chunks_[chunk][id & kChunkMask] = std::string(text);
    ids_.emplace(std::string(text), id);
    count_.store(id + 1, std::memory_order_release);
    return id;
  }
  const std::string& get(uint32_t id) const { return chunks_[id >> kChunkBits][id & kChunkMask]; }

 private:
  static constexpr uint32_t kChunkBits = 12;
  static constexpr uint32_t kChunkMask = (1u << kChunkBits) - 1;
  static constexpr size_t kMaxChunks = 1 << 16;
  std::mutex mutex_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::array<std::unique_ptr<std::string[]>, kMaxChunks> chunks_;
  std::atomic<uint32_t> count_{0};
};

StringTable& string_table() {
  static StringTable* table = new StringTable();  // never destroyed: values may outlive statics
  return *table;
}

// The interned big rationals: values that do not fit the small form, each stored once. Like the
// strings, they live in fixed-size chunks that never move, so reading one takes no lock.
class BigTable {
 public:
  int64_t intern(const mpq_class& q) {
    std::string key = q.get_str(32);
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = ids_.find(key);
    if (found != ids_.end()) return found->second;
    uint32_t id = count_.load(std::memory_order_relaxed);
    size_t chunk = id >> kChunkBits;
    if (chunk >= kMaxChunks) throw std::length_error("the table of large numbers is full");
    if (!chunks_[chunk]) chunks_[chunk] = std::make_unique<mpq_class[]>(size_t(1) << kChunkBits);
    chunks_[chunk][id & kChunkMask] = q;
    ids_.emplace(std::move(key), id);
    count_.store(id + 1, std::memory_order_release);
    return id;
  }
  const mpq_class& get(int64_t id) const { return chunks_[size_t(id) >> kChunkBits][size_t(id) & kChunkMask]; }

 private:
  static constexpr uint32_t kChunkBits = 10;
  static constexpr uint32_t kChunkMask = (1u << kChunkBits) - 1;
  static constexpr size_t kMaxChunks = 1 << 16;
  std::mutex mutex_;
  std::unordered_map<std::string, int64_t> ids_;
  std::array<std::unique_ptr<mpq_class[]>, kMaxChunks> chunks_;
  std::atomic<uint32_t> count_{0};
};

BigTable& big_table() {
  static BigTable* table = new BigTable();  // never destroyed: values may outlive statics
  return *table;
}

mpz_class mpz_of(__int128 v) {
  const bool negative = v < 0;
  unsigned __int128 magnitude = negative ? -(unsigned __int128)v : (unsigned __int128)v;
  const uint64_t words[2] = {uint64_t(magnitude >> 64), uint64_t(magnitude)};
  mpz_class z;
  mpz_import(z.get_mpz_t(), 2, 1, sizeof(uint64_t), 0, 0, words);
  return negative ? mpz_class(-z) : z;
}

mpq_class mpq_of(const Rational& q) {
  if (q.is_big()) return big_table().get(q.num);
  mpq_class r(mpz_of(__int128(q.num)), mpz_of(__int128(q.den)));
  return r;  // the small form is reduced already
}

static_assert(sizeof(long) == 8, "GMP's long is int64 here");
bool fits_int64(const mpz_class& z) { return mpz_fits_slong_p(z.get_mpz_t()) != 0; }

// A canonical (reduced) GMP rational in the one form it fits.
Rational from_mpq(const mpq_class& q) {
  const mpz_class& n = q.get_num();
  const mpz_class& d = q.get_den();
  // -2^63 is kept big: negating a small value must stay small.
  if (fits_int64(n) && fits_int64(d) && n != mpz_class(INT64_MIN)) return Rational{n.get_si(), d.get_si()};
  if (long(mpz_sizeinbase(n.get_mpz_t(), 2)) > kMaxRationalBits || long(mpz_sizeinbase(d.get_mpz_t(), 2)) > kMaxRationalBits)
    throw RationalTooLarge();
  return Rational{big_table().intern(q), 0};
}

// num/den of any size (den != 0) reduced, in the form it fits: the small paths' results.
Rational reduce(__int128 num, __int128 den) {
  if (den < 0) num = -num, den = -den;
  __int128 a = num < 0 ? -num : num, b = den;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) num /= a, den /= a;
  if (num <= INT64_MAX && num > INT64_MIN && den <= INT64_MAX) return Rational{int64_t(num), int64_t(den)};
  mpq_class q(mpz_of(num), mpz_of(den));
  return from_mpq(q);
}

}  // namespace

Rational Rational::of(int64_t num, int64_t den) {
  if (den == 1 && num != INT64_MIN) return Rational{num, 1};
  return reduce(num, den);
}

Rational Rational::of_decimal(std::string_view num, std::string_view den) {
  mpq_class q(mpz_class(std::string(num), 10), mpz_class(std::string(den), 10));
  q.canonicalize();
  return from_mpq(q);
}

bool Rational::is_integer() const { return den == 1 || (den == 0 && big_table().get(num).get_den() == 1); }

int Rational::sign() const {
  if (den != 0) return num < 0 ? -1 : (num > 0 ? 1 : 0);
  return sgn(big_table().get(num));
}

double Rational::to_double() const {
  if (den != 0) return double(num) / double(den);
  return big_table().get(num).get_d();
}

std::string Rational::numerator() const {
  if (den != 0) return std::to_string(num);
  return big_table().get(num).get_num().get_str(10);
}

std::string Rational::denominator() const {
  if (den != 0) return std::to_string(den);
  return big_table().get(num).get_den().get_str(10);
}

std::string Rational::to_string() const {
  if (den == 1) return std::to_string(num);
  if (den != 0) return std::to_string(num) + "/" + std::to_string(den);
  return big_table().get(num).get_str(10);  // "n" or "n/d", as the small form prints
}

Rational operator+(const Rational& a, const Rational& b) {
  if (!a.is_big() && !b.is_big()) {
    if (a.den == 1 && b.den == 1) return reduce(__int128(a.num) + b.num, 1);
    return reduce(__int128(a.num) * b.den + __int128(b.num) * a.den, __int128(a.den) * b.den);
  }
  return from_mpq(mpq_of(a) + mpq_of(b));
}

Rational operator-(const Rational& a, const Rational& b) {
  if (!a.is_big() && !b.is_big()) {
    if (a.den == 1 && b.den == 1) return reduce(__int128(a.num) - b.num, 1);
    return reduce(__int128(a.num) * b.den - __int128(b.num) * a.den, __int128(a.den) * b.den);
  }
  return from_mpq(mpq_of(a) - mpq_of(b));
}

Rational operator*(const Rational& a, const Rational& b) {
  if (!a.is_big() && !b.is_big()) return reduce(__int128(a.num) * b.num, __int128(a.den) * b.den);
  return from_mpq(mpq_of(a) * mpq_of(b));
}

Rational operator/(const Rational& a, const Rational& b) {
  if (!a.is_big() && !b.is_big()) return reduce(__int128(a.num) * b.den, __int128(a.den) * b.num);
  return from_mpq(mpq_of(a) / mpq_of(b));
}

Rational operator-(const Rational& a) {
  if (!a.is_big()) return Rational{-a.num, a.den};  // INT64_MIN is never small
  return from_mpq(-mpq_of(a));
}

int compare(const Rational& a, const Rational& b) {
  if (!a.is_big() && !b.is_big()) {
    __int128 left = __int128(a.num) * b.den;
    __int128 right = __int128(b.num) * a.den;
    return left < right ? -1 : (left > right ? 1 : 0);
  }
  int c = cmp(mpq_of(a), mpq_of(b));
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

Rational floor(const Rational& q) {
  if (!q.is_big()) {
    __int128 f = q.num / q.den;
    if (q.num % q.den != 0 && q.num < 0) --f;
    return reduce(f, 1);
  }
  const mpq_class& v = big_table().get(q.num);
  mpz_class f;
  mpz_fdiv_q(f.get_mpz_t(), v.get_num_mpz_t(), v.get_den_mpz_t());
  return from_mpq(mpq_class(f));
}

Rational round_half_even(const Rational& q) {
  const Rational f = floor(q);
  const Rational twice_remainder = (q - f) * Rational::integer(2);  // in [0, 2)
  const int c = compare(twice_remainder, Rational::integer(1));
  bool odd = false;
  if (c == 0) {
    int64_t small = 0;
    odd = f.to_int64(small) ? (small % 2 != 0) : mpz_odd_p(big_table().get(f.num).get_num_mpz_t()) != 0;
  }
  return (c > 0 || odd) ? f + Rational::integer(1) : f;
}

Rational power(const Rational& base, int64_t exponent) {
  if (exponent == 0) return Rational::integer(1);
  if (base.is_zero() || base == Rational::integer(1)) return base;
  if (base == Rational::integer(-1)) return Rational::integer(exponent % 2 == 0 ? 1 : -1);
  mpq_class b = mpq_of(base);
  if (exponent < 0) b = 1 / b;
  const uint64_t e = exponent < 0 ? uint64_t(-(exponent + 1)) + 1 : uint64_t(exponent);
  // |num| and den of the result have about e times the bits of the base's.
  const double bits = double(e) * double(std::max(mpz_sizeinbase(b.get_num_mpz_t(), 2), mpz_sizeinbase(b.get_den_mpz_t(), 2)));
  if (bits > double(kMaxRationalBits) + 64) throw RationalTooLarge();
  mpz_class num, den;
  mpz_pow_ui(num.get_mpz_t(), b.get_num_mpz_t(), e);
  mpz_pow_ui(den.get_mpz_t(), b.get_den_mpz_t(), e);
  return from_mpq(mpq_class(num, den));  // a power of a reduced fraction is reduced
}

bool parse_rational(std::string_view text, Rational& out) {
  const size_t slash = text.find('/');
  std::string_view num = text.substr(0, slash);
  std::string_view den = slash == std::string_view::npos ? std::string_view("1") : text.substr(slash + 1);
  auto digits = [](std::string_view t, bool sign_allowed) {
    if (sign_allowed && !t.empty() && t[0] == '-') t.remove_prefix(1);
    if (t.empty() || t.size() > 100000) return false;
    for (char c : t)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (!digits(num, true) || !digits(den, false) || den.find_first_not_of('0') == std::string_view::npos) return false;
  try {
    out = Rational::of_decimal(num, den);
  } catch (const RationalTooLarge&) {
    return false;
  }
  return true;
}


Value Value::of_number(Rational q) {
  // Keep the invariant (one form, reduced, den > 0 in the small form) that == and hashing rely
  // on; integers and big values (canonical already) skip the gcd.
  if (q.den != 1 && q.den != 0) q = Rational::of(q.num, q.den);
  Value v;
  v.kind = ValueKind::Number;
  v.number = q;
  return v;
}

Value Value::of_bool(bool b) {
  Value v;
  v.kind = ValueKind::Bool;
  v.boolean = b;
  return v;
}

Value Value::of_string(std::string_view s) {
  Value v;
  v.kind = ValueKind::String;
  v.string_id = string_table().intern(s);
  return v;
}

const std::string& Value::string() const { return string_table().get(string_id); }

bool operator==(const Value& a, const Value& b) {
  if (a.kind == ValueKind::String || b.kind == ValueKind::String)
    return a.kind == b.kind && a.string_id == b.string_id;
  if (a.kind == ValueKind::Bool && b.kind == ValueKind::Bool) return a.boolean == b.boolean;
  Rational x = a.is_bool() ? Rational::integer(a.boolean) : a.number;
  Rational y = b.is_bool() ? Rational::integer(b.boolean) : b.number;
  return x == y;
}

bool value_less(const Value& a, const Value& b) {
  if (a.kind != b.kind) return uint8_t(a.kind) < uint8_t(b.kind);
  switch (a.kind) {
    case ValueKind::Number: return compare(a.number, b.number) < 0;
    case ValueKind::Bool: return a.boolean < b.boolean;
    case ValueKind::String: return a.string_id != b.string_id && a.string() < b.string();
  }
  return false;
}

size_t ValueHash::operator()(const Value& v) const {
  // Consistent with ==: True hashes as 1 and False as 0.
  if (v.is_string()) return std::hash<uint32_t>()(v.string_id) * 0x9E3779B97F4A7C15ull + 7;
  Rational q = v.is_bool() ? Rational::integer(v.boolean) : v.number;
  return std::hash<int64_t>()(q.num) * 31 + std::hash<int64_t>()(q.den);
}

std::string to_display(const Value& v) {
  switch (v.kind) {
    case ValueKind::Bool: return v.boolean ? "True" : "False";
    case ValueKind::String: return v.string();
    case ValueKind::Number: return v.number.to_string();
  }
  return "";
}

std::string to_source(const Value& v) {
  if (v.is_string()) return "\"" + v.string() + "\"";
  return to_display(v);
}

}  // namespace raspc
