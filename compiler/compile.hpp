// The compiler driver: a Program into a verified GPT-2 Model, one pass a file (see DESIGN.md):
// infer -> simplify -> schedule -> allocate -> lower -> assemble -> verify.
#pragma once

#include <string>
#include <vector>

#include "language/interpret.hpp"
#include "language/program.hpp"
#include "runtime/model.hpp"

namespace raspc {

struct CompileOptions {
  std::vector<Value> vocab;  // input symbols
  int max_len = 16;          // longest input (BOS not counted)
  Mode mode = Mode::Bidirectional;
  bool layer_norm = true;
  Activation activation = Activation::Gelu;
  bool verify = true;
};

struct CompileReport {
  int layers = 0, heads = 0, n_embd = 0, n_inner = 0;
  size_t parameters = 0;
  // Verification: inputs checked, mismatches, min logit margin (categorical outputs) or worst
  // absolute error (numerical outputs); the first mismatch, described, when there is one.
  long inputs_checked = 0, mismatches = 0;
  double min_logit_margin = 0, worst_numerical_error = 0;
  std::string first_mismatch;
};

struct CompileResult {
  Model model;
  CompileReport report;
};

CompileResult compile_program(const Program& program, const CompileOptions& options);

}  // namespace raspc
