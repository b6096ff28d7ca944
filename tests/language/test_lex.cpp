// The lexer: tokens, exact numbers, strings, comments, and where its errors point.
#include <catch2/catch.hpp>

#include "language/lex.hpp"

using namespace raspc;

namespace {

std::shared_ptr<const SourceFile> source(const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->name = "t.rasp";
  file->text = text;
  return file;
}

std::vector<TokenKind> kinds(const std::string& text) {
  std::vector<TokenKind> out;
  for (const Token& t : lex(source(text))) out.push_back(t.kind);
  return out;
}

std::string lex_error(const std::string& text) {
  try {
    lex(source(text));
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("lex: operators, keywords and names") {
  using K = TokenKind;
  CHECK(kinds("a == b != c <= >= < > = ^ % + - * /") ==
        std::vector<K>{K::Identifier, K::EqualEqual, K::Identifier, K::NotEqual, K::Identifier, K::LessEqual,
                       K::GreaterEqual, K::Less, K::Greater, K::Assign, K::Caret, K::Percent, K::Plus, K::Minus,
                       K::Star, K::Slash, K::End});
  CHECK(kinds("def return for in if else and or not load select selector_width _x1") ==
        std::vector<K>{K::Def, K::Return, K::For, K::In, K::If, K::Else, K::And, K::Or, K::Not, K::Load,
                       K::Select, K::Identifier, K::Identifier, K::End});
  CHECK(kinds("( ) [ ] { } , ; :") ==
        std::vector<K>{K::LeftParen, K::RightParen, K::LeftBracket, K::RightBracket, K::LeftBrace,
                       K::RightBrace, K::Comma, K::Semicolon, K::Colon, K::End});
}

TEST_CASE("lex: numbers are exact, strings keep their text, comments vanish") {
  auto tokens = lex(source("12 1.5 0.1 \"a b\" # a comment ; \"x\"\nx"));
  REQUIRE(tokens.size() == 6);
  CHECK(tokens[0].number == Rational{12, 1});
  CHECK(tokens[1].number == Rational{3, 2});
  CHECK(tokens[2].number == Rational{1, 10});
  // Beyond 64 bits: exact all the same.
  auto large = lex(source("99999999999999999999 0.000000000000000000001"));
  CHECK(large[0].number.to_string() == "99999999999999999999");
  CHECK(large[1].number.to_string() == "1/1000000000000000000000");
  CHECK(tokens[3].kind == TokenKind::String);
  CHECK(tokens[3].text == "a b");
  CHECK(tokens[4].kind == TokenKind::Identifier);
  CHECK(tokens[4].text == "x");
  LineColumn lc = line_column(*tokens[4].span.file, tokens[4].span.begin);
  CHECK(lc.line == 2);
  CHECK(lc.column == 1);
  // A float needs digits on both sides of the point.
  CHECK(lex_error("x = 1.;") == "t.rasp:1:6: error: unexpected character `.`\n  x = 1.;\n       ^\n");
}

TEST_CASE("lex: errors point at the offending character") {
  CHECK(lex_error("a = \"abc;\n") ==
        "t.rasp:1:5: error: this string has no closing `\"` on its line\n  a = \"abc;\n      ^\n");
  CHECK(lex_error("a = b @ c;") == "t.rasp:1:7: error: unexpected character `@`\n  a = b @ c;\n        ^\n");
  CHECK(lex_error("a = 'x';") ==
        "t.rasp:1:5: error: strings use double quotes in RASP: write \"text\", not 'text'\n  a = 'x';\n      ^\n");
  CHECK(lex_error("a = b ! c;") ==
        "t.rasp:1:7: error: unexpected character `!` (RASP writes `not`)\n  a = b ! c;\n        ^\n");
  CHECK(lex_error("x = " + std::string(10001, '9') + ";").rfind("t.rasp:1:5: error: this number has more than 10,000 digits\n", 0) == 0);
}

TEST_CASE("lex: text that is not UTF-8 is refused where it is, and a non-ASCII character is shown whole") {
  CHECK(lex_error("a = \"x\xff\";") ==
        "t.rasp:1:7: error: the byte \\xff is not UTF-8 text; raspc reads programs and symbols as UTF-8\n"
        "  a = \"x\\xff\";\n"
        "        ^~~~\n");
  CHECK(lex_error("a = \"\xc3\";") ==  // a lead byte cut short
        "t.rasp:1:6: error: the byte \\xc3 is not UTF-8 text; raspc reads programs and symbols as UTF-8\n"
        "  a = \"\\xc3\";\n"
        "       ^~~~\n");
  // Columns count code points: é is the 5th character of its line, and the caret sits under it.
  CHECK(lex_error("a = \xc3\xa9;") ==
        "t.rasp:1:5: error: unexpected character `\xc3\xa9` (names and operators are ASCII; other text belongs in a "
        "\"string\")\n  a = \xc3\xa9;\n      ^\n");
  CHECK(lex_error("s = \"\xc3\xa9\xc3\xa9\" @;") ==
        "t.rasp:1:10: error: unexpected character `@`\n  s = \"\xc3\xa9\xc3\xa9\" @;\n           ^\n");
  CHECK(kinds("s = \"\xe2\x82\xac\";") ==
        std::vector<TokenKind>{TokenKind::Identifier, TokenKind::Assign, TokenKind::String, TokenKind::Semicolon,
                               TokenKind::End});
}

TEST_CASE("lex: a NUL or another control byte in a line is shown escaped, with the caret in place") {
  CHECK(lex_error(std::string("a = b\0c;", 8)) ==
        "t.rasp:1:6: error: unexpected character `\\x00`\n  a = b\\x00c;\n       ^~~~\n");
  CHECK(lex_error("a = \x01;") == "t.rasp:1:5: error: unexpected character `\\x01`\n  a = \\x01;\n      ^~~~\n");
}
