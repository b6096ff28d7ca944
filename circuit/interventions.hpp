// Interventions on a compiled model whose results its own program predicts: the model run with an
// s-op's residual dimensions patched from another input, or with a head or an MLP ablated, beside
// the reference interpreter run with the same change made to the program (raspc patch,
// verify-interventions; Python's Model.patch and Model.ablate).
//
// What the interpreter predicts:
// - an interchange (patch): s-op X on input A takes its values on input B (same length), and every
//   s-op after it computes from them. The model's side replaces X's dimensions in the residual
//   stream after the half-block that writes X (blocks.L.hook_resid_mid/post).
// - an ablation of a node outside the circuit (circuit/circuit.hpp): no output changes.
// - a head's attention moved to BOS (Ablation::Bos) when the head computes an aggregate on its own:
//   X takes the aggregate's default at every position, as when its selector selects nothing.
// - a zero or mean ablation of the only writer of a numerical s-op X: X is 0, or its mean over the
//   reference inputs at each position (the value is written linearly; the mean is exact).
// Anything else (a categorical s-op's one-hot zeroed or averaged, a selector width's scratch) is no
// value of the program, and the result says so instead of guessing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "circuit/circuit.hpp"
#include "language/interpret.hpp"
#include "language/program.hpp"
#include "runtime/cpu_backend.hpp"

namespace raspc {

enum class Ablation { Zero, Mean, Bos };
Ablation parse_ablation(const std::string& name, const std::string& origin);  // "zero" | "mean" | "bos"
const char* ablation_name(Ablation how);

// Token ids as the model's token texts.
std::vector<std::string> token_texts(const Model& model, const std::vector<int>& tokens);

struct InterventionResult {
  std::string description;               // "hist patched from [a,b,b]", "a0.0 zero-ablated"
  std::vector<std::string> clean;        // the model's outputs on the input, untouched
  std::vector<std::string> model;        // the model's outputs with the intervention
  std::vector<std::string> predicted;    // the interpreter's; empty when it has no prediction
  std::string no_prediction;             // then why, in one sentence
  bool agree = false;                    // a prediction, matched at every position
  bool changed = false;                  // model differs from clean at some position (output_matches)
};

class Intervener {
 public:
  // The model must carry its program and placement (a compiled model); a UserError otherwise.
  explicit Intervener(const Model& model);
  ~Intervener();

  const Circuit& circuit() const { return circuit_; }
  // The s-ops a patch can name: those of the program the model keeps in residual dimensions of
  // their own, by the names the program gives them (tokens and indices among them).
  std::vector<std::string> patchable() const;

  // Token ids without BOS. `sop` is a name of patchable(); anything else is a UserError naming
  // `origin` and listing them. A source of another length than the input is a UserError naming
  // `source_origin`.
  InterventionResult patch(const std::vector<int>& input, const std::vector<int>& source, const std::string& sop,
                           const std::string& origin = "--sop", const std::string& source_origin = "--from");
  // The same for many pairs in one batched forward (inputs[i] patched from sources[i]).
  std::vector<InterventionResult> patch(const std::vector<std::vector<int>>& inputs,
                                        const std::vector<std::vector<int>>& sources, const std::string& sop,
                                        const std::string& origin = "--sop", const std::string& source_origin = "--from");
  // `node` a head or an MLP by its circuit id ("a0.1": layer 0's head 1; "m0": layer 0's MLP).
  // A mean ablation averages over `reference` (inputs of the input's length), made when empty:
  // `mean_samples` random inputs from `seed`.
  InterventionResult ablate(const std::vector<int>& input, const std::string& node, Ablation how,
                            std::vector<std::vector<int>> reference = {}, int mean_samples = 200,
                            uint64_t seed = 0, const std::string& origin = "--ablate");
  // The same for many inputs in one batched forward (a mean ablation's inputs of one length).
  std::vector<InterventionResult> ablate(const std::vector<std::vector<int>>& inputs, const std::string& node,
                                         Ablation how, std::vector<std::vector<int>> reference = {},
                                         int mean_samples = 200, uint64_t seed = 0,
                                         const std::string& origin = "--ablate");

  // `count` inputs of `length` tokens drawn uniformly from the input vocabulary.
  std::vector<std::vector<int>> random_inputs(int length, int count, uint64_t seed) const;

 private:
  const Model& model_;
  ModelPlacement placement_;
  Circuit circuit_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<Interpreter> interpreter_;
  CpuBackend backend_;

  const SopPlacement* find_sop(const std::string& name, NodeId& program_node) const;
  std::vector<std::vector<std::string>> model_outputs(const std::vector<std::vector<int>>& inputs,
                                                     const Interventions* edits);
  std::vector<Value> interpreter_values(const std::vector<int>& input, NodeId id);
  void predict(InterventionResult& result, const std::vector<int>& input);
  // What ablating `node` sets in the program, for every input: false with why when nothing.
  bool ablation_overrides(const CircuitNode& node, Ablation how, int length,
                          const std::vector<std::vector<int>>& reference,
                          std::vector<std::pair<NodeId, std::vector<Value>>>& overrides, std::string& why);
};

}  // namespace raspc
