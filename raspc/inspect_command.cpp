// raspc inspect MODEL: a summary that fits a screen (config, and per layer its heads with their
// selectors, MLP units with their labels, and which rows and columns of each matrix are not all
// zero); --all or --tensor NAME print matrices in full, without all-zero rows and columns unless
// --dense; --json prints the summary as JSON.
#include <iostream>

#include "raspc/commands.hpp"
#include "runtime/inspect.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Summarise a model file: config, size, FLOPs, and what each head and MLP reads and writes");
  struct Options {
    std::string model_path, tensor;
    bool all = false, dense = false, json = false;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  auto* tensor = cmd->add_option("--tensor", options->tensor,
                  "Print only this tensor, by its Hugging Face name (e.g. transformer.h.0.attn.c_attn.weight)");
  auto* all = cmd->add_flag("--all", options->all, "Print the config and every tensor, rows and columns labelled");
  cmd->add_flag("--dense", options->dense, "With --all or --tensor: keep all-zero rows and columns");
  auto* json = cmd->add_flag("--json", options->json, "Print the summary as one JSON object (the README gives its fields)");
  all->excludes(tensor);
  json->excludes(all);
  json->excludes(tensor);
  cmd->callback([options, tensor] {
    if (tensor->count() > 0 && options->tensor.empty())
      fail_file("--tensor", "the tensor name is empty; name one, as in transformer.wte.weight");
    if (options->dense && !options->all && tensor->count() == 0)
      fail_file("--dense", "applies to the matrices of --all or --tensor NAME; the summary prints none");
    Model model = load_model(options->model_path);
    if (tensor->count() > 0) {
      std::cout << format_tensor(model, options->tensor, options->dense);
      return;
    }
    if (options->all) {
      std::cout << "model: " << options->model_path << "\n"
                << describe_model(model) << format_all_tensors(model, options->dense);
      return;
    }
    const nlohmann::json summary = model_summary(model);
    if (options->json) {
      std::cout << summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return;
    }
    std::cout << "model: " << options->model_path << "\n" << format_model_summary(summary);
  });
}

}  // namespace raspc
