// Reading the programs/ library's files and their headers, for the tests that run them.
//
// A header is a block of comment lines (see programs/README.md):
//   # <name>: <what it computes>
//   # vocab: a b c d          (all integers, as in `1 2 3 4`, make the tokens ints)
//   # causal: yes|no
//   # expect: INPUT -> OUTPUT
//   # expect-causal: INPUT -> OUTPUT
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"

namespace raspc::testing {

struct Expectation {
  int line = 0;  // 1-based, in the program file
  bool causal = false;
  std::string input;
  std::string output;  // to_display strings separated by single spaces
};

struct ProgramFile {
  std::string path;
  std::string stem;         // file name without .rasp
  std::string title_name;   // the <name> of the first line
  bool has_vocab = false;
  std::string vocab_text;
  std::string causal_text;  // "yes", "no" or "" when missing
  std::vector<Expectation> expectations;
};

inline std::string trimmed(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

inline ProgramFile read_program_file(const std::filesystem::path& path) {
  ProgramFile file;
  file.path = path.string();
  file.stem = path.stem().string();
  std::ifstream in(path);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("#", 0) != 0) continue;
    std::string body = trimmed(line.substr(1));
    if (number == 1) {
      size_t colon = body.find(':');
      if (colon != std::string::npos) file.title_name = body.substr(0, colon);
    }
    auto field = [&](const std::string& name, std::string& value) {
      if (body.rfind(name + ":", 0) != 0) return false;
      value = trimmed(body.substr(name.size() + 1));
      return true;
    };
    std::string value;
    if (field("vocab", value)) {
      file.has_vocab = true;
      file.vocab_text = value;
    } else if (field("causal", value)) {
      file.causal_text = value;
    } else if (field("expect", value) || field("expect-causal", value)) {
      Expectation expectation;
      expectation.line = number;
      expectation.causal = body.rfind("expect-causal:", 0) == 0;
      size_t arrow = value.find(" -> ");
      expectation.input = trimmed(value.substr(0, arrow));
      expectation.output = arrow == std::string::npos ? "" : trimmed(value.substr(arrow + 4));
      file.expectations.push_back(expectation);
    }
  }
  return file;
}

// `1 2 3 4` (all integers) is a vocabulary of ints; anything else is one of strings.
inline std::vector<Value> header_vocabulary(const std::string& text) {
  std::vector<std::string> symbols;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    size_t begin = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > begin) symbols.push_back(text.substr(begin, i - begin));
  }
  auto is_integer = [](const std::string& s) {
    size_t digits = s[0] == '-' ? 1 : 0;
    return s.size() > digits && std::all_of(s.begin() + long(digits), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!symbols.empty() && std::all_of(symbols.begin(), symbols.end(), is_integer)) {
    std::string list = "[";
    for (const std::string& s : symbols) list += (list.size() > 1 ? "," : "") + s;
    return parse_vocabulary(list + "]", "# vocab:");
  }
  return parse_vocabulary(text, "# vocab:");
}

inline std::vector<std::filesystem::path> program_paths() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RASPC_SOURCE_DIR) + "/programs"))
    if (entry.path().extension() == ".rasp") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  return paths;
}

inline Program load_program(const std::string& path) { return evaluate_program(read_source_file(path)); }

inline Program load_library_program(const std::string& stem) {
  return load_program(std::string(RASPC_SOURCE_DIR) + "/programs/" + stem + ".rasp");
}

inline std::string display_all(const std::vector<Value>& values) {
  std::string text;
  for (const Value& v : values) text += (text.empty() ? "" : " ") + to_display(v);
  return text;
}

}  // namespace raspc::testing
