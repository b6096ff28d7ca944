// A file of the programs/ library (or any program with the same header): the leading comment
// block declares what the program is for, and the compiler, trainer, bench and tests read it.
//
//   # <name>: <what it computes>
//   # vocab: a b c d          (all integers, as in `1 2 3 4`, make the tokens ints)
//   # causal: yes|no          (yes: the meaning is causal; compile and check it causally too)
//   # expect: INPUT -> OUTPUT
//   # expect-causal: INPUT -> OUTPUT
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "language/value.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

struct Expectation {
  int line = 0;         // 1-based, in the program file
  bool causal = false;  // an expect-causal line
  std::string input;
  std::string output;   // to_display strings separated by single spaces
  Span span;            // the whole comment line, for errors
};

struct ProgramHeader {
  std::string name;         // the <name> of the first line ("" when absent)
  std::string description;  // what follows it
  std::string vocab_text;   // "" when there is no vocab line
  Span vocab_span;          // the vocab line's value
  std::optional<bool> causal;
  std::vector<Expectation> expectations;
};

// Reads the header of a program source (the leading comment block, plus expect lines anywhere).
// A malformed vocab or causal line is a UserError pointing at it.
ProgramHeader read_program_header(const std::shared_ptr<const SourceFile>& source);

// The vocabulary a header declares: ints when every symbol is an integer, else strings.
// Empty when the header has no vocab line.
std::vector<Value> header_vocabulary(const ProgramHeader& header);

}  // namespace raspc
