// Tokens to syntax tree, with RASP's precedence (LANGUAGE.md): postfix `[]` and calls bind
// tightest, then prefix `not - +`, then `^ * / % + -`, comparisons, `and`/`or`, `if else`, and
// `in` loosest; every binary operator is left-associative.
#pragma once

#include <memory>

#include "language/ast.hpp"

namespace raspc {

// Expressions nest at most this deep (parentheses, operators, lists), so a hostile input
// gives an error instead of exhausting the stack.
constexpr int kMaxNesting = 200;

std::unique_ptr<Module> parse_module(const std::shared_ptr<const SourceFile>& file);

}  // namespace raspc
