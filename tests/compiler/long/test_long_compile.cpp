// Histogram, sort and reverse at maximum length 64: zero mismatches on every input up to the
// exhaustive length (at most 10^5 inputs in all) and on 10^4 random inputs of every longer
// length; the Dyck programs causal at 8; long_addition over its whole vocabulary at 8 and 16.
// Label `long`: minutes, not seconds.
#include <catch2/catch.hpp>

#include <memory>
#include <random>

#include "compile_helpers.hpp"
#include "language/interpret.hpp"
#include "runtime/forward.hpp"
#include "runtime/model_output.hpp"
#include "runtime/verification_backend.hpp"

using namespace raspc;
using namespace raspc::testing;

TEST_CASE("hist, sort and reverse at max length 64, exhaustive then 10^4 random inputs of every length") {
  for (const std::string name : {"hist", "reverse", "sort"}) {
    ProgramFile f = load_program(name);
    const std::vector<Value> vocab = header_vocabulary(f.header);
    CompileOptions o;  // the compiler's own defaults: exhaustive within 10^5 inputs, 10^4 a length beyond
    o.vocab = vocab;
    o.max_len = 64;
    REQUIRE(o.exhaustive_limit == 100000);
    REQUIRE(o.samples == 10000);
    CompileResult r = compile_program(f.program, o);
    const CompileReport& report = r.report;
    INFO(name << ": " << report.first_mismatch);
    CHECK(report.mismatches == 0);
    CHECK(report.undefined_inputs == 0);
    CHECK(report.min_logit_margin > 10.0);
    REQUIRE(report.verified_len == 64);
    REQUIRE(report.checked_by_length.size() == 65);
    // The exhaustive length is the longest whose inputs, with all the shorter ones, are at most 10^5.
    double total = 0, count = 1;
    int exhaustive_len = 0;
    for (int n = 1; n <= 64 && (total += (count *= double(vocab.size()))) <= 1e5; ++n) exhaustive_len = n;
    CHECK(report.exhaustive_len == exhaustive_len);
    count = 1;
    for (int n = 1; n <= 64; ++n) {
      INFO("length " << n);
      if (n <= exhaustive_len) CHECK(report.checked_by_length[size_t(n)] == long(count *= double(vocab.size())));
      else CHECK(report.checked_by_length[size_t(n)] >= 10000);
    }
  }
}

TEST_CASE("dyck2 and dyck3 at max length 8, causal") {
  for (const std::string name : {"dyck2", "dyck3"}) {
    ProgramFile f = load_program(name);
    CompileOptions o = test_options(header_vocabulary(f.header), 8, Mode::Causal);
    CompileResult r = compile_program(f.program, o);
    INFO(name << ": " << r.report.first_mismatch);
    CHECK(r.report.mismatches == 0);
  }
}

// The default suite checks long_addition over 0, 1, 9 and + only (its eleven symbols would make
// exhaustive checking to length 6 1.9 million inputs); here every digit, at the default suite's
// two maximum lengths and the compiler's own sampling: every input up to length 4 (16,104 in
// all), then 10^4 random inputs of each longer length.
TEST_CASE("long_addition over its whole eleven-symbol vocabulary at max lengths 8 and 16") {
  ProgramFile f = load_program("long_addition");
  const std::vector<Value> vocab = header_vocabulary(f.header);
  REQUIRE(vocab.size() == 11);
  for (int max_len : {8, 16}) {
    INFO("max length " << max_len);
    CompileOptions o;
    o.vocab = vocab;
    o.max_len = max_len;
    REQUIRE(o.exhaustive_limit == 100000);
    REQUIRE(o.samples == 10000);
    CompileResult r = compile_program(f.program, o);
    const CompileReport& report = r.report;
    INFO(report.first_mismatch << report.first_undefined);
    CHECK(report.mismatches == 0);
    CHECK(report.undefined_inputs == 0);
    CHECK(report.min_logit_margin > 10.0);
    CHECK(report.exhaustive_len == 4);
    CHECK_FALSE(report.exhaustive);
    REQUIRE(report.verified_len == max_len);
    std::vector<long> expected{0, 11, 121, 1331, 14641};
    expected.resize(size_t(max_len) + 1, 10000);
    CHECK(report.checked_by_length == expected);
    CHECK(report.inputs_checked == 16104 + long(max_len - 4) * 10000);
  }
}

// At max length 64: every input up to length 4, then 1,000 random inputs of each length 5 to 64,
// by the compiler's own verification (the dense forward of this 14.8M-parameter model would take
// many minutes for the same inputs). Its operand shift is one numerical head (docs/long-contexts.md,
// "Shifts by a computed amount"), which took a block of lookup tables before.
TEST_CASE("long_addition at max length 64: every input up to length 4, then 1000 random inputs of each length") {
  ProgramFile f = load_program("long_addition");
  CompileOptions o;
  o.vocab = header_vocabulary(f.header);
  o.max_len = 64;
  o.samples = 1000;
  CompileResult r = compile_program(f.program, o);
  const CompileReport& report = r.report;
  INFO(report.first_mismatch);
  CHECK(report.mismatches == 0);
  CHECK(report.layers == 6);
  CHECK(report.exhaustive_len == 4);
  REQUIRE(report.checked_by_length.size() == 65);
  for (int n = 5; n <= 64; ++n) CHECK(report.checked_by_length[size_t(n)] == 1000);
}

// Long contexts (docs/long-contexts.md): each program compiled at maximum length 1,024 (frac_prevs,
// dyck1, shift, aab, detect_pattern and pair_balance causal) and checked on 1,000 random inputs of
// one length against the interpreter: one CTest entry per program and length.
namespace {

// Which forward runs the model: the dense CPU forward, or (for models of tens of millions of
// parameters, where the dense one would take hours at these lengths) the verification's forward
// over the nonzero blocks, which tests/compiler/test_verification_backend.cpp compares with it.
enum class Forward { Dense, Verification };

void check_at_lengths(const std::string& name, const Program& program, const std::vector<Value>& vocab, Mode mode,
                      int max_len, const std::vector<int>& lengths, Forward forward = Forward::Dense) {
  CompileOptions o;
  o.vocab = vocab;
  o.max_len = max_len;
  o.mode = mode;
  o.verify = false;
  CompileResult r = compile_program(program, o);
  std::unique_ptr<Backend> backend;
  if (forward == Forward::Dense) backend = make_backend(r.model);
  else backend = std::make_unique<VerificationBackend>(r.model);
  Interpreter interpreter(program, mode);
  std::mt19937_64 random(uint64_t(lengths.front()) * 7919 + uint64_t(lengths.back()));
  for (int length : lengths) {
    long mismatches = 0, defined = 0;
    for (int sample = 0; sample < 1000; ++sample) {
      std::vector<Value> input;
      std::vector<int> tokens;
      for (int i = 0; i < length; ++i) {
        size_t s = size_t(random() % o.vocab.size());
        input.push_back(o.vocab[s]);
        tokens.push_back(r.model.token_id(to_display(o.vocab[s])));
      }
      std::vector<Value> expected;
      try {
        expected = interpreter.run(input);
      } catch (const UserError&) {
        continue;  // the program is undefined there (none of these programs is: checked below)
      }
      ++defined;
      PositionOutputs got = run_positions(*backend, r.model, tokens);
      for (int i = 0; i < length; ++i)
        if (!output_matches(r.model, got.values[size_t(i)], to_display(expected[size_t(i)]))) {
          ++mismatches;
          break;
        }
    }
    INFO(name << " at length " << length << " of max length " << max_len);
    CHECK(mismatches == 0);
    CHECK(defined == 1000);
  }
}

std::vector<int> from_to(int first, int last) {
  std::vector<int> lengths;
  for (int length = first; length <= last; ++length) lengths.push_back(length);
  return lengths;
}

void check_at_length(const std::string& name, const Program& program, const std::vector<Value>& vocab, Mode mode,
                     int max_len, int first, int last, Forward forward = Forward::Dense) {
  check_at_lengths(name, program, vocab, mode, max_len, from_to(first, last), forward);
}

void check_at_length(const std::string& name, Mode mode, int max_len, int first, int last,
                     Forward forward = Forward::Dense) {
  ProgramFile f = load_program(name);
  check_at_length(name, f.program, header_vocabulary(f.header), mode, max_len, first, last, forward);
}

}  // namespace

// The lengths of the entries: 1-16 in one, then each power of two up to the model's maximum
// length in one of its own. CASE(args..., first, last) makes one entry.
#define RASPC_LENGTHS_UP_TO_64(CASE, ...) \
  CASE(__VA_ARGS__, 1, 16)                 \
  CASE(__VA_ARGS__, 32, 32)                \
  CASE(__VA_ARGS__, 64, 64)
#define RASPC_LENGTHS_UP_TO_256(CASE, ...)   \
  RASPC_LENGTHS_UP_TO_64(CASE, __VA_ARGS__)  \
  CASE(__VA_ARGS__, 128, 128)                \
  CASE(__VA_ARGS__, 256, 256)
#define RASPC_LENGTHS_UP_TO_1024(CASE, ...)  \
  RASPC_LENGTHS_UP_TO_256(CASE, __VA_ARGS__) \
  CASE(__VA_ARGS__, 512, 512)                \
  CASE(__VA_ARGS__, 1024, 1024)

// One entry: the program `program` (a name of programs/) checked at max length max_len, its test
// named `name` (and ", verification forward" where it runs on that forward).
#define RASPC_NAMED_CASE(name, program, mode, max_len, first, last)                                      \
  TEST_CASE(name " at max length " #max_len ": 1000 random inputs of each length " #first " to " #last) { \
    check_at_length(program, mode, max_len, first, last);                                              \
  }
#define RASPC_NAMED_LARGE_MODEL_CASE(name, program, mode, max_len, first, last)                          \
  TEST_CASE(name " at max length " #max_len ": 1000 random inputs of each length " #first " to " #last  \
            ", verification forward") {                                                                \
    check_at_length(program, mode, max_len, first, last, Forward::Verification);                      \
  }
#define RASPC_LONG_CONTEXT_CASE(program, ...) RASPC_NAMED_CASE(program, program, __VA_ARGS__)
#define RASPC_LONG_CONTEXT_UP_TO_1024(program, mode) \
  RASPC_LENGTHS_UP_TO_1024(RASPC_LONG_CONTEXT_CASE, program, mode, 1024)
// The programs whose models at their longest length have tens of millions of parameters, on the
// verification's forward: each at the longest of 64, 256 and 1,024 it compiles at within the budget.
#define RASPC_LARGE_MODEL_CASE(program, ...) RASPC_NAMED_LARGE_MODEL_CASE(program, program, __VA_ARGS__)
RASPC_LENGTHS_UP_TO_1024(RASPC_LARGE_MODEL_CASE, "count_less_freq", Mode::Bidirectional, 1024)
RASPC_LENGTHS_UP_TO_256(RASPC_LARGE_MODEL_CASE, "most_freq", Mode::Bidirectional, 256)
// A stable sort's target read along one line through its split width's parts, at the longest
// length where the compiler does so (test_constructions/width_part.cpp): most_freq at 257, RASP's 3 blocks
// (below that, the entries at 256 above), and the stable sort of tokens, causal (bidirectionally
// it is a counting sort), at 280, RASP's 2; and most_freq one length beyond, where each part is
// made a one-hot first and the sum waits for the next block (4 blocks).
RASPC_NAMED_LARGE_MODEL_CASE("most_freq (3 blocks)", "most_freq", Mode::Bidirectional, 257, 257, 257)
RASPC_NAMED_LARGE_MODEL_CASE("most_freq (4 blocks)", "most_freq", Mode::Bidirectional, 258, 258, 258)
RASPC_LENGTHS_UP_TO_64(RASPC_NAMED_CASE, "sort, causal (2 blocks)", "sort", Mode::Causal, 280)
RASPC_NAMED_CASE("sort, causal (2 blocks)", "sort", Mode::Causal, 280, 128, 128)
RASPC_NAMED_CASE("sort, causal (2 blocks)", "sort", Mode::Causal, 280, 256, 256)
RASPC_NAMED_CASE("sort, causal (2 blocks)", "sort", Mode::Causal, 280, 280, 280)
// shuffle_dyck2's balances are prefix means over the position's digits (prefix_mean.cpp): 1.7M
// parameters at 1,024, whose compile takes about 100 s listing the maps over the balances' values,
// so one entry compiles it once for every length.
TEST_CASE("shuffle_dyck2 at max length 1024: 1000 random inputs of each length 1 to 16, 32, 64, ..., 1024") {
  ProgramFile f = load_program("shuffle_dyck2");
  std::vector<int> lengths = from_to(1, 16);
  for (int length = 32; length <= 1024; length *= 2) lengths.push_back(length);
  check_at_lengths("shuffle_dyck2", f.program, header_vocabulary(f.header), Mode::Bidirectional, 1024, lengths);
}
RASPC_LENGTHS_UP_TO_64(RASPC_LARGE_MODEL_CASE, "dyck2", Mode::Causal, 64)
RASPC_LENGTHS_UP_TO_64(RASPC_LARGE_MODEL_CASE, "dyck3", Mode::Causal, 64)

RASPC_LONG_CONTEXT_UP_TO_1024("reverse", Mode::Bidirectional)
RASPC_LONG_CONTEXT_UP_TO_1024("frac_prevs", Mode::Causal)
RASPC_LONG_CONTEXT_UP_TO_1024("hist", Mode::Bidirectional)
RASPC_LONG_CONTEXT_UP_TO_1024("length", Mode::Bidirectional)
RASPC_LONG_CONTEXT_UP_TO_1024("dyck1", Mode::Causal)
// shuffle_dyck's balance is a prefix mean over the position's digits (prefix_mean.cpp): 525,502
// parameters at 1,024, where a table over positions made it 35.9M.
RASPC_LONG_CONTEXT_UP_TO_1024("shuffle_dyck", Mode::Bidirectional)
// sort is a counting sort (35,172 parameters at 1,024). A stable sort of values that are not a
// function of the key keeps the position tie break and its target w1 + w2: at 256 that is 3.5M
// parameters in RASP's 2 blocks (at 1,024 its widths' pairs are more than a lookup may list).
RASPC_LONG_CONTEXT_UP_TO_1024("sort", Mode::Bidirectional)
// sort_unique is a counting sort too from max length 36 (84,348 parameters at 1,024, 53M as Tracr's
// construction): each run's first slot its key, the others the default (count_sorts.cpp).
RASPC_LONG_CONTEXT_UP_TO_1024("sort_unique", Mode::Bidirectional)
// double_hist compares its counts' ranks from max length 20 (count_rank.cpp): 600,224 parameters at
// 1,024, 54.9M as the counts' one-hots.
RASPC_LONG_CONTEXT_UP_TO_1024("double_hist", Mode::Bidirectional)
#define RASPC_STABLE_PARTITION_CASE(max_len, first, last)                                                          \
  TEST_CASE("stable partition at max length " #max_len ": 1000 random inputs of each length " #first " to " #last) { \
    check_at_length("stable partition", stable_partition(), digits_1_to_4(), Mode::Bidirectional, max_len, first,  \
                    last);                                                                                        \
  }
RASPC_LENGTHS_UP_TO_256(RASPC_STABLE_PARTITION_CASE, 256)
// Idioms over digits 0-3 (compile_helpers.hpp): shifts by a computed amount (the first token's
// value, bidirectional, and each token's own value, causal), and has_focus over an order of
// positions (the first 2, bidirectional).
#define RASPC_IDIOM_CASE(name, program, mode, max_len, first, last)                                       \
  TEST_CASE(name " at max length " #max_len ": 1000 random inputs of each length " #first " to " #last) { \
    check_at_length(name, program, digits_0_to_3(), mode, max_len, first, last);                          \
  }
RASPC_LENGTHS_UP_TO_1024(RASPC_IDIOM_CASE, "computed shift", computed_shift(), Mode::Bidirectional, 1024)
RASPC_LENGTHS_UP_TO_1024(RASPC_IDIOM_CASE, "look back by token", look_back_by_token(), Mode::Causal, 1024)
RASPC_LENGTHS_UP_TO_1024(RASPC_IDIOM_CASE, "first instance", program_from_text("mark_first_instance(tokens, 2);\n"),
                         Mode::Bidirectional, 1024)
// The O(n) programs of index arithmetic and prefixes (causal, as their headers say).
RASPC_LONG_CONTEXT_UP_TO_1024("shift", Mode::Causal)
RASPC_LONG_CONTEXT_UP_TO_1024("aab", Mode::Causal)
RASPC_LONG_CONTEXT_UP_TO_1024("detect_pattern", Mode::Causal)
RASPC_LONG_CONTEXT_UP_TO_1024("pair_balance", Mode::Causal)
// Numbers from selector widths (its target position's number group) at their longest length.
RASPC_LONG_CONTEXT_CASE("sort_unique", Mode::Bidirectional, 14, 1, 14)
