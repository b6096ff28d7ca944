#include "language/program_file.hpp"

#include <algorithm>

#include "language/input.hpp"

namespace raspc {
namespace {

std::string trimmed(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

bool is_integer(const std::string& s) {
  size_t digits = s[0] == '-' ? 1 : 0;
  return s.size() > digits && std::all_of(s.begin() + long(digits), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

ProgramHeader read_program_header(const std::shared_ptr<const SourceFile>& source) {
  ProgramHeader header;
  const std::string& text = source->text;
  int number = 0;
  bool in_leading_block = true;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    ++number;
    bool comment = line.rfind("#", 0) == 0;
    if (!comment && !trimmed(line).empty()) in_leading_block = false;
    if (comment) {
      std::string body = trimmed(line.substr(1));
      Span line_span{source, uint32_t(start), uint32_t(end)};
      auto field = [&](const std::string& name, std::string& value, Span& span) {
        if (body.rfind(name + ":", 0) != 0) return false;
        value = trimmed(body.substr(name.size() + 1));
        size_t at = line.find(value, line.find(':'));
        span = Span{source, uint32_t(start + (at == std::string::npos ? 0 : at)),
                    uint32_t(start + (at == std::string::npos ? line.size() : at + value.size()))};
        return true;
      };
      std::string value;
      Span value_span;
      if (field("expect", value, value_span) || field("expect-causal", value, value_span)) {
        Expectation e;
        e.line = number;
        e.causal = body.rfind("expect-causal:", 0) == 0;
        size_t arrow = value.find(" -> ");
        if (arrow == std::string::npos) fail_at(value_span, "an expect line is written `INPUT -> OUTPUT`, as in `hello -> 1 1 2 2 1`");
        e.input = trimmed(value.substr(0, arrow));
        e.output = trimmed(value.substr(arrow + 4));
        e.span = line_span;
        header.expectations.push_back(e);
      } else if (in_leading_block) {
        if (field("vocab", value, value_span)) {
          if (value.empty()) fail_at(line_span, "the vocab line lists no symbols; write them as in `# vocab: a b c d`");
          header.vocab_text = value;
          header.vocab_span = value_span;
        } else if (field("causal", value, value_span)) {
          if (value != "yes" && value != "no") fail_at(value_span, "the causal line says `yes` or `no`");
          header.causal = value == "yes";
        } else if (number == 1) {
          size_t colon = body.find(':');
          if (colon != std::string::npos && body.find(' ') > colon) {
            header.name = body.substr(0, colon);
            header.description = trimmed(body.substr(colon + 1));
          }
        }
      }
    }
    start = end + 1;
  }
  return header;
}

std::vector<Value> header_vocabulary(const ProgramHeader& header) {
  if (header.vocab_text.empty()) return {};
  std::vector<std::string> symbols;
  const std::string& text = header.vocab_text;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t begin = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > begin) symbols.push_back(text.substr(begin, i - begin));
  }
  std::string origin = header.vocab_span.valid() ? header.vocab_span.file->name + " (# vocab:)" : "# vocab:";
  if (!symbols.empty() && std::all_of(symbols.begin(), symbols.end(), is_integer)) {
    std::string list = "[";
    for (const std::string& s : symbols) list += (list.size() > 1 ? "," : "") + s;
    return parse_vocabulary(list + "]", origin);
  }
  return parse_vocabulary(text, origin);
}

}  // namespace raspc
