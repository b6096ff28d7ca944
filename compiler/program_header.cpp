#include "compiler/program_header.hpp"

#include <sstream>

namespace raspc {

ProgramHeader read_program_header(const std::string& text) {
  ProgramHeader header;
  std::istringstream lines(text);
  std::string line;
  auto trim = [](const std::string& s) {
    size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  while (std::getline(lines, line)) {
    std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] != '#') break;  // the header is the comment block at the top
    std::string body = t.substr(1);
    size_t colon = body.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(body.substr(0, colon)), value = trim(body.substr(colon + 1));
    if (key == "vocab") header.vocab = value;
    else if (key == "causal") header.causal = value == "yes";
  }
  return header;
}

}  // namespace raspc
