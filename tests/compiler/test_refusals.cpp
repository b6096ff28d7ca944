// Programs the compiler must refuse: each with its reason and the location of the offending
// expression (file:line:col).
#include <catch2/catch.hpp>

#include "compile_helpers.hpp"

using namespace raspc;
using namespace raspc::testing;

namespace {

struct Refusal {
  const char* source;
  const char* location;  // "line:col"
  const char* reason;    // a fragment of the message
  int max_len = 8;
  const char* vocab = "abc";
};

const Refusal kRefusals[] = {
    // The caret on the refused select (a note points at the numerical s-op).
    {"f = numerical(aggregate(full_s, indicator(tokens == \"a\")));\nselector_width(select(f, f, ==));", "2:16",
     "a selector cannot compare a numerical s-op"},
    {"f = numerical(aggregate(full_s, indicator(tokens == \"a\")));\naggregate(select(indices, f, ==), tokens);", "2:11",
     "a selector cannot compare a numerical s-op"},
    {"a = aggregate(full_s, indicator(tokens == \"a\"));\nb = aggregate(full_s, indicator(tokens == \"b\"));\n"
     "s = a + b;\nselector_width(select(s, s, <));",
     "4:16", "a selector cannot compare a numerical s-op"},
    {"numerical(aggregate(full_s, tokens));", "1:11", "a numerical aggregate takes the mean of these values"},
    {"x = numerical(aggregate(select(indices, indices, <), \"a\" if tokens == \"b\" else 1));", "1:54",
     "a numerical aggregate takes the mean of these values"},
    {"aggregate(select(indices, indices, <), indicator(tokens == \"a\"), \"none\");", "1:1",
     "needs a numeric default"},
    {"f = aggregate(full_s, indicator(tokens == \"a\"));\naggregate(select(tokens, tokens, ==), f, \"x\");", "2:1",
     "needs a numeric default"},
    {"numerical(\"a\" if indices == 0 else tokens);", "1:11", "numerical() needs numbers"},
    {"numerical(tokens + \"x\");", "1:11", "numerical() needs numbers"},
    {"tokens * 100 + indices;", "1:1", "more than the 2048", 30, "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,"
     "21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,"
     "59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,"
     "97,98,99]"},
    {"categorical(aggregate(full_s, indicator(tokens == \"a\")) + aggregate(full_s, indicator(tokens == \"b\")));",
     "1:13", "this map combines numerical s-ops"},
    // A selector over the combinations of several s-ops (pair_selectors.cpp) needs a dimension for each.
    {"selector_width(select(tokens, tokens, ==) or select(indices, indices, <));", "1:16",
     "combinations, which can take 2600 values, more than the 2048", 100, "abcdefghijklmnopqrstuvwxyz"},
    {"s = select(indices, indices, <) or select(indices, length - 1, ==);\nselector_width(s);", "1:5",
     "comparisons of indices and length on the query side", 100, "ab"},
    {"selector_width(not (select(tokens, tokens, ==) and select(indices, indices, ==) and select(length, length, ==)));",
     "1:16", "comparisons of tokens, indices and length on the key side", 100, "ab"},
    {"tokens + 1;", "1:1", "undefined on every input"},
    {"a = aggregate(full_s, indicator(tokens == \"a\"));\nb = aggregate(full_s, indicator(tokens == \"b\"));\n"
     "numerical(a * b);",
     "3:11", "is not affine"},
    {"a = aggregate(full_s, indicator(tokens == \"a\"));\nb = aggregate(select(indices, indices, <), "
     "indicator(tokens == \"b\"));\nc = a + b;\nc == 1;",
     "4:1", "this map combines numerical s-ops"},
    {"f = aggregate(full_s, indicator(tokens == \"a\"));\ncategorical(aggregate(select(indices, indices, ==), f));",
     "2:13", "a categorical aggregate cannot copy a numerical s-op"},
    {"a = aggregate(full_s, indicator(tokens == \"a\"));\nb = aggregate(full_s, indicator(tokens == \"b\"));\n"
     "selector_width(select(tokens, tokens, ==) and select(a + b, a + b, ==));",
     "3:47", "a selector cannot compare a numerical s-op"},
    // Enumerable position by position (tokens x length at one index), but 41,000 values in all.
    {"x = tokens + indices * 100 + length * 10000;\nx;", "1:5", "this categorical s-op can take 41000 values", 40,
     "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,"
     "41,42,43,44,45,46,47,48,49]"},
    // 50 tokens x 51 first tokens x 40 lengths at position 0 fused; split at its two maps (a block
    // more) 99 sums x 40 lengths, listed, but 3,960 values.
    {"x = tokens + aggregate(select(indices, 0, ==), tokens) + length * 1000;\nx;", "1:5",
     "this categorical s-op can take 3960 values", 40,
     "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,"
     "41,42,43,44,45,46,47,48,49]"},
    // 40 tokens x 41 first tokens x 45 lengths fused, and split still 1,640 x 45: more combinations
    // than a table holds.
    {"x = tokens * 100 + aggregate(select(indices, 0, ==), tokens) + length * 100000;\nx;", "1:5",
     "cannot be enumerated: its inputs (`tokens`, `length`, `aggregate(select(indices, 0, ==), tokens)` at test.rasp:1:20) take more than 65536 combinations", 45,
     "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39]"},
};

}  // namespace

TEST_CASE("programs that cannot become weights are refused with the reason and the location") {
  int index = 0;
  for (const Refusal& r : kRefusals) {
    ++index;
    INFO("refusal " << index << ": " << r.source);
    Program program = program_from_text(r.source, "test.rasp");
    CompileOptions o = test_options(parse_vocabulary(r.vocab), r.max_len, Mode::Bidirectional);
    o.verify = false;
    std::string message = compile_error(program, o);
    INFO(message);
    REQUIRE_FALSE(message.empty());
    CHECK(message.rfind(std::string("test.rasp:") + r.location + ": error: ", 0) == 0);
    CHECK(message.find(r.reason) != std::string::npos);
  }
  CHECK(index >= 20);
}
