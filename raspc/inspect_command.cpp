// raspc inspect MODEL [--tensor NAME]: the config and every matrix, rows and columns labelled.
#include <iostream>

#include "raspc/commands.hpp"
#include "runtime/inspect.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

void add_inspect_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("inspect", "Print a model file: its config, size, FLOPs and every labelled matrix");
  struct Options {
    std::string model_path, tensor;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  auto* tensor = cmd->add_option("--tensor", options->tensor,
                  "Print only this tensor, by its Hugging Face name (e.g. transformer.h.0.attn.c_attn.weight)");
  cmd->callback([options, tensor] {
    if (tensor->count() > 0 && options->tensor.empty())
      fail_file("--tensor", "the tensor name is empty; name one, as in transformer.wte.weight");
    Model model = load_model(options->model_path);
    if (tensor->count() > 0) {
      std::cout << format_tensor(model, options->tensor);
      return;
    }
    std::cout << "model: " << options->model_path << "\n" << describe_model(model) << format_all_tensors(model);
  });
}

}  // namespace raspc
