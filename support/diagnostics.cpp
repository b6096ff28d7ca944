#include "support/diagnostics.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "support/atomic_file.hpp"
#include "support/utf8.hpp"

namespace raspc {

Span Span::to(const Span& other) const {
  Span s = *this;
  if (other.file == file) s.end = std::max(end, other.end);
  return s;
}

LineColumn line_column(const SourceFile& file, uint32_t offset) {
  LineColumn lc;
  offset = std::min<uint32_t>(offset, file.text.size());
  for (uint32_t i = 0; i < offset; ++i) {
    if (file.text[i] == '\n') {
      ++lc.line;
      lc.column = 1;
    } else if ((uint8_t(file.text[i]) & 0xc0) != 0x80) {  // a UTF-8 continuation byte is no new column
      ++lc.column;
    }
  }
  return lc;
}

SourceExcerpt excerpt_of(const Span& span) {
  const std::string& text = span.file->text;
  const size_t begin = std::min<size_t>(span.begin, text.size());
  const size_t end = std::min<size_t>(span.end, text.size());
  const size_t newline = begin == 0 ? std::string::npos : text.rfind('\n', begin - 1);
  const size_t first = newline == std::string::npos ? 0 : newline + 1;
  const size_t last = std::min(text.find('\n', begin), text.size());
  return {span.file->name, line_column(*span.file, span.begin), text.substr(first, last - first),
          text.substr(begin, end > begin ? end - begin : 0)};
}

namespace {

// The quoted line keeps this many columns around the caret: a 100,000-character line must not
// make a 200 KB message.
constexpr size_t kQuotedColumns = 120;
constexpr size_t kColumnsBeforeCaret = 40;

// One character of a quoted line as it is shown: printable text as it is, a tab as a tab (the
// caret line keeps it, so the caret stays under the right character), a control byte or a byte
// that is not UTF-8 as \xNN (a NUL would otherwise cut the message in a terminal).
struct ShownCharacter {
  size_t begin;  // its first byte in the file
  std::string text;
  size_t width;
};

std::string escaped_byte(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof text, "\\x%02x", unsigned(byte));
  return text;
}

std::vector<ShownCharacter> shown_characters(const std::string& text, size_t begin, size_t end) {
  std::vector<ShownCharacter> shown;
  for (size_t i = begin; i < end;) {
    const uint8_t c = uint8_t(text[i]);
    const size_t length = utf8_length_at(text, i);
    if (c == '\t') shown.push_back({i, "\t", 1});
    else if (length == 0 || c < 0x20 || c == 0x7f) shown.push_back({i, escaped_byte(c), 4});
    else shown.push_back({i, text.substr(i, length), 1});
    i += length == 0 ? 1 : length;
  }
  return shown;
}

}  // namespace

std::string escaped_message(std::string_view message) {
  std::string out;
  for (size_t i = 0; i < message.size();) {
    const uint8_t c = uint8_t(message[i]);
    const size_t length = utf8_length_at(message, i);
    if (length == 0 || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
      out += escaped_byte(c);
      ++i;
    } else {
      out.append(message.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string format_error(const Span& span, std::string_view raw_message) {
  return format_diagnostic(span, raw_message, "error");
}

std::string format_note(const Span& span, std::string_view raw_message) {
  return format_diagnostic(span, raw_message, "note");
}

std::string format_diagnostic(const Span& span, std::string_view raw_message, std::string_view severity) {
  const std::string message = escaped_message(raw_message);
  std::ostringstream out;
  if (!span.valid()) {
    out << severity << ": " << message << "\n";
    return out.str();
  }
  const SourceFile& file = *span.file;
  LineColumn lc = line_column(file, span.begin);
  out << file.name << ":" << lc.line << ":" << lc.column << ": " << severity << ": " << message << "\n";
  const size_t begin = std::min<size_t>(span.begin, file.text.size());
  size_t line_start = begin == 0 ? 0 : file.text.rfind('\n', begin - 1);
  line_start = line_start == std::string::npos || begin == 0 ? 0 : line_start + 1;
  size_t line_end = file.text.find('\n', line_start);
  if (line_end == std::string::npos) line_end = file.text.size();
  if (line_end > line_start && file.text[line_end - 1] == '\r' && begin < line_end - 1) --line_end;  // CRLF

  // Only the bytes around the caret that can be quoted (a column takes at most 4 bytes): a 50 MB
  // line held one ShownCharacter per code point, gigabytes, to print 120 columns of it.
  const size_t reach = 4 * kQuotedColumns;
  size_t window_start = begin - line_start > reach ? begin - reach : line_start;
  while (window_start > line_start && (uint8_t(file.text[window_start]) & 0xC0) == 0x80) --window_start;
  const size_t window_end = line_end - begin > reach ? begin + reach : line_end;
  const bool cut = window_start > line_start || window_end < line_end;
  const std::vector<ShownCharacter> shown = shown_characters(file.text, window_start, window_end);
  const size_t end = std::min<size_t>(std::max<size_t>(span.end, begin), line_end);
  size_t caret = 0;  // the first shown character at or after the span's begin
  while (caret < shown.size() && shown[caret].begin < begin) ++caret;
  size_t total = 0;
  for (const ShownCharacter& c : shown) total += c.width;
  size_t from = 0, to = shown.size();
  if (total > kQuotedColumns || cut) {
    size_t before = 0;
    from = caret;
    while (from > 0 && before + shown[from - 1].width <= kColumnsBeforeCaret) before += shown[--from].width;
    size_t width = before;
    to = caret;
    while (to < shown.size() && width + shown[to].width <= kQuotedColumns) width += shown[to++].width;
  }
  const bool cut_before = from > 0 || window_start > line_start;
  std::string line = cut_before ? "..." : "", pad = cut_before ? "   " : "";
  for (size_t i = from; i < to; ++i) {
    line += shown[i].text;
    if (i < caret) pad += shown[i].text == "\t" ? std::string("\t") : std::string(shown[i].width, ' ');
  }
  if (to < shown.size() || window_end < line_end) line += "...";
  size_t underline = 0;
  for (size_t i = caret; i < to && shown[i].begin < end; ++i) underline += shown[i].width;
  underline = std::max<size_t>(underline, 1);
  out << "  " << line << "\n  " << pad << "^" << std::string(underline - 1, '~') << "\n";
  return out.str();
}

void fail_at(const Span& span, std::string_view message) { throw UserError(format_error(span, message)); }

void fail_file(std::string_view file_name, std::string_view message) {
  std::string text = escaped_message(file_name);
  text += ": error: ";
  text += escaped_message(message);
  text += "\n";
  throw UserError(text);
}

void rethrow_naming(std::string_view origin, const UserError& error) {
  const std::string text = error.what();
  if (text.rfind("error: ", 0) == 0) throw UserError(std::string(origin) + ": " + text);
  throw error;
}

std::shared_ptr<const SourceFile> read_source_file(const std::string& path) {
  auto file = std::make_shared<SourceFile>();
  // "-" is standard input, as for every command that reads a program (a file named - is ./-).
  file->name = path == "-" ? "<stdin>" : path;
  file->text = read_file_bytes(path == "-" ? "/dev/stdin" : path);
  // A UTF-8 byte order mark (some Windows editors write one) is not part of the program.
  if (file->text.rfind("\xef\xbb\xbf", 0) == 0) file->text.erase(0, 3);
  // Old Mac line endings (CR alone) would make the whole file one line, and one comment: each
  // lone CR ends a line. CRLF stays as it is (the CR is white space).
  for (size_t i = 0; i < file->text.size(); ++i)
    if (file->text[i] == '\r' && (i + 1 == file->text.size() || file->text[i + 1] != '\n')) file->text[i] = '\n';
  return file;
}

}  // namespace raspc
