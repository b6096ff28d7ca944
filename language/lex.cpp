#include "language/lex.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_map>

#include "support/utf8.hpp"

namespace raspc {

namespace {

const std::unordered_map<std::string, TokenKind>& keywords() {
  static const std::unordered_map<std::string, TokenKind> table = {
      {"def", TokenKind::Def},     {"return", TokenKind::Return}, {"for", TokenKind::For},
      {"in", TokenKind::In},       {"if", TokenKind::If},         {"else", TokenKind::Else},
      {"and", TokenKind::And},     {"or", TokenKind::Or},         {"not", TokenKind::Not},
      {"load", TokenKind::Load},   {"select", TokenKind::Select},
  };
  return table;
}

Span span_of(const std::shared_ptr<const SourceFile>& file, size_t begin, size_t end) {
  Span s;
  s.file = file;
  s.begin = uint32_t(begin);
  s.end = uint32_t(end);
  return s;
}

// Digits as an exact rational of any size: "12" is 12, "1.25" is 5/4.
Rational parse_number(const std::string& text, const Span& where) {
  std::string digits;
  std::string denominator = "1";
  bool after_point = false;
  for (char c : text) {
    if (c == '.') {
      after_point = true;
      continue;
    }
    digits += c;
    if (after_point) denominator += '0';
  }
  if (digits.size() > 10000) fail_at(where, "this number has more than 10,000 digits");
  return Rational::of_decimal(digits, denominator);
}

}  // namespace

std::vector<Token> lex(const std::shared_ptr<const SourceFile>& file) {
  const std::string& src = file->text;
  require_utf8(file);
  std::vector<Token> tokens;
  size_t i = 0;
  auto push = [&](TokenKind kind, size_t begin, size_t end) {
    Token t;
    t.kind = kind;
    t.span = span_of(file, begin, end);
    t.text = src.substr(begin, end - begin);
    tokens.push_back(std::move(t));
  };
  while (i < src.size()) {
    unsigned char c = src[i];
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
      continue;
    }
    size_t begin = i;
    if (std::isdigit(c)) {
      while (i < src.size() && std::isdigit((unsigned char)src[i])) ++i;
      if (i + 1 < src.size() && src[i] == '.' && std::isdigit((unsigned char)src[i + 1])) {
        ++i;
        while (i < src.size() && std::isdigit((unsigned char)src[i])) ++i;
      }
      push(TokenKind::Number, begin, i);
      tokens.back().number = parse_number(tokens.back().text, tokens.back().span);
      continue;
    }
    if (std::isalpha(c) || c == '_') {
      while (i < src.size() && (std::isalnum((unsigned char)src[i]) || src[i] == '_')) ++i;
      std::string word = src.substr(begin, i - begin);
      auto keyword = keywords().find(word);
      push(keyword == keywords().end() ? TokenKind::Identifier : keyword->second, begin, i);
      continue;
    }
    if (c == '"') {
      ++i;
      while (i < src.size() && src[i] != '"' && src[i] != '\n') ++i;
      if (i >= src.size() || src[i] != '"')
        fail_at(span_of(file, begin, begin + 1), "this string has no closing `\"` on its line");
      ++i;
      push(TokenKind::String, begin, i);
      tokens.back().text = src.substr(begin + 1, i - begin - 2);
      continue;
    }
    auto two = [&](char next) { return i + 1 < src.size() && src[i + 1] == next; };
    TokenKind kind;
    size_t length = 1;
    switch (c) {
      case '(': kind = TokenKind::LeftParen; break;
      case ')': kind = TokenKind::RightParen; break;
      case '[': kind = TokenKind::LeftBracket; break;
      case ']': kind = TokenKind::RightBracket; break;
      case '{': kind = TokenKind::LeftBrace; break;
      case '}': kind = TokenKind::RightBrace; break;
      case ',': kind = TokenKind::Comma; break;
      case ';': kind = TokenKind::Semicolon; break;
      case ':': kind = TokenKind::Colon; break;
      case '+': kind = TokenKind::Plus; break;
      case '-': kind = TokenKind::Minus; break;
      case '*': kind = TokenKind::Star; break;
      case '/': kind = TokenKind::Slash; break;
      case '%': kind = TokenKind::Percent; break;
      case '^': kind = TokenKind::Caret; break;
      case '=':
        kind = two('=') ? TokenKind::EqualEqual : TokenKind::Assign;
        length = two('=') ? 2 : 1;
        break;
      case '<':
        kind = two('=') ? TokenKind::LessEqual : TokenKind::Less;
        length = two('=') ? 2 : 1;
        break;
      case '>':
        kind = two('=') ? TokenKind::GreaterEqual : TokenKind::Greater;
        length = two('=') ? 2 : 1;
        break;
      case '!':
        if (!two('=')) fail_at(span_of(file, i, i + 1), "unexpected character `!` (RASP writes `not`)");
        kind = TokenKind::NotEqual;
        length = 2;
        break;
      case '\'':
        fail_at(span_of(file, i, i + 1), "strings use double quotes in RASP: write \"text\", not 'text'");
      default: {
        // The whole code point, as the user typed it (é, not \xc3); a control byte escaped.
        const size_t width = std::max<size_t>(1, utf8_length_at(src, i));
        std::string shown = src.substr(i, width);
        if (c < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\x%02x", unsigned(c));
          shown = escaped;
        }
        const std::string hint = c >= 0x80 ? " (names and operators are ASCII; other text belongs in a \"string\")" : "";
        fail_at(span_of(file, i, i + width), "unexpected character `" + shown + "`" + hint);
      }
    }
    i += length;
    push(kind, begin, i);
  }
  Token end;
  end.kind = TokenKind::End;
  size_t last = src.empty() ? 0 : src.size() - 1;
  // Point at the last visible character, so "expected `;`" lands on the line that lacks it.
  while (last > 0 && std::isspace((unsigned char)src[last])) --last;
  end.span = span_of(file, src.empty() ? 0 : last + 1, src.empty() ? 0 : last + 1);
  tokens.push_back(end);
  return tokens;
}

std::string describe(TokenKind kind) {
  switch (kind) {
    case TokenKind::Number: return "a number";
    case TokenKind::String: return "a string";
    case TokenKind::Identifier: return "a name";
    case TokenKind::Def: return "`def`";
    case TokenKind::Return: return "`return`";
    case TokenKind::For: return "`for`";
    case TokenKind::In: return "`in`";
    case TokenKind::If: return "`if`";
    case TokenKind::Else: return "`else`";
    case TokenKind::And: return "`and`";
    case TokenKind::Or: return "`or`";
    case TokenKind::Not: return "`not`";
    case TokenKind::Load: return "`load`";
    case TokenKind::Select: return "`select`";
    case TokenKind::LeftParen: return "`(`";
    case TokenKind::RightParen: return "`)`";
    case TokenKind::LeftBracket: return "`[`";
    case TokenKind::RightBracket: return "`]`";
    case TokenKind::LeftBrace: return "`{`";
    case TokenKind::RightBrace: return "`}`";
    case TokenKind::Comma: return "`,`";
    case TokenKind::Semicolon: return "`;`";
    case TokenKind::Colon: return "`:`";
    case TokenKind::Assign: return "`=`";
    case TokenKind::Plus: return "`+`";
    case TokenKind::Minus: return "`-`";
    case TokenKind::Star: return "`*`";
    case TokenKind::Slash: return "`/`";
    case TokenKind::Percent: return "`%`";
    case TokenKind::Caret: return "`^`";
    case TokenKind::EqualEqual: return "`==`";
    case TokenKind::NotEqual: return "`!=`";
    case TokenKind::Less: return "`<`";
    case TokenKind::Greater: return "`>`";
    case TokenKind::LessEqual: return "`<=`";
    case TokenKind::GreaterEqual: return "`>=`";
    case TokenKind::End: return "the end of the file";
  }
  return "a token";
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Number: return "the number " + token.text;
    case TokenKind::String: return "the string \"" + token.text + "\"";
    case TokenKind::Identifier: return "the name `" + token.text + "`";
    default: return describe(token.kind);
  }
}

}  // namespace raspc
