// The header lines of a program file: `# vocab: a b c d` and `# causal: yes|no` among the comment
// lines at its top (programs/README.md). The compile command uses them as defaults.
#pragma once

#include <string>

namespace raspc {

struct ProgramHeader {
  std::string vocab;  // empty when absent
  bool causal = false;
};

ProgramHeader read_program_header(const std::string& text);

}  // namespace raspc
