// The programs/ files against direct C++ statements of what they compute, on every input up to a
// length (sampled pairs for long_addition): an independent check of the programs and of the
// interpreter together, beyond the hand-worked expect lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "program_files.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

using Symbols = std::vector<std::string>;
// The expected output, as display strings, of one input given as symbols.
using Rule = std::function<Symbols(const Symbols&)>;

std::string fraction(long num, long den) {
  long g = std::gcd(num < 0 ? -num : num, den);
  num /= g;
  den /= g;
  return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
}

std::string joined(const Symbols& symbols) {
  std::string text;
  for (const std::string& s : symbols) text += (text.empty() ? "" : " ") + s;
  return text;
}

std::vector<Value> as_values(const Symbols& symbols, bool ints) {
  std::vector<Value> values;
  for (const std::string& s : symbols) values.push_back(ints ? Value::of_int(std::stoll(s)) : Value::of_string(s));
  return values;
}

// Runs `stem` on every sequence over `vocab` of length 1..max_length and compares with `rule`.
// Returns the number of inputs checked; stops at the first mismatch.
size_t check_all(const std::string& stem, const Symbols& vocab, int max_length, const Rule& rule,
                 Mode mode = Mode::Bidirectional, bool ints = false,
                 const std::function<bool(const Symbols&)>& admissible = nullptr) {
  Program program = load_library_program(stem);
  Interpreter interpreter(program, mode);
  size_t checked = 0;
  for (int length = 1; length <= max_length; ++length) {
    std::vector<size_t> digits(size_t(length), 0);
    for (;;) {
      Symbols input;
      for (size_t d : digits) input.push_back(vocab[d]);
      if (!admissible || admissible(input)) {
        std::string actual = display_all(interpreter.run(as_values(input, ints)));
        std::string expected = joined(rule(input));
        if (actual != expected) {
          INFO("programs/" << stem << ".rasp on " << joined(input));
          CHECK(actual == expected);
          return checked;
        }
        ++checked;
      }
      size_t at = 0;
      while (at < digits.size() && ++digits[at] == vocab.size()) digits[at++] = 0;
      if (at == digits.size()) break;
    }
  }
  return checked;
}

std::map<std::string, int> counts_of(const Symbols& input) {
  std::map<std::string, int> counts;
  for (const std::string& s : input) ++counts[s];
  return counts;
}

// Prefix labels of Dyck-k: F once a closer had no matching opener, else T when balanced, else P.
Symbols dyck_labels(const Symbols& input, const std::string& pairs) {
  Symbols out;
  std::vector<char> stack;
  bool broken = false;
  for (const std::string& s : input) {
    size_t at = pairs.find(s[0]);
    if (at % 2 == 0) {
      stack.push_back(s[0]);
    } else if (stack.empty() || stack.back() != pairs[at - 1]) {
      broken = true;
    } else {
      stack.pop_back();
    }
    out.push_back(broken ? "F" : (stack.empty() ? "T" : "P"));
  }
  return out;
}

Symbols shuffle_dyck_labels(const Symbols& input, const std::string& pairs) {
  bool balanced = true;
  for (size_t p = 0; p < pairs.size(); p += 2) {
    int depth = 0;
    for (const std::string& s : input) {
      if (s[0] == pairs[p]) ++depth;
      if (s[0] == pairs[p + 1]) --depth;
      if (depth < 0) balanced = false;
    }
    if (depth != 0) balanced = false;
  }
  return Symbols(input.size(), balanced ? "1" : "0");
}

const Symbols kLetters = {"a", "b", "c", "d"};
const Symbols kNumbers = {"1", "2", "3", "4"};

}  // namespace

TEST_CASE("program rules: counting programs agree with direct rules on every input up to length 6") {
  CHECK(check_all("length", kLetters, 6, [](const Symbols& in) {
          return Symbols(in.size(), std::to_string(in.size()));
        }) == 5460);
  CHECK(check_all("hist", kLetters, 6, [](const Symbols& in) {
          auto counts = counts_of(in);
          Symbols out;
          for (const auto& s : in) out.push_back(std::to_string(counts[s]));
          return out;
        }) == 5460);
  CHECK(check_all("double_hist", kLetters, 6, [](const Symbols& in) {
          auto counts = counts_of(in);
          Symbols out;
          for (const auto& s : in) {
            int same = 0;
            for (const auto& [token, count] : counts) same += count == counts[s];
            out.push_back(std::to_string(same));
          }
          return out;
        }) == 5460);
  CHECK(check_all("count_less_freq", kLetters, 6, [](const Symbols& in) {
          auto counts = counts_of(in);
          long rare = std::count_if(in.begin(), in.end(), [&](const std::string& s) { return counts[s] <= 2; });
          return Symbols(in.size(), std::to_string(rare));
        }) == 5460);
}

TEST_CASE("program rules: reordering programs agree with direct rules on every input up to length 6") {
  CHECK(check_all("reverse", kLetters, 6, [](const Symbols& in) { return Symbols(in.rbegin(), in.rend()); }) == 5460);
  CHECK(check_all("shift", kLetters, 6, [](const Symbols& in) {
          Symbols out = {"_"};
          out.insert(out.end(), in.begin(), in.end() - 1);
          return out;
        }) == 5460);
  auto sorted = [](const Symbols& in) {
    Symbols out = in;
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(check_all("sort", kNumbers, 6, sorted, Mode::Bidirectional, true) == 5460);
  auto distinct = [](const Symbols& in) { return std::set<std::string>(in.begin(), in.end()).size() == in.size(); };
  CHECK(check_all("sort_unique", kNumbers, 4, sorted, Mode::Bidirectional, true, distinct) == 64);
  CHECK(check_all("most_freq", kLetters, 6, [](const Symbols& in) {
          auto counts = counts_of(in);
          Symbols firsts;
          for (const auto& s : in)
            if (std::find(firsts.begin(), firsts.end(), s) == firsts.end()) firsts.push_back(s);
          std::stable_sort(firsts.begin(), firsts.end(),
                           [&](const std::string& a, const std::string& b) { return counts[a] > counts[b]; });
          firsts.resize(in.size(), "_");
          return firsts;
        }) == 5460);
}

TEST_CASE("program rules: prefix programs agree with direct rules, bidirectionally and causally") {
  for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
    INFO((mode == Mode::Causal ? "causal" : "bidirectional"));
    CHECK(check_all("frac_prevs", {"a", "b", "c", "x"}, 6, [](const Symbols& in) {
            Symbols out;
            long xs = 0;
            for (size_t i = 0; i < in.size(); ++i) out.push_back(fraction(xs += in[i] == "x", long(i) + 1));
            return out;
          }, mode) == 5460);
    CHECK(check_all("pair_balance", {"(", ")", "a"}, 7, [](const Symbols& in) {
            Symbols out;
            long balance = 0;
            for (size_t i = 0; i < in.size(); ++i) {
              balance += in[i] == "(" ? 1 : (in[i] == ")" ? -1 : 0);
              out.push_back(fraction(balance, long(i) + 1));
            }
            return out;
          }, mode) == 3279);
    CHECK(check_all("dyck1", {"(", ")"}, 10, [](const Symbols& in) { return dyck_labels(in, "()"); }, mode) == 2046);
    CHECK(check_all("dyck2", {"(", ")", "{", "}"}, 7, [](const Symbols& in) { return dyck_labels(in, "(){}"); },
                    mode) == 21844);
    CHECK(check_all("dyck3", {"(", ")", "{", "}", "[", "]"}, 5,
                    [](const Symbols& in) { return dyck_labels(in, "(){}[]"); }, mode) == 9330);
    CHECK(check_all("detect_pattern", kLetters, 6, [](const Symbols& in) {
            Symbols out;
            for (size_t i = 0; i < in.size(); ++i)
              out.push_back(i >= 2 && in[i - 2] == "a" && in[i - 1] == "b" && in[i] == "c" ? "True" : "False");
            return out;
          }, mode) == 5460);
    CHECK(check_all("aab", {"a", "b"}, 10, [](const Symbols& in) {
            Symbols out;
            for (size_t i = 0; i < in.size(); ++i) out.push_back(i >= 1 && in[i - 1] == "a" && in[i] == "a" ? "b" : "a");
            return out;
          }, mode) == 2046);
  }
}

TEST_CASE("program rules: shuffle_dyck programs agree with direct rules on every input up to length 8") {
  CHECK(check_all("shuffle_dyck", {"(", ")"}, 10, [](const Symbols& in) { return shuffle_dyck_labels(in, "()"); }) ==
        2046);
  CHECK(check_all("shuffle_dyck2", {"(", ")", "{", "}"}, 8,
                  [](const Symbols& in) { return shuffle_dyck_labels(in, "(){}"); }) == 87380);
}

TEST_CASE("program rules: long_addition adds every pair of one- and two-digit operands, and random longer ones") {
  Program program = load_library_program("long_addition");
  Interpreter interpreter(program, Mode::Bidirectional);
  std::vector<std::string> operands;
  for (int d = 0; d < 10; ++d) operands.push_back(std::to_string(d));
  for (int d = 0; d < 100; ++d) operands.push_back(std::string(1, char('0' + d / 10)) + char('0' + d % 10));
  std::vector<std::pair<std::string, std::string>> cases;
  for (const auto& a : operands)
    for (const auto& b : operands) cases.push_back({a, b});
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    auto digits = [&](int count) {
      std::string s;
      for (int k = 0; k < count; ++k) s += char('0' + rng() % 10);
      return s;
    };
    cases.push_back({digits(1 + int(rng() % 6)), digits(1 + int(rng() % 6))});
  }
  for (const auto& [a, b] : cases) {
    std::string text = a + "+" + b;
    Symbols input;
    for (char c : text) input.push_back(std::string(1, c));
    std::string sum = std::to_string(std::stoll(a) + std::stoll(b));
    Symbols expected(text.size() - sum.size(), "0");
    for (char c : sum) expected.push_back(std::string(1, c));
    std::string actual = display_all(interpreter.run(as_values(input, false)));
    if (actual != joined(expected)) {
      INFO("programs/long_addition.rasp on " << text);
      CHECK(actual == joined(expected));
      break;
    }
  }
}
