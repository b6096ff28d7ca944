// Programs that must fail, each with its exact message and location (file:line:col).
#include <catch2/catch.hpp>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"

using namespace raspc;

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The first line of the error the program raises while being evaluated.
std::string error_of(const std::string& text, const std::string& output = "") {
  auto file = std::make_shared<SourceFile>();
  file->name = "t.rasp";
  file->text = text;
  EvaluateOptions options;
  options.output_name = output;
  try {
    evaluate_program(file, options);
  } catch (const UserError& e) {
    return first_line(e.what());
  }
  return "no error";
}

std::string input_error(const std::string& text, const std::string& vocabulary = "") {
  try {
    if (vocabulary.empty()) {
      parse_input(text);
    } else {
      std::vector<Value> vocab = parse_vocabulary(vocabulary);
      parse_input(text, "--input", &vocab);
    }
  } catch (const UserError& e) {
    return first_line(e.what());
  }
  return "no error";
}

struct Case {
  const char* program;
  const char* message;
};

// One failing program a line: every kind of error the front end reports.
const Case kCases[] = {
    // syntax
    {"x = 1", "t.rasp:1:6: error: expected `;` after the assignment but found the end of the file"},
    {"x = a != b;", "t.rasp:1:7: error: `!=` exists only as a select operator; write `not (a == b)` instead"},
    {"select(tokens, tokens, +);",
     "t.rasp:1:24: error: the third argument of `select` must be a comparison (== != < > <= >=), not `+`"},
    {"select(tokens, tokens, and);",
     "t.rasp:1:24: error: the third argument of `select` must be a comparison (== != < > <= >=), not `and`"},
    {"def f(x) {\n  return x;\n  y = 1;\n}", "t.rasp:2:3: error: `return` must be the last statement of `f`"},
    {"def f(x) { y = x; }", "t.rasp:1:19: error: the function `f` must end with a `return` statement"},
    {"x = \"abc;", "t.rasp:1:5: error: this string has no closing `\"` on its line"},
    {"x = (tokens + 1;", "t.rasp:1:16: error: expected `)` to close the `(` at 1:5 but found `;`"},
    {"x = tokens +\n;", "t.rasp:2:1: error: expected an expression but found `;`"},
    {"tokens tokens;", "t.rasp:1:8: error: expected `;` after the expression but found the name `tokens`"},
    // names
    {"x = tokns;", "t.rasp:1:5: error: undefined name `tokns`; did you mean `tokens`?"},
    {"x = selectr_width(select(tokens, tokens, ==));",
     "t.rasp:1:5: error: undefined name `selectr_width`; did you mean `selector_width`?"},
    {"foo;", "t.rasp:1:1: error: undefined name `foo`"},
    {"def f(x) { return y; } f(1);", "t.rasp:1:19: error: undefined name `y`; did you mean `x`?"},
    {"length = 3;", "t.rasp:1:1: error: `length` is a name of the standard library and cannot be reassigned; choose another name"},
    {"def sort(a) { return a; }", "t.rasp:1:5: error: `sort` is a name of the standard library and cannot be reassigned; choose another name"},
    {"for tokens in [1] { }", "t.rasp:1:5: error: `tokens` is a name of the standard library and cannot be reassigned; choose another name"},
    {"def f(indices) { return 1; } f(2);", "t.rasp:1:7: error: `indices` is a name of the standard library and cannot be reassigned; choose another name"},
    {"x, aggregate = 1, 2;", "t.rasp:1:4: error: `aggregate` is a name of the standard library and cannot be reassigned; choose another name"},
    // calls
    {"aggregate(select(tokens, tokens, ==));", "t.rasp:1:1: error: `aggregate` takes 2 or 3 arguments but was given 1"},
    {"def f(a, b) { return a; }\nf(1);", "t.rasp:2:1: error: `f` takes 2 arguments but was given 1"},
    {"def f() { return 1; } f(1, 2);", "t.rasp:1:23: error: `f` takes 0 arguments but was given 2"},
    {"count(tokens);", "t.rasp:1:1: error: `count` takes 2 arguments but was given 1"},
    {"range(1, 2, 3, 4);", "t.rasp:1:1: error: `range` takes 1 to 3 arguments but was given 4"},
    {"x = tokens; x(1);", "t.rasp:1:13: error: cannot call `x`: it is an s-op, not a function"},
    {"3(1);", "t.rasp:1:1: error: cannot call this expression: it is a number, not a function"},
    {"def f(n) { return f(n + 1); } f(0);",
     "t.rasp:1:19: error: the call of `f` nests deeper than 100 calls; does its recursion lack a base case?"},
    // selectors and aggregates
    {"aggregate(tokens, tokens);", "t.rasp:1:11: error: the first argument of `aggregate` must be a selector, not an s-op"},
    {"selector_width(tokens == 1);", "t.rasp:1:16: error: the argument of `selector_width` must be a selector, not an s-op"},
    {"select(tokens, [1], ==);", "t.rasp:1:16: error: the queries of `select` must be an s-op or an atom, not a list"},
    {"aggregate(select(tokens, tokens, ==), tokens, tokens);",
     "t.rasp:1:47: error: the default of `aggregate` must be an atom (a number, string or boolean), not an s-op"},
    {"tokens + select(tokens, tokens, ==);",
     "t.rasp:1:1: error: cannot add an s-op and a selector; selectors combine only with `and`, `or` and `not`"},
    {"select(tokens, tokens, ==) and tokens;",
     "t.rasp:1:1: error: cannot combine with `and` a selector and an s-op; `and`/`or` combine two selectors or two s-ops"},
    {"-select(tokens, tokens, ==);",
     "t.rasp:1:1: error: cannot apply `-` to a selector; selectors combine only with `and`, `or` and `not`"},
    {"tokens if select(tokens, tokens, ==) else 1;",
     "t.rasp:1:11: error: the condition of `if` must be an s-op or an atom, not a selector"},
    {"x = select(tokens, tokens, ==); x;",
     "t.rasp:1:33: error: the program's output must be an s-op, but its last expression is a selector"},
    // atoms
    {"\"a\" + 1;", "t.rasp:1:1: error: cannot add a string and a number"},
    {"x = 1;\ny = x +\n  \"s\";", "t.rasp:2:5: error: cannot add a number and a string"},
    {"\"abc\" - \"a\";", "t.rasp:1:1: error: cannot subtract a string from a string"},
    {"\"a\" < 1;", "t.rasp:1:1: error: cannot compare a string and a number"},
    {"x = [1] + 1;", "t.rasp:1:5: error: cannot add a list and a number"},
    {"1 / 0;", "t.rasp:1:1: error: division by zero"},
    {"x = 2 ^ 70000;", "t.rasp:1:5: error: the value of this expression has more than 65,536 bits"},
    {"x = 3 ^ 30000 * 3 ^ 30000;", "t.rasp:1:5: error: the value of this expression has more than 65,536 bits"},
    {"x = 2 ^ 0.5;", "t.rasp:1:5: error: cannot raise a number to a fractional power exactly; use an integer exponent"},
    // indexing and containers
    {"[1, 2][5];", "t.rasp:1:8: error: index 5 is out of range for a list of length 2"},
    {"\"ab\"[-3];", "t.rasp:1:6: error: index -3 is out of range for a string of length 2"},
    {"{\"a\": 1}[\"b\"];", "t.rasp:1:10: error: the dictionary has no key \"b\""},
    {"tokens[indices];", "t.rasp:1:8: error: an s-op can only be indexed by an integer (`tokens[0]`), not by an s-op"},
    {"tokens[1.5];", "t.rasp:1:8: error: an index must be an integer, not 3/2"},
    {"x = 1; x[0];", "t.rasp:1:8: error: cannot index a number; only lists, dictionaries, strings and s-ops can be indexed"},
    {"[tokens][indices];", "t.rasp:1:1: error: a list indexed by an s-op must hold atoms, but it holds an s-op"},
    {"{tokens: 1};", "t.rasp:1:2: error: a dictionary key must be an atom (a number, string or boolean), not an s-op"},
    {"tokens in tokens;",
     "t.rasp:1:1: error: `in` with an s-op on the right needs an atom on the left (`\"a\" in tokens`), not an s-op"},
    {"tokens in 3;", "t.rasp:1:11: error: the right side of `in` must be a list, a dictionary, a string or an s-op, not a number"},
    // statements
    {"a, b = 1, 2, 3;", "t.rasp:1:1: error: this assignment has 2 names but 3 values"},
    {"a, b = 5;", "t.rasp:1:8: error: cannot unpack a number into 2 names; give one value per name"},
    {"for x in tokens { }", "t.rasp:1:10: error: cannot iterate over an s-op; a loop needs a list, a dictionary or a string"},
    {"for a, b in [1, 2] { }",
     "t.rasp:1:13: error: each item must be a list of 2 values to unpack into 2 loop variables, but one is a number"},
    {"len(tokens);", "t.rasp:1:5: error: `len` takes a list, a dictionary or a string; for an s-op's length use `length`"},
    {"range(1, 2, 0);", "t.rasp:1:13: error: the step of `range` cannot be zero"},
    {"range(\"a\");", "t.rasp:1:7: error: `range` needs integer arguments, not \"a\""},
    {"load \"missing\";", "t.rasp:1:1: error: cannot load \"missing\": there is no file missing.rasp"},
    {"x = 1;", "t.rasp: error: the program has no output; end it with an expression statement such as `tokens;`"},
    // annotations
    {"categorical(select(tokens, tokens, ==));", "t.rasp:1:13: error: `categorical` takes an s-op, not a selector"},
    {"numerical(categorical(tokens));", "t.rasp:1:1: error: this s-op is already annotated categorical; an s-op has one encoding"},
    // errors inside library code point at the user's call
    {"x = 1;\ny = shift(tokens, [1], 0);",
     "t.rasp:2:5: error: cannot add an s-op and a list (inside the library function `shift`)"},
    {"sort(tokens, [1]);",
     "t.rasp:1:1: error: the keys of `select` must be an s-op or an atom, not a list (inside the library function `sort`)"},
    {"max(\"a\", 1);", "t.rasp:1:1: error: cannot compare a string and a number (inside the library function `max`)"},
};

}  // namespace

TEST_CASE("errors: every failing program reports its exact message and location") {
  for (const Case& c : kCases) {
    INFO(c.program);
    CHECK(error_of(c.program) == c.message);
  }
  CHECK(sizeof(kCases) / sizeof(kCases[0]) >= 40);
}

TEST_CASE("errors: deep recursion through deep expressions is an error, not a stack overflow") {
  // 100 calls of 100 nested negations each: within the call limit, beyond the expression budget.
  std::string program = "def f(n) { return " + std::string(100, '-') + "f(n + 1); } f(0);";
  CHECK(error_of(program) ==
        "t.rasp:1:119: error: the call of `f` nests too deeply (over 3000 levels of expressions and calls); "
        "does its recursion lack a base case?");
  std::string wide = "x = 0";
  for (int i = 0; i < 150; ++i) wide += " + 1";
  CHECK(error_of(wide + "; x;") == "no error");
}

TEST_CASE("errors: the message shows the source line and a caret under the expression") {
  auto file = std::make_shared<SourceFile>();
  file->name = "t.rasp";
  file->text = "a = 1;\nb = a + \"s\" ;\n";
  try {
    evaluate_program(file);
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == "t.rasp:2:5: error: cannot add a number and a string\n  b = a + \"s\" ;\n      ^~~~~~~\n");
  }
}

TEST_CASE("errors: an unknown --output name lists the named s-ops") {
  CHECK(error_of("a = tokens; b = indices; a;", "c") ==
        "--output: error: the program has no top-level s-op named `c` (its named s-ops: a, b)");
}

TEST_CASE("errors: bad inputs point at the offending token") {
  CHECK(input_error("") == "--input:1:1: error: the input is empty; give at least one token, as in hello or [3,1,2]");
  CHECK(input_error("[]") == "--input:1:1: error: the input is empty; give at least one token, as in hello or [3,1,2]");
  CHECK(input_error("[1,\"a\"]") ==
        "--input:1:4: error: a sequence must hold only integers or only strings, but this string follows integers");
  CHECK(input_error("hez", "ehlo") == "--input:1:3: error: the token \"z\" is not in the vocabulary (e h l o)");
  CHECK(input_error("[1,5]", "[1,2]") == "--input:1:4: error: the token 5 is not in the vocabulary (1 2)");
  CHECK(input_error("[1,x]") ==
        "--input:1:4: error: expected an integer or a double-quoted string in the list, as in [3,1,2] or [\"a\",\"b\"]");
  CHECK(input_error("[1,2") == "--input:1:5: error: expected `,` or `]` in the list");
}

TEST_CASE("errors: inputs and vocabularies that are fine") {
  CHECK(parse_input("hello").size() == 5);
  CHECK(parse_input("\"hi\"") == std::vector<Value>{Value::of_string("h"), Value::of_string("i")});
  CHECK(parse_input("[3, -1, 2]") == std::vector<Value>{Value::of_int(3), Value::of_int(-1), Value::of_int(2)});
  CHECK(parse_input("[\"ab\",\"c\"]") == std::vector<Value>{Value::of_string("ab"), Value::of_string("c")});
  CHECK(parse_vocabulary("hello") ==
        std::vector<Value>{Value::of_string("h"), Value::of_string("e"), Value::of_string("l"), Value::of_string("o")});
  CHECK(parse_vocabulary("a bc a") == std::vector<Value>{Value::of_string("a"), Value::of_string("bc")});
  CHECK(parse_vocabulary("[1,2,2]") == std::vector<Value>{Value::of_int(1), Value::of_int(2)});
}

TEST_CASE("errors: inputs and vocabularies are split on UTF-8 code points, and must be UTF-8") {
  CHECK(parse_vocabulary("\xc3\xa9\xc3\xbc") == std::vector<Value>{Value::of_string("\xc3\xa9"), Value::of_string("\xc3\xbc")});
  CHECK(parse_input("\xc3\xa9\xc3\xbc\xc3\xa9") ==
        std::vector<Value>{Value::of_string("\xc3\xa9"), Value::of_string("\xc3\xbc"), Value::of_string("\xc3\xa9")});
  CHECK(input_error("a\xc3\xa9z", "a \xc3\xa9") ==
        "--input:1:3: error: the token \"z\" is not in the vocabulary (a \xc3\xa9)");
  CHECK(input_error("a\xff") ==
        "--input:1:2: error: the byte \\xff is not UTF-8 text; raspc reads programs and symbols as UTF-8");
  CHECK(input_error("a", "ab\xe9") ==
        "--vocab:1:3: error: the byte \\xe9 is not UTF-8 text; raspc reads programs and symbols as UTF-8");
}

TEST_CASE("errors: a vocabulary naming a beginning-of-sequence token is refused up front") {
  CHECK(input_error("a", "<bos> a b") ==
        "--vocab:1:1: error: \"<bos>\" is the name of a model's beginning-of-sequence token, so it cannot be an input "
        "symbol");
  CHECK(input_error("a", "[\"a\",\"BOS\"]") ==
        "--vocab:1:6: error: \"BOS\" is the name of a model's beginning-of-sequence token, so it cannot be an input "
        "symbol");
}

TEST_CASE("errors: compile-time work has a documented limit, refused at the top-level statement that exceeds it") {
  const std::string steps = "this statement takes more than 5000000 steps of compile-time evaluation (raspc's limit); is "
                            "a range, loop or comprehension larger than meant?";
  // Nested range loops: a billion steps, stopped at the limit.
  CHECK(error_of("a = 1;\nn = [[[i for i in range(1000)] for j in range(1000)] for k in range(1000)];\ntokens;") ==
        "t.rasp:2:1: error: " + steps);
  CHECK(error_of("def f(n) {\n  return [[i for i in range(n)] for j in range(n)];\n}\nx = f(100000);\ntokens;") ==
        "t.rasp:4:1: error: " + steps);
  // Doubling a string or a list copies it: 40 doublings are 2^40 elements, not 40 steps.
  std::string doubling = "s = \"ab\";\n", list_doubling = "s = [1, 2];\n";
  for (int i = 0; i < 40; ++i) doubling += "s = s + s;\n", list_doubling += "s = s + s;\n";
  CHECK(error_of(doubling + "tokens;") == "t.rasp:22:1: error: " + steps);
  CHECK(error_of(list_doubling + "tokens;") == "t.rasp:22:1: error: " + steps);
  // A chain of statements longer than the program size limit.
  std::string chain = "x0 = indices;\n";
  for (int i = 1; i <= 10000; ++i) chain += "x" + std::to_string(i) + " = x" + std::to_string(i - 1) + " + 1;\n";
  CHECK(error_of(chain + "x10000;") ==
        "t.rasp:9997:1: error: the program has more than 10000 operations here (raspc's limit on the size of a program)");
}

TEST_CASE("errors: a large dictionary comprehension is built and read by hash") {
  auto file = std::make_shared<SourceFile>();
  file->name = "t.rasp";
  file->text = "d = {i: 2 * i for i in range(200000)};\nx = d[199999] + d[0];\nindices + x;";
  Program program = evaluate_program(file);
  Interpreter interpreter(program, Mode::Bidirectional);
  CHECK(interpreter.run(parse_input("ab")) == std::vector<Value>{Value::of_int(399998), Value::of_int(399999)});
}
