// The syntax tree of a RASP file. Every node keeps the span of the source it came from.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "language/program.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

enum class ExprKind : uint8_t {
  Number,    // `number`
  String,    // `text`
  Name,      // `text`
  List,      // children: items
  Dict,      // children: key0, value0, key1, value1, ...
  ListComp,  // children: {value, iterable}; loop_names
  DictComp,  // children: {key, value, iterable}; loop_names
  Index,     // children: {indexed, index}
  Call,      // children: {callee, arguments...}
  Unary,     // children: {operand}; unary
  Binary,    // children: {left, right}; binary
  IfElse,    // children: {then, condition, otherwise} (source order: `then if condition else otherwise`)
  In,        // children: {element, container}
  Select,    // children: {keys, queries}; comparison
};

enum class UnaryOp : uint8_t { Not, Neg, Pos };
enum class BinaryOp : uint8_t { Pow, Mul, Div, Mod, Add, Sub, Eq, Lt, Gt, Le, Ge, And, Or };

struct Expr {
  ExprKind kind = ExprKind::Number;
  Span span;
  Rational number;
  std::string text;
  UnaryOp unary = UnaryOp::Not;
  BinaryOp binary = BinaryOp::Add;
  Comparison comparison = Comparison::Eq;
  Span operator_span;  // Unary, Binary, Select's comparison, In
  std::vector<std::unique_ptr<Expr>> children;
  std::vector<std::string> loop_names;  // ListComp, DictComp
  std::vector<Span> loop_name_spans;
};

enum class StmtKind : uint8_t {
  Expression,  // exprs: {value}
  Assign,      // names = exprs (one or several on each side)
  Def,         // name(names) { body }; the last statement of body is a Return
  Return,      // exprs: the returned values
  For,         // for names in exprs[0] { body }
  Load,        // load "name";  (name in `name`)
};

struct Stmt {
  StmtKind kind = StmtKind::Expression;
  Span span;
  std::string name;       // Def: function name; Load: file name
  Span name_span;
  std::vector<std::string> names;  // Assign targets, Def parameters, For variables
  std::vector<Span> name_spans;
  std::vector<std::unique_ptr<Expr>> exprs;
  std::vector<std::unique_ptr<Stmt>> body;
};

struct Module {
  std::shared_ptr<const SourceFile> file;
  std::vector<std::unique_ptr<Stmt>> statements;
};

}  // namespace raspc
