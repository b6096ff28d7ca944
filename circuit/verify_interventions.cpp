#include "circuit/verify_interventions.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>

#include "runtime/model_output.hpp"

namespace raspc {

namespace {

constexpr size_t kKeptFailures = 3;  // cases kept per check: enough to reproduce, short to read

std::string percent(int part, int whole) {
  if (whole == 0) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * part / whole);
  return part == whole ? "100%" : text;
}

nlohmann::json case_json(const InterventionCase& c) {
  return {{"input", c.input},
          {"source", c.source.empty() ? nlohmann::json() : nlohmann::json(c.source)},
          {"clean", c.result.clean},
          {"model", c.result.model},
          {"predicted", c.result.predicted.empty() ? nlohmann::json() : nlohmann::json(c.result.predicted)}};
}

}  // namespace

int InterventionReport::failures() const {
  int n = 0;
  for (const InterchangeCheck& c : interchanges) n += c.pairs - c.agreed;
  for (const AblationCheck& c : ablations)
    if (!c.in_circuit) n += c.changed;
  return n;
}

InterventionReport verify_interventions(const Model& model, const InterventionCheckOptions& options) {
  Intervener intervener(model);
  InterventionReport report;
  report.options = options;
  const int longest = model.config.n_positions - 1;
  report.max_length = options.max_length > 0 ? std::min(options.max_length, longest) : longest;

  // The pairs, the same for every s-op: a length drawn from 1..max_length, then two inputs of it.
  std::mt19937_64 rng(options.seed);
  std::vector<std::pair<std::vector<int>, std::vector<int>>> pairs;
  for (int i = 0; i < options.pairs; ++i) {
    const int length = 1 + int(rng() % uint64_t(report.max_length));
    auto two = intervener.random_inputs(length, 2, rng());
    pairs.emplace_back(std::move(two[0]), std::move(two[1]));
  }
  const std::vector<std::string> sops = intervener.patchable();
  std::vector<const CircuitNode*> nodes;
  for (const CircuitNode& n : intervener.circuit().nodes)
    if (n.kind == "head" || n.kind == "mlp") nodes.push_back(&n);
  const int total = int(sops.size() + nodes.size());
  int done = 0;

  std::vector<std::vector<int>> inputs, sources;
  for (const auto& [a, b] : pairs) inputs.push_back(a), sources.push_back(b);
  for (const std::string& sop : sops) {
    InterchangeCheck check;
    check.sop = sop;
    std::vector<InterventionResult> results = intervener.patch(inputs, sources, sop);
    for (size_t i = 0; i < results.size(); ++i) {
      InterventionResult& r = results[i];
      if (r.predicted.empty()) {
        ++check.undefined;
        continue;
      }
      ++check.pairs;
      check.changed += r.changed;
      if (r.agree) ++check.agreed;
      else if (check.failures.size() < kKeptFailures)
        check.failures.push_back({token_texts(model, inputs[i]), token_texts(model, sources[i]), std::move(r)});
    }
    report.interchanges.push_back(std::move(check));
    if (options.on_progress) options.on_progress(++done, total);
  }
  for (const CircuitNode* node : nodes) {
    AblationCheck check;
    check.node = node->id;
    check.in_circuit = node->in_circuit;
    std::vector<InterventionResult> results = intervener.ablate(inputs, node->id, Ablation::Zero);
    for (size_t i = 0; i < results.size(); ++i) {
      InterventionResult& r = results[i];
      ++check.inputs;
      if (!r.changed) continue;
      ++check.changed;
      if (!node->in_circuit && check.failures.size() < kKeptFailures)
        check.failures.push_back({token_texts(model, inputs[i]), {}, std::move(r)});
    }
    report.ablations.push_back(std::move(check));
    if (options.on_progress) options.on_progress(++done, total);
  }
  return report;
}

nlohmann::json intervention_report_json(const InterventionReport& report) {
  nlohmann::json interchanges = nlohmann::json::array(), ablations = nlohmann::json::array();
  for (const InterchangeCheck& c : report.interchanges) {
    nlohmann::json failures = nlohmann::json::array();
    for (const InterventionCase& f : c.failures) failures.push_back(case_json(f));
    interchanges.push_back({{"sop", c.sop},
                            {"pairs", c.pairs},
                            {"agreed", c.agreed},
                            {"accuracy", c.pairs ? nlohmann::json(double(c.agreed) / c.pairs) : nlohmann::json()},
                            {"changed", c.changed},
                            {"undefined", c.undefined},
                            {"failures", failures}});
  }
  for (const AblationCheck& c : report.ablations) {
    nlohmann::json failures = nlohmann::json::array();
    for (const InterventionCase& f : c.failures) failures.push_back(case_json(f));
    ablations.push_back({{"node", c.node},
                         {"in_circuit", c.in_circuit},
                         {"ablation", "zero"},
                         {"inputs", c.inputs},
                         {"changed", c.changed},
                         {"failures", failures}});
  }
  return {{"pairs", report.options.pairs},
          {"seed", report.options.seed},
          {"max_length", report.max_length},
          {"interchanges", interchanges},
          {"ablations", ablations},
          {"failures", report.failures()}};
}

std::string format_intervention_report(const InterventionReport& report) {
  std::ostringstream out;
  auto show_case = [&](const InterventionCase& f) {
    out << "    input " << format_outputs(f.input);
    if (!f.source.empty()) out << ", from " << format_outputs(f.source);
    out << ": model " << format_outputs(f.result.model) << ", interpreter "
        << (f.result.predicted.empty() ? "(no prediction)" : format_outputs(f.result.predicted)) << "\n";
  };
  size_t width = 4;
  for (const InterchangeCheck& c : report.interchanges) width = std::max(width, c.sop.size());
  out << "interchange interventions (" << report.options.pairs << " random pairs of one length, 1 to "
      << report.max_length << ", seed " << report.options.seed << "):\n";
  for (const InterchangeCheck& c : report.interchanges) {
    out << "  " << c.sop << std::string(width - c.sop.size(), ' ') << "  " << c.agreed << " of " << c.pairs
        << " agree (" << percent(c.agreed, c.pairs) << "), the patch changed the output in " << c.changed;
    if (c.undefined) out << "; " << c.undefined << " left out (the program undefined there)";
    out << "\n";
    for (const InterventionCase& f : c.failures) show_case(f);
  }
  if (report.ablations.empty())
    out << "zero ablations: none (the model has no heads or MLPs: its embeddings compute the output)\n";
  else
    out << "zero ablations (" << report.options.pairs << " inputs each):\n";
  for (const AblationCheck& c : report.ablations) {
    out << "  " << c.node << ": " << (c.in_circuit ? "in the circuit, " : "not in the circuit, ") << "changed the output of "
        << c.changed << " of " << c.inputs;
    if (c.in_circuit && c.changed == 0) out << " (on no input drawn does the output depend on it)";
    out << "\n";
    for (const InterventionCase& f : c.failures) show_case(f);
  }
  const int failures = report.failures();
  out << "verify-interventions: "
      << (failures == 0 ? "every intervention agrees with the interpreter"
                        : std::to_string(failures) + " interventions disagree with the interpreter")
      << "\n";
  return out.str();
}

}  // namespace raspc
