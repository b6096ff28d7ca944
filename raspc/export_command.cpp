// raspc export MODEL --format hf|tlens|gguf|llmc -o PATH: a model file in another runtime's format.
#include <iostream>

#include "raspc/commands.hpp"
#include "runtime/export/export.hpp"
#include "runtime/safetensors.hpp"

namespace raspc {

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "Write a model for another runtime: hf (transformers), tlens (TransformerLens), gguf (llama.cpp), llmc (llm.c)");
  struct Options {
    std::string model_path, format, out_path;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  cmd->add_option("--format", options->format, "hf, tlens, gguf or llmc")->required();
  cmd->add_option("-o", options->out_path, "Where to write it: a folder (hf, tlens, llmc) or a file (gguf)")->required();
  cmd->callback([options] {
    ExportFormat format = parse_export_format(options->format);
    check_export_path(format, options->out_path, "-o", {options->model_path});
    Model model = load_model(options->model_path);
    export_model(model, format, options->out_path, {options->model_path});
    std::cout << "wrote " << options->out_path << " (" << export_format_name(format) << ")\n";
  });
}

}  // namespace raspc
