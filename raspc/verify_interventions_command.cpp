// raspc verify-interventions MODEL [--pairs N]: every s-op's interchange interventions and every
// node's ablation checked against the interpreter (circuit/verify_interventions.hpp). Exits 2 when
// any disagrees, as a verification mismatch does.
#include <iostream>

#include "circuit/verify_interventions.hpp"
#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

void add_verify_interventions_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("verify-interventions", "Check a compiled model's interchange interventions and ablations against its program's interpreter");
  struct Options {
    std::string model_path;
    InterventionCheckOptions check;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors), compiled by raspc")->required();
  cmd->add_option("--pairs", options->check.pairs, "Random input pairs per s-op, and inputs per ablation (default 200)")->check(CLI::Range(1, 1000000));
  cmd->add_option("--max-len", options->check.max_length, "The longest input drawn (default: the model's)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--seed", options->check.seed, "The pairs' seed (default 0)");
  cmd->add_flag("--json", options->json, "Print the report as one JSON object");
  cmd->callback([options] {
    const Model model = load_model(options->model_path);
    const InterventionReport report =
        naming_errors(options->model_path, [&] { return verify_interventions(model, options->check); });
    if (options->json) std::cout << intervention_report_json(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else std::cout << "model: " << options->model_path << "\n" << format_intervention_report(report);
    if (report.failures() > 0)
      throw VerificationMismatch(format_file_error(options->model_path, std::to_string(report.failures()) +
                                                                            " interventions disagree with the interpreter"));
  });
}

}  // namespace raspc
