// The parser: RASP's precedence table (LANGUAGE.md), statements, and syntax errors.
#include <catch2/catch.hpp>

#include "language/parse.hpp"

using namespace raspc;

namespace {

std::shared_ptr<const SourceFile> source(const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "t.rasp";
  file->text = text;
  return file;
}

const char* binary_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::Pow: return "^";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
  }
  return "?";
}

// Fully parenthesised, so the tree's shape is visible.
std::string show(const Expr& e) {
  auto child = [&](size_t i) { return show(*e.children[i]); };
  auto all = [&](size_t from, const char* separator) {
    std::string out;
    for (size_t i = from; i < e.children.size(); ++i) out += (i > from ? separator : "") + child(i);
    return out;
  };
  switch (e.kind) {
    case ExprKind::Number: return to_display(Value::of_number(e.number));
    case ExprKind::String: return "\"" + e.text + "\"";
    case ExprKind::Name: return e.text;
    case ExprKind::List: return "[" + all(0, ", ") + "]";
    case ExprKind::Dict: return "{" + all(0, ", ") + "}";
    case ExprKind::ListComp: return "[" + child(0) + " for " + e.loop_names[0] + " in " + child(1) + "]";
    case ExprKind::DictComp: return "{" + child(0) + ": " + child(1) + " for " + e.loop_names[0] + " in " + child(2) + "}";
    case ExprKind::Index: return child(0) + "[" + child(1) + "]";
    case ExprKind::Call: return child(0) + "(" + all(1, ", ") + ")";
    case ExprKind::Unary:
      return std::string("(") + (e.unary == UnaryOp::Not ? "not " : (e.unary == UnaryOp::Neg ? "-" : "+")) + child(0) + ")";
    case ExprKind::Binary: return "(" + child(0) + " " + binary_text(e.binary) + " " + child(1) + ")";
    case ExprKind::IfElse: return "(" + child(0) + " if " + child(1) + " else " + child(2) + ")";
    case ExprKind::In: return "(" + child(0) + " in " + child(1) + ")";
    case ExprKind::Select: {
      const char* ops[] = {"==", "!=", "<", ">", "<=", ">="};
      return "select(" + child(0) + ", " + child(1) + ", " + ops[int(e.comparison)] + ")";
    }
  }
  return "?";
}

std::string parsed(const std::string& expression) {
  auto module = parse_module(source(expression + ";"));
  REQUIRE(module->statements.size() == 1);
  REQUIRE(module->statements[0]->kind == StmtKind::Expression);
  return show(*module->statements[0]->exprs[0]);
}

std::string parse_error(const std::string& text) {
  try {
    parse_module(source(text));
  } catch (const UserError& e) {
    std::string message = e.what();
    return message.substr(0, message.find('\n'));
  }
  return "no error";
}

}  // namespace

TEST_CASE("parse: prefix operators bind tighter than every binary operator") {
  CHECK(parsed("not tokens == \"a\"") == "((not tokens) == \"a\")");
  CHECK(parsed("-x ^ 2") == "((-x) ^ 2)");
  CHECK(parsed("not a and b") == "((not a) and b)");
  CHECK(parsed("- - x") == "(-(-x))");
  CHECK(parsed("-x[0]") == "(-x[0])");
  CHECK(parsed("not f(x)") == "(not f(x))");
}

TEST_CASE("parse: binary levels and left associativity") {
  CHECK(parsed("2 ^ 3 ^ 2") == "((2 ^ 3) ^ 2)");
  CHECK(parsed("a + b * c ^ d") == "(a + (b * (c ^ d)))");
  CHECK(parsed("a % b * c") == "(a % (b * c))");
  CHECK(parsed("a * b % c") == "((a * b) % c)");
  CHECK(parsed("a + b % c") == "(a + (b % c))");
  CHECK(parsed("a - b - c") == "((a - b) - c)");
  CHECK(parsed("a / b / c") == "((a / b) / c)");
  CHECK(parsed("a + 1 == b") == "((a + 1) == b)");
  CHECK(parsed("a < b < c") == "((a < b) < c)");
  CHECK(parsed("a == b and c or d") == "(((a == b) and c) or d)");
  CHECK(parsed("a or b and c") == "((a or b) and c)");
}

TEST_CASE("parse: conditional and membership are the loosest levels") {
  CHECK(parsed("\"a\" if indices % 2 == 1 else tokens") == "(\"a\" if ((indices % 2) == 1) else tokens)");
  CHECK(parsed("a if b else c if d else e") == "((a if b else c) if d else e)");
  CHECK(parsed("a if x in l else b") == "(a if (x in l) else b)");
  CHECK(parsed("a and b if c else d") == "((a and b) if c else d)");
  CHECK(parsed("tokens in [\"a\", \"e\"]") == "(tokens in [\"a\", \"e\"])");
  CHECK(parsed("a == b in c") == "((a == b) in c)");
  CHECK(parsed("x in y in z") == "((x in y) in z)");
}

TEST_CASE("parse: primaries, calls, indexing, select, lists and dicts") {
  CHECK(parsed("select(indices, length - indices - 1, ==)") == "select(indices, ((length - indices) - 1), ==)");
  CHECK(parsed("select(tokens, tokens, !=)") == "select(tokens, tokens, !=)");
  CHECK(parsed("aggregate(s, tokens, \"z\")") == "aggregate(s, tokens, \"z\")");
  CHECK(parsed("round(x) + indicator(y)") == "(round(x) + indicator(y))");
  CHECK(parsed("f(a)(b)[0][1]") == "f(a)(b)[0][1]");
  CHECK(parsed("(a + b) * c") == "((a + b) * c)");
  CHECK(parsed("[1, 2.5, \"x\",]") == "[1, 5/2, \"x\"]");
  CHECK(parsed("[]") == "[]");
  CHECK(parsed("{\"a\": 1, 2: 3}") == "{\"a\", 1, 2, 3}");
  CHECK(parsed("[x * 2 for x in range(3)]") == "[(x * 2) for x in range(3)]");
  CHECK(parsed("{x: x in l for x in l}") == "{x: (x in l) for x in l}");
  CHECK(parsed("f()") == "f()");
}

TEST_CASE("parse: statements") {
  auto module = parse_module(source(
      "a, b = 1, 2; c = f(x);\n"
      "def f(x, y) {\n  def g(z) { return z; }\n  t = g(x);\n  return t, y;\n}\n"
      "for k, v in zip(l, m) { s = k; }\n"
      "load \"lib\";\n"
      "tokens;  # the output\n"));
  const auto& s = module->statements;
  REQUIRE(s.size() == 6);
  CHECK(s[0]->kind == StmtKind::Assign);
  CHECK(s[0]->names == std::vector<std::string>{"a", "b"});
  CHECK(s[0]->exprs.size() == 2);
  CHECK(s[1]->kind == StmtKind::Assign);
  CHECK(s[2]->kind == StmtKind::Def);
  CHECK(s[2]->name == "f");
  CHECK(s[2]->names == std::vector<std::string>{"x", "y"});
  REQUIRE(s[2]->body.size() == 3);
  CHECK(s[2]->body[0]->kind == StmtKind::Def);
  CHECK(s[2]->body[2]->kind == StmtKind::Return);
  CHECK(s[2]->body[2]->exprs.size() == 2);
  CHECK(s[3]->kind == StmtKind::For);
  CHECK(s[3]->names == std::vector<std::string>{"k", "v"});
  CHECK(s[3]->body.size() == 1);
  CHECK(s[4]->kind == StmtKind::Load);
  CHECK(s[4]->name == "lib");
  CHECK(s[5]->kind == StmtKind::Expression);
}

TEST_CASE("parse: syntax errors say what was expected and what was found") {
  CHECK(parse_error("x = 1") == "t.rasp:1:6: error: expected `;` after the assignment but found the end of the file");
  CHECK(parse_error("tokens\nx = 2;") == "t.rasp:1:7: error: expected `;` after the expression but found the name `x` on line 2");
  CHECK(parse_error("x = (1 + 2;") == "t.rasp:1:11: error: expected `)` to close the `(` at 1:5 but found `;`");
  CHECK(parse_error("x = 1 +;") == "t.rasp:1:8: error: expected an expression but found `;`");
  CHECK(parse_error("x = a != b;") ==
        "t.rasp:1:7: error: `!=` exists only as a select operator; write `not (a == b)` instead");
  CHECK(parse_error("select(a, b, +);") ==
        "t.rasp:1:14: error: the third argument of `select` must be a comparison (== != < > <= >=), not `+`");
  CHECK(parse_error("def f(x) { return x; y = 1; }") == "t.rasp:1:12: error: `return` must be the last statement of `f`");
  CHECK(parse_error("def f(x) { y = x; }") == "t.rasp:1:19: error: the function `f` must end with a `return` statement");
  CHECK(parse_error("return 1;") == "t.rasp:1:1: error: `return` is only allowed as the last statement of a `def`");
  CHECK(parse_error("f(x) = 1;") == "t.rasp:1:1: error: only names can be assigned to, not this expression");
  CHECK(parse_error("[1, 2;") == "t.rasp:1:6: error: expected `]` to close the list opened at 1:1 but found `;`");
  CHECK(parse_error("for x in l { x; ") ==
        "t.rasp:1:16: error: expected `}` to close the `for` loop but found the end of the file");
  CHECK(parse_error("load lib;") == "t.rasp:1:6: error: expected a string after `load` (the file name, in double quotes) but found the name `lib`");
  CHECK(parse_error("a, b;") == "t.rasp:1:4: error: a list of expressions separated by `,` must be followed by `=` (an assignment)");
}

TEST_CASE("parse: nesting is bounded, not a stack overflow") {
  std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')') + ";";
  CHECK(parse_error(deep) ==
        "t.rasp:1:200: error: the program nests deeper than 200 levels here; split the expression into named parts");
  std::string negations;
  for (int i = 0; i < 5000; ++i) negations += "-";
  CHECK(parse_error(negations + "1;").find("nests deeper than 200 levels") != std::string::npos);
  std::string fine = std::string(50, '(') + "1" + std::string(50, ')') + ";";
  CHECK(parse_error(fine) == "no error");
}
