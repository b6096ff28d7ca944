// raspc generate MODEL --prompt ... -n N: greedy generation with the KV cache.
#include <iostream>

#include "raspc/commands.hpp"
#include "runtime/forward.hpp"
#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

// Tokens joined as text: "baab" when every token is one character, "3 1 2" otherwise.
std::string join_tokens(const Model& model, const std::vector<int>& ids) {
  bool single_characters = true;
  for (int id : ids) single_characters = single_characters && model.vocab[id].size() == 1;
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i && !single_characters) text += ' ';
    text += model.vocab[ids[i]];
  }
  return text;
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Generate tokens greedily from a causal model file");
  struct Options {
    std::string model_path, prompt, device = "cpu";
    int count = 10;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  cmd->add_option("--prompt", options->prompt, "The prompt: abaab (one token a character) or [3,1,2]")->required();
  cmd->add_option("-n,--tokens", options->count, "How many tokens to generate")->capture_default_str();
  cmd->add_option("--device", options->device, "cpu or cuda")->capture_default_str();
  cmd->callback([options] {
    Device device = parse_device(options->device);
    if (options->count < 0) {
      auto arg = std::make_shared<SourceFile>(SourceFile{"-n", std::to_string(options->count)});
      fail_at(Span{arg, 0, uint32_t(arg->text.size())}, "the number of tokens to generate must be 0 or more");
    }
    Model model = load_model(options->model_path);
    std::vector<int> prompt = parse_model_input(model, options->prompt, "--prompt");
    std::unique_ptr<Backend> backend = make_backend(model, device);
    std::cout << join_tokens(model, generate_greedy(*backend, model, prompt, options->count)) << "\n";
  });
}

}  // namespace raspc
