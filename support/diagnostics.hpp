// Errors a user can cause, and how they are shown.
//
// Every user error (bad program, bad input, bad file) reaches main() as a UserError whose message
// is already formatted: `file:line:col: error: one sentence`, then the source line and a caret.
// main() prints it and exits 1. Internal invariant violations are not UserErrors.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace raspc {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& formatted) : std::runtime_error(formatted) {}
};

// A text a user gave us: a .rasp file, a command-line argument (named like "--input"), the JSON
// header of a model file. Owns its text so spans stay valid as long as the SourceFile lives.
struct SourceFile {
  std::string name;
  std::string text;
};

// A byte range [begin, end) in one SourceFile. Default-constructed spans point nowhere
// (file == nullptr) and format without a location line.
struct Span {
  std::shared_ptr<const SourceFile> file;
  uint32_t begin = 0;
  uint32_t end = 0;

  bool valid() const { return file != nullptr; }
  Span to(const Span& other) const;  // from this span's begin to other's end (same file)
};

struct LineColumn {
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, counted in UTF-8 code points
};
LineColumn line_column(const SourceFile& file, uint32_t offset);

// What a valid span shows of its source, for the places that name a node by where it is written
// (messages, the model's s-op metadata): its file's name, its line and column, the whole line it
// starts on, and its own text (every line of it).
struct SourceExcerpt {
  std::string file;
  LineColumn at;
  std::string line;
  std::string text;
};
SourceExcerpt excerpt_of(const Span& span);

// "file:line:col: error: message\n<source line>\n<spaces>^~~~\n" (the caret underlines the span
// on its first line). Control bytes and bytes that are not UTF-8 are shown as \xNN, and a long
// line is clipped to about 120 columns around the caret ("..." marks the cut). Without a valid
// span: "error: message\n".
std::string format_error(const Span& span, std::string_view message);
// A message as diagnostics print it: it may quote what the user wrote (a token, a name, a file's
// bytes), so control bytes (but tab and newline) and bytes that are not UTF-8 are escaped (\xNN):
// a message is always text (Python decodes it).
std::string escaped_message(std::string_view message);
// The same with "note" for "error": a second place an error concerns (where a value was made).
std::string format_note(const Span& span, std::string_view message);
std::string format_diagnostic(const Span& span, std::string_view message, std::string_view severity);

// Throws a UserError formatted by format_error.
[[noreturn]] void fail_at(const Span& span, std::string_view message);

// For errors about a whole file (missing, unreadable, truncated): "file: error: message\n".
[[noreturn]] void fail_file(std::string_view file_name, std::string_view message);

// Runs `work`; a UserError it throws that names no file or flag (a library's fail_at(Span{}),
// which cannot know where its input came from) is given `origin`: "model.safetensors: error: ...".
// Errors that name their place already pass unchanged.
[[noreturn]] void rethrow_naming(std::string_view origin, const UserError& error);
template <class Work>
decltype(auto) naming_errors(std::string_view origin, Work&& work) {
  try {
    return work();
  } catch (const UserError& e) {
    rethrow_naming(origin, e);
  }
}

// Reads a whole program file ("-": standard input, named <stdin>); a missing or unreadable file, or a folder, is a UserError naming it.
// A UTF-8 byte order mark is dropped and a lone CR (old Mac line ending) read as a newline.
std::shared_ptr<const SourceFile> read_source_file(const std::string& path);

}  // namespace raspc
