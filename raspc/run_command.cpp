// raspc run MODEL --input ...: the model's output at every input position.
#include <cstdio>
#include <iostream>

#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/forward.hpp"
#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a model file on one input and print its output at every position");
  struct Options {
    std::string model_path, input, device = "cpu";
    bool margins = false;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  cmd->add_option("--input", options->input, "The input: hello (one token a character) or [3,1,2,4]")->required();
  cmd->add_option("--device", options->device, "cpu or cuda")->capture_default_str();
  cmd->add_flag("--margins", options->margins, "Also print each position's logit margin (best minus runner-up)");
  cmd->callback([options] {
    Device device = device_option(options->device);
    Model model = load_model(options->model_path);
    std::vector<int> tokens = parse_model_input(model, options->input);
    std::unique_ptr<Backend> backend = make_backend(model, device);
    PositionOutputs outputs = naming_errors(options->model_path, [&] { return run_positions(*backend, model, tokens); });
    std::cout << format_outputs(outputs.values) << "\n";
    if (options->margins) {
      std::vector<std::string> margins;
      for (float m : outputs.margins) {
        char text[32];
        std::snprintf(text, sizeof text, "%.4g", m);
        margins.push_back(text);
      }
      std::cout << "margins: " << format_outputs(margins) << "\n";
    }
  });
}

}  // namespace raspc
