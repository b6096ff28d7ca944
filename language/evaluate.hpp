// Source text to Program: lex, parse, then execute the compile-time part of the language
// (def, for, lists, dicts, comprehensions, load) to build the DAG of s-ops and selectors.
#pragma once

#include <memory>
#include <string>

#include "language/program.hpp"

namespace raspc {

struct EvaluateOptions {
  // The s-op to output: empty means the last expression statement (or, failing that, the last
  // s-op assigned); otherwise a top-level name, and an unknown name is a UserError.
  std::string output_name;
};

// Evaluates a whole program. `load "name";` reads name.rasp from the folder of `source`.
// The standard library is loaded first; its names cannot be reassigned.
Program evaluate_program(std::shared_ptr<const SourceFile> source, const EvaluateOptions& options = {});

}  // namespace raspc
