// Compiled models for the circuit tests: a program of programs/ compiled as its header says (or in
// the mode given), keeping its source so the interventions' interpreter can run it.
#pragma once

#include "../compiler/compile_helpers.hpp"

namespace raspc::testing {

// `vocab` replaces the header's vocabulary where given. Without LayerNorm (`layer_norm` false) a
// count output keeps the one-hot its MLP writes (under it the unembedding reads the count from its
// head's 1/(w+1): compiler/constructions/scratch_output.cpp).
inline Model compiled_model(const std::string& name, int max_len, Mode mode, long samples = 150,
                            const std::string& vocab = "", bool layer_norm = true) {
  const ProgramFile f = load_program(name);
  CompileOptions o = test_options(parse_vocabulary(vocab.empty() ? f.header.vocab_text : vocab), max_len, mode, samples);
  o.source_text = f.source->text;
  o.layer_norm = layer_norm;
  return compile_program(f.program, o).model;
}

// Every input of exactly `length` tokens over the model's input vocabulary.
inline std::vector<std::vector<int>> every_input(const Model& model, int length) {
  const std::vector<int> vocabulary = input_vocabulary(model);
  std::vector<std::vector<int>> inputs{{}};
  for (int i = 0; i < length; ++i) {
    std::vector<std::vector<int>> longer;
    for (const auto& prefix : inputs)
      for (int t : vocabulary) {
        longer.push_back(prefix);
        longer.back().push_back(t);
      }
    inputs = std::move(longer);
  }
  return inputs;
}

}  // namespace raspc::testing
