// raspc patch MODEL --input A (--from B --sop NAME | --ablate NODE [--how zero|mean|bos]): one
// intervention on the model beside the interpreter's prediction of it (circuit/interventions.hpp).
// Exits 2 when the two disagree, as a verification mismatch does.
#include <iostream>

#include "circuit/interventions.hpp"
#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

struct PatchOptions {
  std::string model_path, input, from, sop, node, how = "zero";
  int mean_over = 200;
  uint64_t seed = 0;
  bool json = false;
};

nlohmann::json result_json(const InterventionResult& r) {
  return {{"intervention", r.description},
          {"clean", r.clean},
          {"model", r.model},
          {"predicted", r.predicted.empty() ? nlohmann::json() : nlohmann::json(r.predicted)},
          {"no_prediction", r.no_prediction.empty() ? nlohmann::json() : nlohmann::json(r.no_prediction)},
          {"agree", r.predicted.empty() ? nlohmann::json() : nlohmann::json(r.agree)},
          {"changed", r.changed}};
}

}  // namespace

void add_patch_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("patch", "Run a model with an s-op patched from another input, or a head or MLP ablated, beside the interpreter's prediction");
  auto options = std::make_shared<PatchOptions>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors), compiled by raspc")->required();
  cmd->add_option("--input", options->input, "The input: hello (one token a character) or [3,1,2,4]")->required();
  auto* from = cmd->add_option("--from", options->from, "The input whose values of --sop are patched in (the same length)");
  auto* sop = cmd->add_option("--sop", options->sop, "The s-op to patch, by the program's name for it (raspc circuit lists them)");
  auto* ablate = cmd->add_option("--ablate", options->node, "The head (a0.1: layer 0, head 1) or MLP (m0) to ablate");
  auto* how = cmd->add_option("--how", options->how, "The ablation: zero, mean (over random inputs of the input's length) or bos (a head attends to BOS only); default zero");
  auto* mean_over = cmd->add_option("--mean-over", options->mean_over, "With --how mean: how many random inputs the mean is taken over (default 200)")->check(CLI::Range(1, 100000));
  auto* seed = cmd->add_option("--seed", options->seed, "With --how mean: the random inputs' seed (default 0)");
  cmd->add_flag("--json", options->json, "Print the result as one JSON object");
  from->needs(sop);
  sop->needs(from);
  ablate->excludes(sop);
  for (auto* option : {how, mean_over, seed}) option->needs(ablate);
  cmd->callback([options, ablate, sop] {
    if (ablate->count() == 0 && sop->count() == 0)
      fail_file("--sop", "say what to change: --from B --sop NAME patches an s-op, --ablate NODE ablates a head or MLP");
    const Model model = load_model(options->model_path);
    const Ablation how = parse_ablation(options->how, "--how");
    const std::vector<int> input = parse_model_input(model, options->input);
    Intervener intervener = naming_errors(options->model_path, [&] { return Intervener(model); });
    const InterventionResult r =
        sop->count() > 0 ? intervener.patch(input, parse_model_input(model, options->from, "--from"), options->sop)
                         : intervener.ablate(input, options->node, how, {}, options->mean_over, options->seed);
    if (options->json) {
      std::cout << result_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << r.description << ", on " << options->input << ":\n"
                << "  model, untouched  " << format_outputs(r.clean) << "\n"
                << "  model, changed    " << format_outputs(r.model) << "\n"
                << "  interpreter       " << (r.predicted.empty() ? "no prediction: " + r.no_prediction : format_outputs(r.predicted))
                << "\n";
      if (!r.predicted.empty()) std::cout << (r.agree ? "the model agrees with the interpreter\n" : "");
    }
    if (!r.predicted.empty() && !r.agree)
      throw VerificationMismatch(format_file_error(options->model_path, "the model's output under " + r.description +
                                                                            " differs from the interpreter's prediction"));
  });
}

}  // namespace raspc
