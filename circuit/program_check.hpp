// The interpreter's side of a residual trace: the model's own program (metadata["program"]) run
// by the reference interpreter on the same input, so every decoded s-op can be checked.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "language/interpret.hpp"
#include "language/program.hpp"
#include "runtime/model.hpp"
#include "runtime/residual_trace.hpp"

namespace raspc {

// The model's program (metadata["program"]) evaluated, or nullptr when the model keeps none. A
// program that no longer evaluates is a UserError from the interpreter.
std::unique_ptr<Program> model_program(const Model& model);
// The model's mode as its metadata says ("causal" or else bidirectional).
Mode model_mode(const Model& model);
// An input as the interpreter takes it: tokens as ints where every input token of the model's
// vocabulary is an integer, else as strings, as the compiler took the vocabulary (long_addition's
// "1" is a string beside "+", even in an input of digits only).
std::vector<Value> interpreter_input(const Model& model, const std::vector<std::string>& tokens);

// Fills trace.expected for every s-op the program names at top level (and tokens and indices);
// an s-op the compiler made (a fused map, a scratch value) stays unchecked. Returns the program's
// output on the input as the interpreter displays it, empty when the model carries no program.
// A program undefined on the input is the interpreter's UndefinedOnInput.
std::vector<std::string> check_against_program(const Model& model, ResidualTrace& trace);

}  // namespace raspc
