// raspc verify-interventions: the causal claims of a compiled model checked against its program.
//  - For every s-op a patch can name (Intervener::patchable) and N random input pairs of one
//    length: the interchange-intervention accuracy, how often the model patched with the s-op's
//    values on B gives the interpreter's output on A with those values.
//  - For every head and MLP: whether zero-ablating it changes an output on the pairs' first inputs.
//    A node outside the circuit must change none; a node inside that changes none is reported (it
//    matters on no input drawn), not counted as a failure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "circuit/interventions.hpp"

namespace raspc {

struct InterventionCheckOptions {
  int pairs = 200;        // input pairs per s-op (and inputs per ablation)
  uint64_t seed = 0;
  int max_length = 0;     // 0: the model's longest input
  // Called after each s-op and each node, with the count done and the total.
  std::function<void(int, int)> on_progress;
};

struct InterventionCase {  // the first disagreement, to reproduce with raspc patch
  std::vector<std::string> input, source;  // tokens
  InterventionResult result;
};

struct InterchangeCheck {
  std::string sop;
  int pairs = 0;      // pairs where the program is defined on both inputs and the patch
  int agreed = 0;
  int changed = 0;    // pairs where the patch changed the model's output at all
  int undefined = 0;  // pairs left out: the program undefined on an input or the patched one
  std::vector<InterventionCase> failures;  // the first few
};

struct AblationCheck {
  std::string node;
  bool in_circuit = false;
  int inputs = 0, changed = 0;
  std::vector<InterventionCase> failures;  // outside the circuit: inputs whose output changed
};

struct InterventionReport {
  InterventionCheckOptions options;
  int max_length = 0;
  std::vector<InterchangeCheck> interchanges;
  std::vector<AblationCheck> ablations;
  int failures() const;  // pairs that disagreed plus outside-circuit ablations that changed something
};

InterventionReport verify_interventions(const Model& model, const InterventionCheckOptions& options);

nlohmann::json intervention_report_json(const InterventionReport& report);
std::string format_intervention_report(const InterventionReport& report);

}  // namespace raspc
