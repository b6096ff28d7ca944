#include "language/value.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>

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

int compare_rationals(const Rational& a, const Rational& b) {
  __int128 left = __int128(a.num) * b.den;
  __int128 right = __int128(b.num) * a.den;
  return left < right ? -1 : (left > right ? 1 : 0);
}

}  // namespace

Value Value::of_number(Rational q) {
  // Keep the invariant (reduced, den > 0) that == and hashing rely on; integers skip the gcd.
  if (q.den != 1) {
    if (q.den < 0) q.num = -q.num, q.den = -q.den;
    int64_t g = std::gcd(q.num < 0 ? -q.num : q.num, q.den);
    if (g > 1) q.num /= g, q.den /= g;
  }
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
    case ValueKind::Number: return compare_rationals(a.number, b.number) < 0;
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
    case ValueKind::Number:
      if (v.number.is_integer()) return std::to_string(v.number.num);
      return std::to_string(v.number.num) + "/" + std::to_string(v.number.den);
  }
  return "";
}

std::string to_source(const Value& v) {
  if (v.is_string()) return "\"" + v.string() + "\"";
  return to_display(v);
}

}  // namespace raspc
