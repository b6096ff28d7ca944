// Source text to tokens. The lexer knows RASP's few keywords and operators; it reports a
// character it cannot read, or a string without its closing quote, at that character.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "language/value.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

enum class TokenKind : uint8_t {
  Number,      // 12, 1.5 (held exactly in `number`)
  String,      // "text": `text` holds the content without quotes
  Identifier,  // `text`
  // keywords
  Def, Return, For, In, If, Else, And, Or, Not, Load, Select,
  // punctuation and operators
  LeftParen, RightParen, LeftBracket, RightBracket, LeftBrace, RightBrace,
  Comma, Semicolon, Colon, Assign,
  Plus, Minus, Star, Slash, Percent, Caret,
  EqualEqual, NotEqual, Less, Greater, LessEqual, GreaterEqual,
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  Span span;
  std::string text;  // identifier name, string content, or the token's source text
  Rational number;
};

// The whole file's tokens, ending with one End token (spanning the file's last byte).
std::vector<Token> lex(const std::shared_ptr<const SourceFile>& file);

// How a token kind is named in messages: "`;`", "a name", "the end of the file".
std::string describe(TokenKind kind);
// How a found token is named in messages: "`x`", "the number 12", "the end of the file".
std::string describe(const Token& token);

}  // namespace raspc
