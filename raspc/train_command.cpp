// raspc train: learns a program's input/output behaviour by gradient descent and saves the model.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <iostream>

#include "raspc/commands.hpp"
#include "raspc/command_options.hpp"
#include "raspc/train_options.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "trainer/compare.hpp"
#include "trainer/program_task.hpp"
#include "trainer/train.hpp"

namespace raspc {

namespace {

struct TrainCommandOptions {
  std::string program, output_name, model_path;
  ShapeOptions shape;
  TrainingOptions training;
  bool causal = false;
};

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  long s = std::lround(seconds);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lds", s);
  return text;
}

// A progress bar redrawn in place on a terminal; plain lines at every evaluation otherwise.
class ProgressReporter {
 public:
  explicit ProgressReporter(int eval_every) : terminal_(isatty(STDERR_FILENO)), eval_every_(eval_every) {}
  void operator()(const TrainProgress& p) {
    const double eta = p.steps_per_second > 0 ? (p.steps - p.step) / p.steps_per_second : NAN;
    const bool last = p.step == p.steps;
    char held_out[32] = "";
    if (p.held_out_accuracy >= 0) std::snprintf(held_out, sizeof held_out, "  held-out %.1f%%", 100 * p.held_out_accuracy);
    if (terminal_) {
      // Redraws at most ten times a second: the terminal is slower than a small model's step.
      if (!last && p.seconds - last_draw_ < 0.1) return;
      last_draw_ = p.seconds;
      const int width = 24, filled = int(double(width) * p.step / p.steps);
      std::string bar = std::string(filled, '#') + std::string(width - filled, '-');
      std::fprintf(stderr, "\r[%s] %d/%d  loss %.4f  acc %.1f%%%s  %.0f steps/s  ETA %s   ", bar.c_str(), p.step,
                   p.steps, p.loss, 100 * p.batch_accuracy, held_out, p.steps_per_second, format_duration(eta).c_str());
      if (last) std::fprintf(stderr, "\n");
    } else if (last || (eval_every_ > 0 && p.step % eval_every_ == 0)) {
      std::fprintf(stderr, "step %d/%d  loss %.4f  acc %.1f%%%s  %.0f steps/s  ETA %s\n", p.step, p.steps, p.loss,
                   100 * p.batch_accuracy, held_out, p.steps_per_second, format_duration(eta).c_str());
    }
    std::fflush(stderr);
  }
  // A run stopped early (at 100%) ends the bar's line.
  void finish(const TrainResult& r, int steps) {
    if (terminal_ && r.steps_run < steps) std::fprintf(stderr, "\n");
  }

 private:
  bool terminal_;
  int eval_every_;
  double last_draw_ = -1;
};

std::string steps_text(int steps, double seconds) {
  if (steps < 0) return "never";
  char text[64];
  std::snprintf(text, sizeof text, "%d steps (%.1f s)", steps, seconds);
  return text;
}

// The learning curves beside the model: m.safetensors -> m.curves.svg.
std::string curves_path_of(const std::string& model_path) {
  std::filesystem::path path(model_path);
  return path.replace_extension(".curves.svg").string();
}

void run_train(const TrainCommandOptions& o) {
  check_writable_output(o.model_path, "-o", {o.program});  // before the training, not after it
  const std::string curves_path = curves_path_of(o.model_path);
  check_writable_output(curves_path, "-o", {o.program});
  LoadedProgram program = load_program(o.program, o.output_name);
  const bool causal = o.causal || program.header.causal.value_or(false);
  TaskOptions task_options = task_options_from(o.training, o.shape, program);
  TrainSettings settings = train_settings_from(o.training, o.shape, causal, o.shape.layers, o.shape.heads, o.shape.d_model);

  Task task(program.labeller(causal ? Mode::Causal : Mode::Bidirectional), task_options);
  ProgressReporter reporter(settings.eval_every);
  TrainResult result = train_model(task, settings, [&](const TrainProgress& p) { reporter(p); });
  reporter.finish(result, settings.steps);
  result.model.metadata["program"] = program.source->text;
  save_model(result.model, o.model_path);
  write_file_atomically(curves_path, learning_curves_svg(o.program, {{"trained", -1, result.curve}}));

  const ModelConfig& c = result.model.config;
  std::printf("trained %s: %d layer%s, %d head%s, d_model %d, MLP %d, %zu parameters, vocabulary %d\n",
              o.program.c_str(), c.n_layer, c.n_layer == 1 ? "" : "s", c.n_head, c.n_head == 1 ? "" : "s", c.n_embd,
              c.n_inner, parameter_count(c), c.vocab_size);
  std::printf("%d steps of batch %d in %.1f s (%.0f steps/s)\n", result.steps_run, settings.batch, result.seconds,
              result.seconds > 0 ? result.steps_run / result.seconds : 0.0);
  std::printf("held-out, lengths %d-%d: token accuracy %.2f%%, sequence accuracy %.2f%% (%ld sequences)\n",
              task_options.train_min, task_options.train_max, 100 * result.held_out.token_accuracy(),
              100 * result.held_out.sequence_accuracy(), result.held_out.sequences);
  std::printf("to 99%%: %s; to 100%%: %s\n", steps_text(result.steps_to_99, result.seconds_to_99).c_str(),
              steps_text(result.steps_to_100, result.seconds_to_100).c_str());
  if (task.unrepresentable_targets() > 0)
    std::printf("note: %ld training targets were output values never seen while building the vocabulary (masked)\n",
                task.unrepresentable_targets());
  std::printf("wrote %s and its learning curves, %s\n", o.model_path.c_str(), curves_path.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainCommandOptions>();
  auto* cmd = app.add_subcommand("train", "Train a GPT-2 by gradient descent on a program's outputs (labels from the interpreter)");
  cmd->add_option("PROGRAM", options->program, "The RASP program (.rasp) whose outputs are the targets")->required();
  cmd->add_option("--output", options->output_name, "The s-op to learn (default: the program's last expression)");
  cmd->add_option("-o", options->model_path, "The model file to write (.safetensors)")->required();
  cmd->add_flag("--causal", options->causal, "Causal mask and causal program semantics (default: the program header's)");
  add_shape_options(*cmd, options->shape, /*with_model_shape=*/true);
  add_training_options(*cmd, options->training);
  cmd->callback([options] { run_train(*options); });
}

}  // namespace raspc
