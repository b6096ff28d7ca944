// raspc generate MODEL --prompt ... -n N: greedy generation with the KV cache.
#include <algorithm>
#include <iostream>

#include "raspc/command_options.hpp"
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

// The output tokens that are not input tokens ("" when every one is): such a model computes a
// value at each position, not the next token, so generating from it feeds it what it never reads.
std::string outputs_outside_inputs(const Model& model) {
  const nlohmann::json& output = model.metadata.contains("output") ? model.metadata["output"] : nlohmann::json();
  if (!output.is_object() || !output.contains("token_ids")) return "";
  const std::vector<int> inputs = input_vocabulary(model);
  std::string outside;
  for (const nlohmann::json& id : output["token_ids"])
    if (std::find(inputs.begin(), inputs.end(), id.get<int>()) == inputs.end())
      outside += (outside.empty() ? "" : " ") + model.vocab[id.get<size_t>()];
  return outside;
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Generate tokens greedily from a causal model file");
  struct Options {
    std::string model_path, prompt, device = "cpu";
    int count = 10;
    bool force = false;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  cmd->add_option("--prompt", options->prompt, "The prompt: abaab (one token a character) or [3,1,2]")->required();
  cmd->add_option("-n,--tokens", options->count, "How many tokens to generate (at most 100000)")->capture_default_str();
  cmd->add_option("--device", options->device, "cpu or cuda")->capture_default_str();
  cmd->add_flag("--force", options->force,
                "Generate even from a model whose outputs are not input tokens (it computes a value a position)");
  cmd->callback([options] {
    Device device = device_option(options->device);
    if (options->count < 0 || options->count > kMaxGeneratedTokens) {
      auto arg = std::make_shared<SourceFile>(SourceFile{"-n", std::to_string(options->count)});
      fail_at(Span{arg, 0, uint32_t(arg->text.size())},
              "the number of tokens to generate must be from 0 to " + std::to_string(kMaxGeneratedTokens));
    }
    Model model = load_model(options->model_path);
    if (has_numerical_output(model))
      fail_file(options->model_path, "this model's output is a number read off the residual stream, not a token, so "
                                     "it cannot generate text; run it with `raspc run`");
    if (!model.config.causal)
      fail_file(options->model_path, "this model is bidirectional (every position sees later ones), so it cannot "
                                     "generate token by token; run it with `raspc run`");
    const std::string outside = outputs_outside_inputs(model);
    if (!outside.empty()) {
      const std::string problem = "this model's outputs include tokens that are not input tokens (" + outside +
                                  "), so its output at a position is a value computed there, not the next token";
      if (!options->force) fail_file(options->model_path, problem + "; run it with `raspc run` (--force generates anyway)");
      std::cerr << options->model_path << ": warning: " << problem << "; generating anyway (--force)\n";
    }
    std::vector<int> prompt = parse_model_input(model, options->prompt, "--prompt");
    const int context = int(prompt.size()) + options->count + (model.bos_id >= 0 ? 1 : 0);
    if (options->count > 0 && context > model.config.n_positions)
      std::cerr << "note: the model has " << model.config.n_positions << " positions"
                << (model.bos_id >= 0 ? " (BOS included)" : "") << "; past them each token is predicted from the last "
                << model.config.n_positions - (model.bos_id >= 0 ? 1 : 0)
                << " tokens (a window that slides, recomputed at each step)\n";
    std::unique_ptr<Backend> backend = make_backend(model, device);
    std::vector<int> generated =
        naming_errors(options->model_path, [&] { return generate_greedy(*backend, model, prompt, options->count); });
    std::cout << join_tokens(model, generated) << "\n";
  });
}

}  // namespace raspc
