// Atom values: exact rationals, Python's equality across kinds, display, and the elementwise
// semantics shared by the evaluator, the interpreter and the compiler.
#include <catch2/catch.hpp>

#include "language/program.hpp"
#include "language/value.hpp"

using namespace raspc;

namespace {

Value apply(ElementOp op, std::vector<Value> in) {
  Node node;
  node.kind = NodeKind::Elementwise;
  node.op = op;
  return apply_elementwise(node, in.data());
}

Value q(int64_t num, int64_t den) { return Value::of_number({num, den}); }

std::string error_of(ElementOp op, std::vector<Value> in) {
  try {
    apply(op, in);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("value: display and source forms") {
  CHECK(to_display(Value::of_int(12)) == "12");
  CHECK(to_display(Value::of_int(-3)) == "-3");
  CHECK(to_display(q(1, 3)) == "1/3");
  CHECK(to_display(q(-1, 2)) == "-1/2");
  CHECK(to_display(Value::of_bool(true)) == "True");
  CHECK(to_display(Value::of_bool(false)) == "False");
  CHECK(to_display(Value::of_string("ab")) == "ab");
  CHECK(to_source(Value::of_string("ab")) == "\"ab\"");
  CHECK(to_source(q(3, 2)) == "3/2");
}

TEST_CASE("value: equality follows Python across kinds") {
  CHECK(Value::of_bool(true) == Value::of_int(1));
  CHECK(Value::of_bool(false) == Value::of_int(0));
  CHECK_FALSE(Value::of_bool(true) == Value::of_int(2));
  CHECK_FALSE(Value::of_string("1") == Value::of_int(1));
  CHECK(Value::of_string("ab") == Value::of_string("ab"));
  CHECK(q(2, 4).number == Rational{1, 2});  // of_number reduces
  CHECK(q(3, -6).number == Rational{-1, 2});
  CHECK(q(2, 4) == q(1, 2));
  CHECK(ValueHash()(Value::of_bool(true)) == ValueHash()(Value::of_int(1)));
}

TEST_CASE("value: the order puts numbers, then bools, then strings") {
  CHECK(value_less(Value::of_int(-5), q(1, 3)));
  CHECK(value_less(q(1, 3), Value::of_int(1)));
  CHECK(value_less(Value::of_int(100), Value::of_bool(false)));
  CHECK(value_less(Value::of_bool(true), Value::of_string("a")));
  CHECK(value_less(Value::of_string("a"), Value::of_string("b")));
  CHECK_FALSE(value_less(Value::of_string("b"), Value::of_string("b")));
}

TEST_CASE("value: arithmetic is exact and Python-like") {
  CHECK(apply(ElementOp::Add, {Value::of_bool(true), Value::of_int(1)}) == Value::of_int(2));
  CHECK(apply(ElementOp::Div, {Value::of_int(1), Value::of_int(3)}).number == Rational{1, 3});
  CHECK(apply(ElementOp::Add, {q(1, 3), q(2, 3)}).number == Rational{1, 1});
  CHECK(apply(ElementOp::Mul, {q(2, 3), Value::of_int(3)}).number == Rational{2, 1});
  CHECK(apply(ElementOp::Mod, {Value::of_int(-7), Value::of_int(3)}) == Value::of_int(2));
  CHECK(apply(ElementOp::Mod, {Value::of_int(7), Value::of_int(-3)}) == Value::of_int(-2));
  CHECK(apply(ElementOp::Mod, {q(7, 2), Value::of_int(2)}).number == Rational{3, 2});
  CHECK(apply(ElementOp::Pow, {Value::of_int(2), Value::of_int(10)}) == Value::of_int(1024));
  CHECK(apply(ElementOp::Pow, {Value::of_int(2), Value::of_int(-2)}).number == Rational{1, 4});
  CHECK(apply(ElementOp::Add, {Value::of_string("a"), Value::of_string("b")}) == Value::of_string("ab"));
  CHECK(apply(ElementOp::Mul, {Value::of_string("ab"), Value::of_int(2)}) == Value::of_string("abab"));
  CHECK(apply(ElementOp::Neg, {Value::of_bool(true)}) == Value::of_int(-1));
  CHECK(apply(ElementOp::Not, {Value::of_string("")}) == Value::of_bool(true));
  CHECK(apply(ElementOp::Indicator, {Value::of_bool(true)}) == Value::of_int(1));
  CHECK(apply(ElementOp::And, {Value::of_int(1), Value::of_int(2)}) == Value::of_int(2));
  CHECK(apply(ElementOp::Or, {Value::of_int(0), Value::of_string("x")}) == Value::of_string("x"));
  CHECK(apply(ElementOp::Lt, {Value::of_string("a"), Value::of_string("b")}) == Value::of_bool(true));
  CHECK(apply(ElementOp::Ge, {q(1, 2), Value::of_bool(false)}) == Value::of_bool(true));
}

TEST_CASE("value: round is round-half-to-even") {
  CHECK(apply(ElementOp::Round, {q(5, 2)}) == Value::of_int(2));
  CHECK(apply(ElementOp::Round, {q(7, 2)}) == Value::of_int(4));
  CHECK(apply(ElementOp::Round, {q(-5, 2)}) == Value::of_int(-2));
  CHECK(apply(ElementOp::Round, {q(-7, 2)}) == Value::of_int(-4));
  CHECK(apply(ElementOp::Round, {q(5, 3)}) == Value::of_int(2));
  CHECK(apply(ElementOp::Round, {q(-5, 3)}) == Value::of_int(-2));
  CHECK(apply(ElementOp::Round, {Value::of_int(7)}) == Value::of_int(7));
}

TEST_CASE("value: tables and the conditional") {
  Node in_table;
  in_table.kind = NodeKind::Elementwise;
  in_table.op = ElementOp::InTable;
  in_table.table_keys = {Value::of_string("a"), Value::of_int(1)};
  Value t = Value::of_bool(true);
  CHECK(apply_elementwise(in_table, &t) == Value::of_bool(true));  // True == 1
  Value z = Value::of_string("z");
  CHECK(apply_elementwise(in_table, &z) == Value::of_bool(false));
  Node lookup = in_table;
  lookup.op = ElementOp::LookupTable;
  lookup.table_values = {Value::of_int(10), Value::of_int(20)};
  Value a = Value::of_string("a");
  CHECK(apply_elementwise(lookup, &a) == Value::of_int(10));
  CHECK_THROWS_WITH(apply_elementwise(lookup, &z), "error: the table has no entry for \"z\"\n");
  CHECK(apply(ElementOp::IfElse, {Value::of_string("x"), Value::of_bool(false), Value::of_string("y")}) ==
        Value::of_string("y"));
}

TEST_CASE("value: type errors and overflow say what went wrong") {
  CHECK(error_of(ElementOp::Add, {Value::of_string("a"), Value::of_int(1)}) ==
        "error: cannot add a string and a number\n");
  CHECK(error_of(ElementOp::Sub, {Value::of_string("a"), Value::of_int(1)}) ==
        "error: cannot subtract a number from a string\n");
  CHECK(error_of(ElementOp::Lt, {Value::of_string("a"), Value::of_int(1)}) ==
        "error: cannot compare a string and a number\n");
  CHECK(error_of(ElementOp::Div, {Value::of_int(1), Value::of_int(0)}) == "error: division by zero\n");
  CHECK(error_of(ElementOp::Pow, {Value::of_int(2), Value::of_int(65537)}) ==
        "error: the value of this expression has more than 65,536 bits\n");
  CHECK(error_of(ElementOp::Pow, {q(1, 3), Value::of_int(-100000)}) ==
        "error: the value of this expression has more than 65,536 bits\n");
  CHECK(error_of(ElementOp::Pow, {Value::of_int(2), q(1, 2)}) ==
        "error: cannot raise a number to a fractional power exactly; use an integer exponent\n");
  CHECK(error_of(ElementOp::Neg, {Value::of_string("a")}) == "error: cannot negate a string\n");
}

TEST_CASE("value: select comparisons on atoms") {
  Span nowhere;
  CHECK(compare_select(Comparison::Ne, Value::of_int(1), Value::of_int(2), nowhere));
  CHECK(compare_select(Comparison::Le, Value::of_int(2), Value::of_int(2), nowhere));
  CHECK_FALSE(compare_select(Comparison::Gt, Value::of_int(2), Value::of_int(2), nowhere));
  CHECK(compare_select(Comparison::Eq, Value::of_bool(true), Value::of_int(1), nowhere));
  CHECK_THROWS_WITH(compare_select(Comparison::Lt, Value::of_string("a"), Value::of_int(1), nowhere),
                    "error: cannot compare a string and a number\n");
}

TEST_CASE("value: numbers of any size are exact, and each value has one form") {
  // 3 * 0.00001 as Tracr programs compute it: the float 0.00001 is 5902958103587057 / 2^69.
  const Value tie_break = Value::of_number(Rational::of_decimal("5902958103587057", "590295810358705651712"));
  CHECK(tie_break.number.is_big());
  const Value three = apply(ElementOp::Mul, {Value::of_int(3), tie_break});
  CHECK(to_display(three) == "17708874310761171/590295810358705651712");
  // The sum of a big value and its negation is the small 0, equal (and hashing equal) to of_int(0).
  const Value zero = apply(ElementOp::Sub, {three, three});
  CHECK(!zero.number.is_big());
  CHECK(zero == Value::of_int(0));
  CHECK(ValueHash()(zero) == ValueHash()(Value::of_int(0)));
  // Results that fit int64 again come back small; the same big value made twice is one value.
  const Value two63 = apply(ElementOp::Pow, {Value::of_int(2), Value::of_int(63)});
  CHECK(two63.number.is_big());
  CHECK(to_display(two63) == "9223372036854775808");
  CHECK(apply(ElementOp::Sub, {two63, Value::of_int(1)}) == Value::of_int(INT64_MAX));
  CHECK(apply(ElementOp::Add, {Value::of_int(INT64_MAX), Value::of_int(1)}) == two63);
  CHECK(apply(ElementOp::Neg, {Value::of_int(INT64_MIN + 1)}) == Value::of_int(INT64_MAX));
  CHECK(to_display(apply(ElementOp::Sub, {Value::of_int(INT64_MIN + 1), Value::of_int(1)})) == "-9223372036854775808");
  // Order, comparisons, round, modulo and division across the two forms.
  CHECK(value_less(q(1, 100000), tie_break));  // the float 0.00001 is just above 1/100000
  CHECK(value_less(Value::of_int(INT64_MAX), two63));
  CHECK(value_less(apply(ElementOp::Neg, {two63}), Value::of_int(INT64_MIN + 1)));
  CHECK(apply(ElementOp::Lt, {three, tie_break}) == Value::of_bool(false));
  const Value half_big = apply(ElementOp::Add, {two63, q(1, 2)});  // 2^63 + 1/2: ties to the even 2^63
  CHECK(apply(ElementOp::Round, {half_big}) == two63);
  CHECK(apply(ElementOp::Round, {apply(ElementOp::Add, {half_big, Value::of_int(1)})}) ==
        apply(ElementOp::Add, {two63, Value::of_int(2)}));
  CHECK(apply(ElementOp::Mod, {two63, Value::of_int(10)}) == Value::of_int(8));
  CHECK(apply(ElementOp::Div, {two63, two63}) == Value::of_int(1));
  CHECK(apply(ElementOp::Pow, {q(1, 2), Value::of_int(70)}).number.to_string() == "1/1180591620717411303424");
  // The display form reads back.
  Rational parsed;
  REQUIRE(parse_rational("17708874310761171/590295810358705651712", parsed));
  CHECK(Value::of_number(parsed) == three);
  CHECK_FALSE(parse_rational("1/0", parsed));
  CHECK_FALSE(parse_rational("1.5", parsed));
  CHECK(Value::of_number(Rational::of(INT64_MIN, 1)).number.is_big());  // so that negating a small value stays small
}
