#include "language/input.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

#include "support/diagnostics.hpp"
#include "support/utf8.hpp"

namespace raspc {

namespace {

std::shared_ptr<const SourceFile> as_source(const std::string& text, const std::string& origin) {
  auto file = std::make_shared<SourceFile>();
  file->name = origin;
  file->text = text;
  return file;
}

Span span_at(const std::shared_ptr<const SourceFile>& file, size_t begin, size_t end) {
  Span s;
  s.file = file;
  s.begin = uint32_t(begin);
  s.end = uint32_t(std::max(end, begin + 1));
  return s;
}

struct Symbol {
  Value value;
  size_t begin, end;
};

// "[3, -1, "a"]": ints or double-quoted strings, separated by commas.
std::vector<Symbol> parse_list(const std::shared_ptr<const SourceFile>& file) {
  const std::string& t = file->text;
  std::vector<Symbol> symbols;
  size_t i = t.find('[') + 1;
  auto skip_space = [&] {
    while (i < t.size() && std::isspace((unsigned char)t[i])) ++i;
  };
  skip_space();
  if (i < t.size() && t[i] == ']') {
    ++i;
  } else {
    for (;;) {
      skip_space();
      size_t begin = i;
      if (i < t.size() && t[i] == '"') {
        size_t close = t.find('"', i + 1);
        if (close == std::string::npos) fail_at(span_at(file, begin, begin + 1), "this string has no closing `\"`");
        symbols.push_back({Value::of_string(t.substr(i + 1, close - i - 1)), begin, close + 1});
        i = close + 1;
      } else {
        if (i < t.size() && t[i] == '-') ++i;
        size_t digits = i;
        while (i < t.size() && std::isdigit((unsigned char)t[i])) ++i;
        if (i == digits)
          fail_at(span_at(file, begin, begin + 1),
                  "expected an integer or a double-quoted string in the list, as in [3,1,2] or [\"a\",\"b\"]");
        if (i - digits > 18) fail_at(span_at(file, begin, i), "this integer does not fit in 64 bits");
        symbols.push_back({Value::of_int(std::stoll(t.substr(begin, i - begin))), begin, i});
      }
      skip_space();
      if (i < t.size() && t[i] == ',') {
        ++i;
        continue;
      }
      if (i < t.size() && t[i] == ']') {
        ++i;
        break;
      }
      fail_at(span_at(file, i, i + 1), "expected `,` or `]` in the list");
    }
  }
  skip_space();
  if (i < t.size()) fail_at(span_at(file, i, i + 1), "unexpected text after the closing `]`");
  return symbols;
}

// Plain text as one-symbol tokens: a symbol is a UTF-8 code point (é is one, not two bytes).
std::vector<Symbol> code_points(const std::shared_ptr<const SourceFile>& file, size_t begin, size_t end) {
  std::vector<Symbol> symbols;
  for (size_t i = begin; i < end;) {
    const size_t length = std::max<size_t>(1, utf8_length_at(file->text, i));
    symbols.push_back({Value::of_string(file->text.substr(i, length)), i, i + length});
    i += length;
  }
  return symbols;
}

void check_one_kind(const std::shared_ptr<const SourceFile>& file, const std::vector<Symbol>& symbols) {
  for (const Symbol& s : symbols)
    if (s.value.kind != symbols.front().value.kind)
      fail_at(span_at(file, s.begin, s.end),
              "a sequence must hold only integers or only strings, but this " +
                  std::string(s.value.is_string() ? "string" : "integer") + " follows " +
                  (symbols.front().value.is_string() ? "strings" : "integers"));
}

}  // namespace

std::vector<Value> parse_input(const std::string& text, const std::string& origin,
                               const std::vector<Value>* vocabulary) {
  auto file = as_source(text, origin);
  require_utf8(file);
  std::vector<Symbol> symbols;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    symbols = parse_list(file);
  } else {
    // Plain text is a sequence of one-character tokens; surrounding double quotes are dropped.
    size_t begin = 0, end = text.size();
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') begin = 1, end = text.size() - 1;
    symbols = code_points(file, begin, end);
  }
  if (symbols.empty())
    fail_at(span_at(file, 0, text.size()), "the input is empty; give at least one token, as in hello or [3,1,2]");
  check_one_kind(file, symbols);
  if (vocabulary) {
    for (const Symbol& s : symbols)
      if (std::find(vocabulary->begin(), vocabulary->end(), s.value) == vocabulary->end()) {
        std::string known;
        for (const Value& v : *vocabulary) {
          if (!known.empty()) known += ' ';
          known += to_display(v);
        }
        fail_at(span_at(file, s.begin, s.end),
                "the token " + to_source(s.value) + " is not in the vocabulary (" + known + ")");
      }
  }
  std::vector<Value> values;
  for (const Symbol& s : symbols) values.push_back(s.value);
  return values;
}

bool is_reserved_token(const std::string& token) { return token == "<bos>" || token == "BOS"; }

std::vector<Value> parse_vocabulary(const std::string& text, const std::string& origin) {
  auto file = as_source(text, origin);
  require_utf8(file);
  std::vector<Symbol> symbols;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    symbols = parse_list(file);
  } else if (text.find_first_of(" \t") != std::string::npos) {
    // "a b c": whitespace-separated symbols, which may be longer than one character.
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && std::isspace((unsigned char)text[i])) ++i;
      size_t begin = i;
      while (i < text.size() && !std::isspace((unsigned char)text[i])) ++i;
      if (i > begin) symbols.push_back({Value::of_string(text.substr(begin, i - begin)), begin, i});
    }
    // "1 2 3 4" is ints, as the same symbols on a program's `# vocab:` line are.
    auto integer = [](const std::string& t) {
      const size_t sign = t[0] == '-' ? 1 : 0;
      return t.size() > sign && t.size() <= sign + 18 &&
             std::all_of(t.begin() + long(sign), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (std::all_of(symbols.begin(), symbols.end(), [&](const Symbol& s) { return integer(s.value.string()); }))
      for (Symbol& s : symbols) s.value = Value::of_int(std::stoll(s.value.string()));
  } else {
    symbols = code_points(file, 0, text.size());
  }
  if (symbols.empty()) fail_at(span_at(file, 0, text.size()), "the vocabulary is empty; give its symbols, as in ehlo");
  check_one_kind(file, symbols);
  for (const Symbol& s : symbols)
    if (s.value.is_string() && is_reserved_token(s.value.string()))
      fail_at(span_at(file, s.begin, s.end), "\"" + s.value.string() +
                                                 "\" is the name of a model's beginning-of-sequence token, so it "
                                                 "cannot be an input symbol");
  std::vector<Value> distinct;
  for (const Symbol& s : symbols)
    if (std::find(distinct.begin(), distinct.end(), s.value) == distinct.end()) distinct.push_back(s.value);
  return distinct;
}

}  // namespace raspc
