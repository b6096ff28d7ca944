// Linear probes of a model without placement (a trained one): for each s-op its program names, how
// well a linear read of the residual stream recovers the interpreter's value, at every stage. The
// question `raspc view` asks of a trained model: did gradient descent come to hold what the
// compiler holds, and where?
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/forward.hpp"
#include "runtime/model.hpp"

namespace raspc {

struct SopProbe {
  std::string sop;       // the program's name for it
  size_t values = 0;     // distinct values it takes on the sampled inputs
  int best_stage = 0;    // the residual stage read best (0 the embedding, then after each half-block)
  std::vector<double> accuracy;  // by stage: held-out positions whose value the probe reads right
  double baseline = 0;   // the held-out share of its most frequent training value: what no reading beats
};

struct ProbeSettings {
  int sequences = 400;  // random inputs, half to fit the probes, half to score them
  uint64_t seed = 1;
};

// One probe per s-op the model's program names at top level (selectors left out) and per stage:
// a ridge regression from the standardised residual (with a bias) onto the value's one-hot, fitted
// on every position of half the inputs and read as its argmax on the other half. Inputs are drawn
// uniformly over lengths 1 to the model's maximum and over its input vocabulary; inputs the
// program is undefined on are left out. Empty when the model keeps no program.
std::vector<SopProbe> probe_sops(const Model& model, Backend& backend, const ProbeSettings& settings = {});

// The probes as an HTML table (view/), best stage by TransformerLens hook name.
std::string probes_html(const std::vector<SopProbe>& probes);

}  // namespace raspc
