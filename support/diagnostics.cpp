#include "support/diagnostics.hpp"

#include <algorithm>
#include <sstream>

#include "support/atomic_file.hpp"

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
    } else {
      ++lc.column;
    }
  }
  return lc;
}

std::string format_error(const Span& span, std::string_view message) {
  std::ostringstream out;
  if (!span.valid()) {
    out << "error: " << message << "\n";
    return out.str();
  }
  const SourceFile& file = *span.file;
  LineColumn lc = line_column(file, span.begin);
  out << file.name << ":" << lc.line << ":" << lc.column << ": error: " << message << "\n";
  uint32_t begin = std::min<uint32_t>(span.begin, file.text.size());
  size_t line_start = file.text.rfind('\n', begin == 0 ? std::string::npos : begin - 1);
  line_start = (line_start == std::string::npos || begin == 0) ? 0 : line_start + 1;
  if (begin > 0 && file.text[begin - 1] == '\n') line_start = begin;
  size_t line_end = file.text.find('\n', line_start);
  if (line_end == std::string::npos) line_end = file.text.size();
  std::string line = file.text.substr(line_start, line_end - line_start);
  // Tabs are kept in the caret line so the caret stays under the right character.
  std::string pad;
  for (size_t i = line_start; i < begin; ++i) pad += file.text[i] == '\t' ? '\t' : ' ';
  size_t underline = std::max<size_t>(1, std::min<size_t>(span.end, line_end) - std::min<size_t>(begin, line_end));
  out << "  " << line << "\n  " << pad << "^" << std::string(underline - 1, '~') << "\n";
  return out.str();
}

void fail_at(const Span& span, std::string_view message) { throw UserError(format_error(span, message)); }

void fail_file(std::string_view file_name, std::string_view message) {
  std::string text(file_name);
  text += ": error: ";
  text += message;
  text += "\n";
  throw UserError(text);
}

std::shared_ptr<const SourceFile> read_source_file(const std::string& path) {
  auto file = std::make_shared<SourceFile>();
  file->name = path;
  file->text = read_file_bytes(path);
  return file;
}

}  // namespace raspc
