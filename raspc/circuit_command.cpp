// raspc circuit MODEL [--json]: the model's computational graph with TransformerLens's names, read
// off its weights (circuit/circuit.hpp): what a circuit-discovery method should find.
#include <iostream>

#include "circuit/circuit.hpp"
#include "raspc/commands.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

void add_circuit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("circuit", "Print a compiled model's circuit: its heads and MLPs, what each reads and writes, with TransformerLens's hook names");
  struct Options {
    std::string model_path;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors), compiled by raspc")->required();
  cmd->add_flag("--json", options->json, "Print the circuit as one JSON object (docs/json.md gives its fields)");
  cmd->callback([options] {
    const Model model = load_model(options->model_path);
    const Circuit circuit = naming_errors(options->model_path, [&] { return model_circuit(model); });
    if (options->json) {
      std::cout << circuit_json(circuit).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return;
    }
    std::cout << "model: " << options->model_path << "\n" << format_circuit(circuit);
  });
}

}  // namespace raspc
