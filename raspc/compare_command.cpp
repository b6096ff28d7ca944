// raspc compare: the compiled model against models trained on the same task, in one table.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "raspc/train_options.hpp"
#include "support/atomic_file.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"
#include "trainer/compare.hpp"
#include "trainer/program_task.hpp"

namespace raspc {

namespace {

struct CompareCommandOptions {
  std::string program, output_name, prefix;
  ShapeOptions shape;
  TrainingOptions training;
  bool causal = false;
  long verify_samples = 2000;
  std::vector<std::string> trained;  // models trained elsewhere (raspc import hf)
  bool also_train = false;
};

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void run_compare(const CompareCommandOptions& o, bool write_files) {
  // Before the compiling and training, not after them.
  if (write_files) {
    if (o.prefix.empty()) check_output_path(o.prefix, "-o");
    std::vector<std::string> inputs = o.trained;
    inputs.push_back(o.program);
    for (const char* extension : {".md", ".json", ".svg", ".curves.svg"})
      check_output_path(o.prefix + extension, "-o", inputs);
  }
  std::vector<GivenModel> given;
  for (const std::string& path : o.trained) given.push_back({path, load_model(path)});
  LoadedProgram program = load_program(o.program, o.output_name);
  const bool causal = o.causal || program.header.causal.value_or(false);
  CompareSettings settings;
  settings.task = task_options_from(o.training, o.shape, program);
  // The shape is set per arm; these values only pass the checks.
  settings.training = train_settings_from(o.training, o.shape, causal, 1, 1, 1);
  settings.mode = causal ? Mode::Causal : Mode::Bidirectional;
  settings.program_name = base_name(o.program);
  settings.source_text = program.source->text;
  if (o.verify_samples < 1 || o.verify_samples > kMaxSamples)
    fail_option("--verify-samples", std::to_string(o.verify_samples),
                "give from 1 to " + std::to_string(kMaxSamples) + " samples");
  settings.verify_samples = o.verify_samples;
  settings.train_arms = given.empty() || o.also_train;

  Task task(program.labeller(settings.mode), settings.task);
  // Where the program is undefined there is nothing to learn or to score: a comparison on a
  // program undefined on most inputs would be tables of "-", so it is refused before training.
  long held_out = 0, undefined = 0;
  for (const HeldOutSet& set : task.held_out())
    for (const std::vector<int>& targets : set.targets) {
      ++held_out;
      undefined += std::all_of(targets.begin() + 1, targets.end(), [](int t) { return t == -1; });
    }
  if (held_out > 0 && 2 * undefined > held_out)
    fail_file(o.program, "the program is undefined on " + std::to_string(undefined) + " of the " +
                             std::to_string(held_out) + " held-out inputs (the interpreter fails there), so there is "
                             "nothing to compare; `raspc eval` on such an input names the operation that fails");
  const bool terminal = isatty(STDERR_FILENO);
  std::string current;
  auto progress = [&](const std::string& arm, const TrainProgress& p) {
    const bool last = p.step == p.steps;
    if (arm != current) {
      if (terminal && !current.empty()) std::fprintf(stderr, "\n");
      current = arm;
    }
    if (terminal) {
      char held_out[16] = "-";
      if (p.held_out_accuracy >= 0) std::snprintf(held_out, sizeof held_out, "%.1f%%", 100 * p.held_out_accuracy);
      std::fprintf(stderr, "\r%-26s %d/%d  loss %.4f  held-out %s   ", arm.c_str(), p.step, p.steps, p.loss, held_out);
    } else if (last || p.step % settings.training.eval_every == 0) {
      std::fprintf(stderr, "%s: step %d/%d  loss %.4f  held-out %.1f%%\n", arm.c_str(), p.step, p.steps, p.loss,
                   100 * std::max(0.0, p.held_out_accuracy));
    }
  };
  // A refusal about a node with no place in the source (`tokens` itself) names the program.
  CompareResult result = naming_errors(o.program, [&] { return run_comparison(*program.program, task, settings, progress, given); });
  if (terminal && !current.empty()) std::fprintf(stderr, "\n");

  std::cout << comparison_table(result);
  if (write_files) {
    const std::string svg = o.prefix + ".svg";
    write_file_atomically(o.prefix + ".md", comparison_markdown(result, base_name(svg)));
    write_file_atomically(o.prefix + ".json", comparison_json(result).dump(2) + "\n");
    write_file_atomically(svg, comparison_svg(result));
    write_file_atomically(o.prefix + ".curves.svg", comparison_curves_svg(result));
    std::cout << "wrote " << o.prefix << ".md, " << o.prefix << ".json, " << svg << ", " << o.prefix << ".curves.svg\n";
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<CompareCommandOptions>();
  auto* cmd = app.add_subcommand(
      "compare", "Compile a program and train GPT-2s on it (compiled shape, a layer fewer, comfortable); one table");
  cmd->add_option("PROGRAM", options->program, "The RASP program (.rasp)")->required();
  cmd->add_option("--output", options->output_name, "The s-op to compare on (default: the program's last expression)");
  auto* out_option = cmd->add_option("-o", options->prefix, "Also write PREFIX.md, PREFIX.json, PREFIX.svg (accuracy by length) and PREFIX.curves.svg (learning curves)");
  cmd->add_flag("--causal", options->causal, "Causal mask and causal program semantics (default: the program header's)");
  // 20,000: the exhaustive limit run_comparison gives the compiler (trainer/compare.cpp).
  cmd->add_option("--verify-samples", options->verify_samples,
                  "Random inputs the compiler's verification checks at each length beyond the exhaustive ones "
                  "(those with at most 20,000 inputs up to them)")
      ->capture_default_str();
  cmd->add_option("--trained", options->trained,
                  "Models trained elsewhere (raspc import hf), each an arm measured on the same held-out inputs; "
                  "the arms trained here are then left out unless --also-train")
      ->expected(1, -1);
  cmd->add_flag("--also-train", options->also_train, "With --trained: train the three arms here too");
  add_shape_options(*cmd, options->shape, /*with_model_shape=*/false);
  add_training_options(*cmd, options->training);
  cmd->callback([options, out_option] { run_compare(*options, out_option->count() > 0); });
}

}  // namespace raspc
