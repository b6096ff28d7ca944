// The "direct rule" side of the cost comparison: each program of programs/ that has an obvious
// native implementation, written the way a programmer would, over token ids (uint8_t).
//
// The functions are noinline, noipa (no cloning) and extern "C" so that callgrind's --toggle-collect can count the
// instructions of exactly one call, and so the optimiser cannot fold them into the timing loop.
// Each writes one output per position, like the network, except aab which predicts one token from
// the two before it (the (aab)* post's setting).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__clang__)
// clang has no noipa; the counted build is g++'s (bench/RESULTS.md), clang's only has to compile.
#define RASPC_NATIVE_RULE extern "C" __attribute__((noinline))
#else
#define RASPC_NATIVE_RULE extern "C" __attribute__((noinline, noipa))
#endif

// (aab)*: a = 0, b = 1; the next token is b exactly after "aa".
RASPC_NATIVE_RULE inline uint8_t raspc_native_aab(uint8_t before_previous, uint8_t previous) {
  return uint8_t((before_previous | previous) == 0);
}

// hist: out[i] = how many positions hold tokens[i]. Token ids are below 256.
RASPC_NATIVE_RULE inline void raspc_native_hist(const uint8_t* tokens, size_t n, uint32_t* out) {
  uint32_t counts[256] = {};
  for (size_t i = 0; i < n; ++i) ++counts[tokens[i]];
  for (size_t i = 0; i < n; ++i) out[i] = counts[tokens[i]];
}

// sort: the tokens in ascending order (a counting sort: ties need no stability for equal ids).
RASPC_NATIVE_RULE inline void raspc_native_sort(const uint8_t* tokens, size_t n, uint8_t* out) {
  uint32_t counts[256] = {};
  for (size_t i = 0; i < n; ++i) ++counts[tokens[i]];
  size_t at = 0;
  for (unsigned v = 0; v < 256 && at < n; ++v)
    for (uint32_t c = counts[v]; c > 0; --c) out[at++] = uint8_t(v);
}

// reverse: out[i] = tokens[n-1-i].
RASPC_NATIVE_RULE inline void raspc_native_reverse(const uint8_t* tokens, size_t n, uint8_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = tokens[n - 1 - i];
}

// length: out[i] = n.
RASPC_NATIVE_RULE inline void raspc_native_length(const uint8_t* /*tokens*/, size_t n, uint32_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = uint32_t(n);
}

// dyck1 prefix labels over "(" = 0 and ")" = 1: 'T' balanced, 'P' still completable, 'F' never.
RASPC_NATIVE_RULE inline void raspc_native_dyck1(const uint8_t* tokens, size_t n, char* out) {
  long depth = 0;
  bool broken = false;
  for (size_t i = 0; i < n; ++i) {
    depth += tokens[i] == 0 ? 1 : -1;
    broken = broken || depth < 0;
    out[i] = broken ? 'F' : (depth == 0 ? 'T' : 'P');
  }
}

namespace raspc::native {

// The programs/ files (by stem) that have a native rule here.
inline const std::vector<std::string>& rule_names() {
  static const std::vector<std::string> names = {"aab", "hist", "sort", "reverse", "length", "dyck1"};
  return names;
}

inline bool has_rule(const std::string& name) {
  const auto& names = rule_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Runs the rule `name` once over `tokens` (aab: predicts after the last two tokens). Returns a
// checksum of the outputs so callers can keep the work observable.
inline uint64_t run_rule(const std::string& name, const uint8_t* tokens, size_t n) {
  uint32_t counts_out[256];
  uint8_t bytes_out[256];
  char chars_out[256];
  n = std::min<size_t>(n, 256);
  uint64_t sum = 0;
  if (name == "aab") {
    sum = raspc_native_aab(n >= 2 ? tokens[n - 2] : 0, n >= 1 ? tokens[n - 1] : 0);
  } else if (name == "hist") {
    raspc_native_hist(tokens, n, counts_out);
    for (size_t i = 0; i < n; ++i) sum += counts_out[i];
  } else if (name == "sort") {
    raspc_native_sort(tokens, n, bytes_out);
    for (size_t i = 0; i < n; ++i) sum += bytes_out[i];
  } else if (name == "reverse") {
    raspc_native_reverse(tokens, n, bytes_out);
    for (size_t i = 0; i < n; ++i) sum += bytes_out[i] * (i + 1);
  } else if (name == "length") {
    raspc_native_length(tokens, n, counts_out);
    for (size_t i = 0; i < n; ++i) sum += counts_out[i];
  } else if (name == "dyck1") {
    raspc_native_dyck1(tokens, n, chars_out);
    for (size_t i = 0; i < n; ++i) sum += uint8_t(chars_out[i]);
  }
  return sum;
}

// The extern "C" symbol callgrind should count for `name`.
inline std::string rule_symbol(const std::string& name) { return "raspc_native_" + name; }

}  // namespace raspc::native
