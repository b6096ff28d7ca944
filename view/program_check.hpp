// The interpreter's side of a residual trace: the model's own program (metadata["program"]) run
// by the reference interpreter on the same input, so every decoded s-op can be checked.
#pragma once

#include "runtime/model.hpp"
#include "runtime/residual_trace.hpp"

namespace raspc {

// Fills trace.expected for every s-op the program names at top level (and tokens and indices);
// an s-op the compiler made (a fused map, a scratch value) stays unchecked. False when the model
// carries no program. A program that no longer evaluates, or is undefined on the input, is a
// UserError from the interpreter.
bool check_against_program(const Model& model, ResidualTrace& trace);

}  // namespace raspc
