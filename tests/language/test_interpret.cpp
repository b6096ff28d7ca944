// The reference interpreter on Programs built node by node, so these tests pin down its semantics
// independently of the front end: causal and bidirectional selection, aggregate defaults, single
// values and exact means, selector_width, errors that name the input position, and traces.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "language/evaluate.hpp"
#include "language/interpret.hpp"

using namespace raspc;

namespace {

// Builds a Program by hand. Every node's span covers the whole of a one-line source, unless a
// node is given its own span.
struct ProgramBuilder {
  Program program;

  NodeId add(Node node) {
    program.nodes.push_back(std::move(node));
    return NodeId(program.nodes.size() - 1);
  }
  NodeId leaf(NodeKind kind) {
    Node node;
    node.kind = kind;
    return add(node);
  }
  NodeId tokens() { return leaf(NodeKind::Tokens); }
  NodeId indices() { return leaf(NodeKind::Indices); }
  NodeId constant(Value v) {
    Node node;
    node.kind = NodeKind::Constant;
    node.constant = v;
    return add(node);
  }
  NodeId map(ElementOp op, std::vector<NodeId> inputs, Span span = {}) {
    Node node;
    node.kind = NodeKind::Elementwise;
    node.op = op;
    node.inputs = std::move(inputs);
    node.span = span;
    return add(node);
  }
  NodeId select(NodeId keys, NodeId queries, Comparison cmp) {
    Node node;
    node.kind = NodeKind::Select;
    node.inputs = {keys, queries};
    node.comparison = cmp;
    return add(node);
  }
  NodeId combine(NodeKind kind, std::vector<NodeId> inputs) {
    Node node;
    node.kind = kind;
    node.inputs = std::move(inputs);
    return add(node);
  }
  NodeId aggregate(NodeId selector, NodeId sop, Value default_value = Value::of_int(0), Span span = {}) {
    Node node;
    node.kind = NodeKind::Aggregate;
    node.inputs = {selector, sop};
    node.default_value = default_value;
    node.span = span;
    return add(node);
  }
  NodeId width(NodeId selector) {
    Node node;
    node.kind = NodeKind::SelectorWidth;
    node.inputs = {selector};
    return add(node);
  }
  Program& output(NodeId id) {
    program.output = id;
    return program;
  }
};

std::vector<Value> chars(const std::string& text) {
  std::vector<Value> values;
  for (char c : text) values.push_back(Value::of_string(std::string(1, c)));
  return values;
}

std::vector<Value> ints(const std::vector<int64_t>& numbers) {
  std::vector<Value> values;
  for (int64_t n : numbers) values.push_back(Value::of_int(n));
  return values;
}

std::string shown(const std::vector<Value>& values) {
  std::string text;
  for (const Value& v : values) text += (text.empty() ? "" : " ") + to_display(v);
  return text;
}

std::string run(const Program& program, const std::vector<Value>& input, Mode mode = Mode::Bidirectional) {
  Interpreter interpreter(program, mode);
  return shown(interpreter.run(input));
}

}  // namespace

TEST_CASE("interpret: selector_width counts the selected keys, bidirectional and causal") {
  ProgramBuilder b;
  NodeId tokens = b.tokens();
  const Program& hist = b.output(b.width(b.select(tokens, tokens, Comparison::Eq)));
  CHECK(run(hist, chars("hello")) == "1 1 2 2 1");
  CHECK(run(hist, chars("hello"), Mode::Causal) == "1 1 1 2 1");
  CHECK(run(hist, chars("a")) == "1");
  CHECK(run(hist, chars("aaaa")) == "4 4 4 4");
  CHECK(run(hist, chars("aaaa"), Mode::Causal) == "1 2 3 4");
}

TEST_CASE("interpret: select compares keys against queries, keys first") {
  ProgramBuilder b;
  NodeId tokens = b.tokens();
  // Query q selects key k when tokens[k] < tokens[q]: how many tokens are smaller.
  const Program& smaller = b.output(b.width(b.select(tokens, tokens, Comparison::Lt)));
  CHECK(run(smaller, ints({3, 1, 2, 4})) == "2 0 1 3");
  CHECK(run(smaller, ints({3, 1, 2, 4}), Mode::Causal) == "0 0 1 3");
  ProgramBuilder c;
  NodeId t = c.tokens();
  const Program& different = c.output(c.width(c.select(t, t, Comparison::Ne)));
  CHECK(run(different, ints({3, 1, 2, 3})) == "2 3 3 2");
}

TEST_CASE("interpret: reverse reads the mirrored position") {
  // length as the reference builds it with a BOS: the width of an always-true selector.
  ProgramBuilder r;
  NodeId rt = r.tokens(), ri = r.indices();
  NodeId all = r.combine(NodeKind::SelectOr,
                         {r.select(ri, ri, Comparison::Lt), r.select(ri, ri, Comparison::Ge)});
  NodeId len = r.width(all);
  NodeId opposite = r.map(ElementOp::Sub, {r.map(ElementOp::Sub, {len, ri}), r.constant(Value::of_int(1))});
  const Program& reverse = r.output(r.aggregate(r.select(ri, opposite, Comparison::Eq), rt));
  CHECK(run(reverse, chars("hello")) == "o l l e h");
  CHECK(run(reverse, chars("a")) == "a");
  CHECK(run(reverse, ints({4, 7, 10})) == "10 7 4");
  // Causally, length at q is q + 1, so every position reads position 0.
  CHECK(run(reverse, chars("abc"), Mode::Causal) == "a a a");
}

TEST_CASE("interpret: an aggregate gives the default, a single value unchanged, or the exact mean") {
  ProgramBuilder b;
  NodeId tokens = b.tokens(), indices = b.indices();
  NodeId nowhere = b.select(indices, b.constant(Value::of_int(5)), Comparison::Eq);
  const Program& defaulted = b.output(b.aggregate(nowhere, tokens, Value::of_string("z")));
  CHECK(run(defaulted, chars("hey")) == "z z z");

  // One selected position: strings and bools pass through unchanged.
  ProgramBuilder s;
  NodeId st = s.tokens(), si = s.indices();
  NodeId previous = s.select(si, s.map(ElementOp::Sub, {si, s.constant(Value::of_int(1))}), Comparison::Eq);
  const Program& shifted = s.output(s.aggregate(previous, st, Value::of_string("_")));
  CHECK(run(shifted, chars("hello")) == "_ h e l l");
  CHECK(run(shifted, chars("hello"), Mode::Causal) == "_ h e l l");
  ProgramBuilder sb;
  NodeId sbt = sb.tokens(), sbi = sb.indices();
  NodeId is_l = sb.map(ElementOp::Eq, {sbt, sb.constant(Value::of_string("l"))});
  const Program& self_bool = sb.output(sb.aggregate(sb.select(sbi, sbi, Comparison::Eq), is_l));
  CHECK(run(self_bool, chars("hello")) == "False False True True False");

  // Several: the mean, exact, with bools counting 0 and 1.
  ProgramBuilder m;
  NodeId mt = m.tokens(), mi = m.indices();
  NodeId prefix = m.select(mi, mi, Comparison::Le);
  const Program& prefix_mean = m.output(m.aggregate(prefix, mt));
  CHECK(run(prefix_mean, ints({1, 2, 3, 6})) == "1 3/2 2 3");
  CHECK(run(prefix_mean, ints({-1, 0, 0})) == "-1 -1/2 -1/3");
  ProgramBuilder f;
  NodeId ft = f.tokens();
  NodeId all = f.select(ft, ft, Comparison::Eq);
  NodeId everywhere = f.combine(NodeKind::SelectNot, {f.combine(NodeKind::SelectAnd, {all, f.combine(NodeKind::SelectNot, {all})})});
  NodeId is_e = f.map(ElementOp::Eq, {ft, f.constant(Value::of_string("e"))});
  const Program& frac = f.output(f.aggregate(everywhere, is_e));
  CHECK(run(frac, chars("hey")) == "1/3 1/3 1/3");
  // Position 0 selects one bool, which passes through unchanged.
  CHECK(run(frac, chars("hey"), Mode::Causal) == "False 1/2 1/3");
  CHECK(run(frac, chars("eeee")) == "1 1 1 1");
}

TEST_CASE("interpret: causal mode hides later keys, also under not and or") {
  ProgramBuilder b;
  NodeId indices = b.indices();
  NodeId earlier = b.select(indices, indices, Comparison::Lt);
  const Program& not_earlier = b.output(b.width(b.combine(NodeKind::SelectNot, {earlier})));
  CHECK(run(not_earlier, chars("abcd")) == "4 3 2 1");
  CHECK(run(not_earlier, chars("abcd"), Mode::Causal) == "1 1 1 1");

  ProgramBuilder o;
  NodeId oi = o.indices();
  NodeId later_or_self = o.combine(NodeKind::SelectOr, {o.select(oi, oi, Comparison::Gt), o.select(oi, oi, Comparison::Eq)});
  const Program& width = o.output(o.width(later_or_self));
  CHECK(run(width, chars("abcd")) == "4 3 2 1");
  CHECK(run(width, chars("abcd"), Mode::Causal) == "1 1 1 1");
}

TEST_CASE("interpret: round((indices + 1) * prefix mean) is exact on long inputs") {
  ProgramBuilder b;
  NodeId tokens = b.tokens(), indices = b.indices();
  NodeId mean = b.aggregate(b.select(indices, indices, Comparison::Le), tokens);
  NodeId count = b.map(ElementOp::Add, {indices, b.constant(Value::of_int(1))});
  NodeId scaled = b.map(ElementOp::Mul, {count, mean});
  NodeId rounded = b.map(ElementOp::Round, {scaled});
  Program program = b.output(rounded);

  // Values whose prefix sums are not multiples of the prefix lengths, so every mean is a fraction
  // that no binary float holds exactly.
  std::vector<int64_t> numbers;
  for (int i = 0; i < 500; ++i) numbers.push_back(1 + (i * 7919) % 13);
  Interpreter interpreter(program, Mode::Bidirectional);
  std::vector<Value> out = interpreter.run(ints(numbers));
  int64_t sum = 0;
  for (size_t i = 0; i < numbers.size(); ++i) {
    sum += numbers[i];
    REQUIRE(out[i].is_number());
    REQUIRE(out[i].number == Rational::integer(sum));
    // The product before rounding is already the exact integer.
    const Value& product = interpreter.last_value(scaled)[i];
    REQUIRE(product.number == Rational::integer(sum));
  }
  // A mean is kept reduced: (1 + 0 + 2) / 3 is 1/1, (1 + 0) / 2 is 1/2.
  interpreter.run(ints({1, 2}));
  CHECK(interpreter.last_value(mean)[1].number == Rational{3, 2});
  interpreter.run(ints({1, 0, 2}));
  CHECK(interpreter.last_value(mean)[2].number == Rational{1, 1});
  CHECK(interpreter.last_value(mean)[1].number == Rational{1, 2});
}

TEST_CASE("interpret: means of extreme rationals are exact, never wrapped") {
  ProgramBuilder b;
  NodeId tokens = b.tokens(), indices = b.indices();
  Program program = b.output(b.aggregate(b.select(indices, indices, Comparison::Le), tokens));
  Interpreter interpreter(program, Mode::Bidirectional);
  // The sum overflows int64, the mean does not.
  std::vector<Value> big = interpreter.run(ints({INT64_MAX, INT64_MAX}));
  CHECK(big[1].number == Rational::integer(INT64_MAX));
  // 1/2^40 and 1/3^25 have no common factor: their mean's denominator needs about 80 bits.
  std::vector<Value> tiny = {Value::of_number({1, int64_t(1) << 40}), Value::of_number({1, 847288609443})};
  CHECK(to_display(interpreter.run(tiny)[1]) == "1946800237219/1863207356329472909377536");
  // A big value among them: (2^64 + 1 + 1) / 2.
  std::vector<Value> wide = {Value::of_number(Rational::of_decimal("18446744073709551617", "1")), Value::of_int(1)};
  CHECK(interpreter.run(wide)[1] == Value::of_number(Rational::of_decimal("9223372036854775809", "1")));
}

TEST_CASE("interpret: a mean over strings is undefined on the input, naming the position") {
  auto source = std::make_shared<SourceFile>();
  source->name = "mean.rasp";
  source->text = "x = aggregate(select(indices, indices, <=), tokens);\n";
  Span span{source, 4, uint32_t(source->text.size() - 2)};
  ProgramBuilder b;
  NodeId tokens = b.tokens(), indices = b.indices();
  Program program = b.output(b.aggregate(b.select(indices, indices, Comparison::Le), tokens, Value::of_int(0), span));

  // Position 0 selects only itself; position 1 averages "a" and "b".
  Interpreter interpreter(program, Mode::Causal);
  try {
    interpreter.run(chars("abc"));
    FAIL("a mean over strings must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 1);
    CHECK(std::string(error.what()) ==
          "mean.rasp:1:5: error: at position 1 this aggregate selects 2 positions and would average their "
          "values (\"a\", \"b\"), but a mean needs numbers; make the selector pick at most one position there, "
          "or aggregate a numeric s-op\n"
          "  x = aggregate(select(indices, indices, <=), tokens);\n"
          "      ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
  }
  // Long selections are abbreviated.
  try {
    interpreter.run(chars("abcdefg"));
    FAIL("a mean over strings must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 1);
  }
  Interpreter bidirectional(program, Mode::Bidirectional);
  try {
    bidirectional.run(chars("abcdef"));
    FAIL("a mean over strings must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 1);
    CHECK(std::string(error.what()).find("(\"a\", \"b\")") != std::string::npos);
  }
  ProgramBuilder all;
  NodeId at = all.tokens();
  Program everything = all.output(all.aggregate(all.select(at, at, Comparison::Ne), at, Value::of_int(0), span));
  Interpreter wide(everything, Mode::Bidirectional);
  try {
    wide.run(chars("abcdef"));
    FAIL("a mean over strings must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 0);
    CHECK(std::string(error.what()).find("selects 5 positions and would average their values (\"b\", \"c\", "
                                         "\"d\", \"e\", ...)") != std::string::npos);
  }
  // The same aggregate over one string each is fine.
  CHECK(run(program, chars("a")) == "a");
}

TEST_CASE("interpret: an elementwise error is undefined on the input at its position") {
  auto source = std::make_shared<SourceFile>();
  source->name = "table.rasp";
  source->text = "{\"a\": 1}[tokens];\n";
  Span span{source, 0, 16};
  ProgramBuilder b;
  NodeId tokens = b.tokens();
  NodeId lookup = b.map(ElementOp::LookupTable, {tokens}, span);
  b.program.nodes[size_t(lookup)].table_keys = {Value::of_string("a")};
  b.program.nodes[size_t(lookup)].table_values = {Value::of_int(1)};
  Program program = b.output(lookup);
  CHECK(run(program, chars("aa")) == "1 1");
  Interpreter interpreter(program, Mode::Bidirectional);
  try {
    interpreter.run(chars("aab"));
    FAIL("a missing key must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 2);
    CHECK(std::string(error.what()) ==
          "table.rasp:1:1: error: the table has no entry for \"b\"\n"
          "  {\"a\": 1}[tokens];\n"
          "  ^~~~~~~~~~~~~~~~\n"
          "note: this happens at position 2 of the input\n");
  }
}

TEST_CASE("interpret: a trace holds every node, the unused ones too when they are defined") {
  ProgramBuilder b;
  NodeId tokens = b.tokens(), indices = b.indices();
  NodeId same = b.select(tokens, tokens, Comparison::Eq);
  NodeId hist = b.width(same);
  // Not needed by the output, and undefined on inputs with repeated letters (a mean of strings).
  NodeId unused_mean = b.aggregate(same, tokens);
  NodeId unused_after = b.map(ElementOp::Add, {unused_mean, b.constant(Value::of_string("!"))});
  NodeId unused_fine = b.map(ElementOp::Add, {indices, b.constant(Value::of_int(10))});
  NodeId output = b.map(ElementOp::Mul, {hist, b.constant(Value::of_int(2))});
  Program program = b.output(output);

  Interpreter interpreter(program, Mode::Bidirectional);
  Trace trace;
  CHECK(shown(interpreter.run(chars("abca"), &trace)) == "4 2 2 4");
  REQUIRE(trace.sop.size() == program.nodes.size());
  REQUIRE(trace.selector.size() == program.nodes.size());
  CHECK(shown(trace.sop[size_t(hist)]) == "2 1 1 2");
  CHECK(shown(trace.sop[size_t(unused_fine)]) == "10 11 12 13");
  CHECK(trace.sop[size_t(unused_mean)].empty());
  CHECK(trace.sop[size_t(unused_after)].empty());
  CHECK(trace.sop[size_t(same)].empty());
  CHECK(trace.selector[size_t(same)] == std::vector<uint8_t>{1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1});
  CHECK(trace.selector[size_t(hist)].empty());
  CHECK(shown(interpreter.last_value(unused_fine)) == "10 11 12 13");

  // Where the unused mean is defined, the trace shows it.
  CHECK(shown(interpreter.run(chars("abc"), &trace)) == "2 2 2");
  CHECK(shown(trace.sop[size_t(unused_after)]) == "a! b! c!");

  // Without a trace only what the output needs is evaluated.
  interpreter.run(chars("abc"));
  CHECK_THROWS_AS(interpreter.last_value(unused_fine), std::logic_error);
  CHECK(shown(interpreter.last_value(hist)) == "1 1 1");
}

TEST_CASE("interpret: buffers are reused across inputs of different lengths") {
  ProgramBuilder b;
  NodeId tokens = b.tokens();
  Program program = b.output(b.width(b.select(tokens, tokens, Comparison::Eq)));
  Interpreter interpreter(program, Mode::Bidirectional);
  CHECK(shown(interpreter.run(chars("aaaaaa"))) == "6 6 6 6 6 6");
  CHECK(shown(interpreter.run(chars("ab"))) == "1 1");
  CHECK(shown(interpreter.run(chars("abba"))) == "2 2 2 2");
  CHECK(interpreter.run({}).empty());
}

TEST_CASE("interpret: a program must output an s-op") {
  ProgramBuilder b;
  NodeId tokens = b.tokens();
  b.select(tokens, tokens, Comparison::Eq);
  Program selector_output = b.output(1);
  CHECK_THROWS_WITH(Interpreter(selector_output, Mode::Bidirectional),
                    "error: the output is a selector, not an s-op; aggregate it or take its selector_width\n");
  Program none = b.program;
  none.output = -1;
  CHECK_THROWS_AS(Interpreter(none, Mode::Bidirectional), UserError);
}

TEST_CASE("interpret: from source, a mean over strings points at the aggregate in the file") {
  auto source = std::make_shared<SourceFile>();
  source->name = "letters.rasp";
  source->text = "so_far = select(indices, indices, <=);\nletters = aggregate(so_far, tokens);\nletters;\n";
  Program program = evaluate_program(source);
  CHECK(run(program, chars("a")) == "a");
  Interpreter interpreter(program, Mode::Bidirectional);
  try {
    interpreter.run(chars("ab"));
    FAIL("a mean over strings must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 1);
    CHECK(std::string(error.what()) ==
          "letters.rasp:2:11: error: at position 1 this aggregate selects 2 positions and would average their "
          "values (\"a\", \"b\"), but a mean needs numbers; make the selector pick at most one position there, "
          "or aggregate a numeric s-op\n"
          "  letters = aggregate(so_far, tokens);\n"
          "            ^~~~~~~~~~~~~~~~~~~~~~~~~\n");
  }
}

TEST_CASE("interpret: from source, prefix sums through exact means on a long input") {
  auto source = std::make_shared<SourceFile>();
  source->name = "prefix.rasp";
  source->text = "round((indices + 1) * aggregate(select(indices, indices, <=), tokens));\n";
  Program program = evaluate_program(source);
  std::vector<int64_t> numbers;
  std::string expected;
  int64_t sum = 0;
  for (int i = 0; i < 300; ++i) {
    numbers.push_back((i * 37) % 11 - 5);
    sum += numbers.back();
    expected += (expected.empty() ? "" : " ") + std::to_string(sum);
  }
  CHECK(run(program, ints(numbers)) == expected);
  CHECK(run(program, ints(numbers), Mode::Causal) == expected);
}

TEST_CASE("interpret: a select that cannot compare its values is undefined at the query's position") {
  auto source = std::make_shared<SourceFile>();
  source->name = "compare.rasp";
  source->text = "selector_width(select(tokens, 1, <));\n";
  Program program = evaluate_program(source);
  CHECK(run(program, ints({0, 1, 2})) == "1 1 1");
  Interpreter interpreter(program, Mode::Bidirectional);
  try {
    interpreter.run(chars("ab"));
    FAIL("comparing strings with a number must be refused");
  } catch (const UndefinedOnInput& error) {
    CHECK(error.position == 0);
    std::string message = error.what();
    CHECK(message.rfind("compare.rasp:1:16: error: ", 0) == 0);
    CHECK(message.find("note: this happens at position 0 of the input\n") != std::string::npos);
  }
}
