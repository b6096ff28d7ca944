// Compiled weights against trained ones, for one program: the arms of `raspc compare`, their
// held-out accuracy by length, their cost, and how their attention patterns line up.
//
// Arms: the compiled model; a model trained at the compiled shape; one with a layer fewer; one at
// a comfortable size (twice the layers, n_embd 64, 4 heads, MLP 256). Every arm is measured on the
// same held-out inputs (Task's fixed-seed set, never trained on).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "language/interpret.hpp"
#include "language/program.hpp"
#include "trainer/train.hpp"

namespace raspc {

// A compiled head and the trained head (any layer) whose attention agrees with it best.
// Agreement of two attention rows is sum_k min(a_k, b_k) (1 - total variation distance: 1 when
// they are equal, 0 when they share no key), averaged over every query of the held-out inputs at
// the training lengths.
struct HeadMatch {
  int compiled_layer = 0, compiled_head = 0;
  int layer = -1, head = -1;  // -1: the arm has no heads
  double agreement = 0;
};

struct ArmResult {
  std::string name;
  bool available = true;
  std::string note;  // why an arm is unavailable (the compiler's message)
  bool trained = false;
  // A model trained elsewhere (compare --trained, as raspc import hf writes one): its file. Its
  // steps and learning curve are not known here.
  std::string source;
  ModelConfig config;
  size_t parameters = 0;
  double flops_per_token = 0;     // at the full context (max_len + 1 with BOS)
  Evaluation training_lengths;    // held-out inputs of the training lengths
  std::vector<Evaluation> by_length;  // index length - 1, lengths 1..max_len
  int steps_run = 0;
  double seconds = 0;
  int steps_to_99 = -1, steps_to_100 = -1;
  double seconds_to_99 = -1, seconds_to_100 = -1;
  std::vector<HeadMatch> heads;  // trained arms: one per compiled head
  std::vector<CurvePoint> curve;  // trained arms: the learning curve
};

struct CompareSettings {
  TaskOptions task;
  TrainSettings training;  // steps, batch, lr, seed, ...; the shape is set per arm
  Mode mode = Mode::Bidirectional;
  std::string program_name, source_text;
  long verify_samples = 2000;  // the compiler's own verification, kept modest
  bool train_arms = true;      // the three arms trained here (off: only the compiled and given models)
};

// A model trained elsewhere, an arm of the comparison under its file's name.
struct GivenModel {
  std::string path;
  Model model;
};

struct CompareResult {
  std::string program_name;
  nlohmann::json settings;
  int train_min = 1, train_max = 1, max_len = 1;
  std::string compile_error;  // "" when the program compiled
  std::vector<ArmResult> arms;
};

// Runs every arm: the compiled model, the arms trained here (settings.train_arms), then each given
// model, measured on the same held-out inputs (their tokens translated by text, so a given model
// may number its vocabulary otherwise). A given model that cannot read the task's inputs, has
// another mask or too few positions is a UserError naming its file. `progress` receives the arm's
// name and each training step.
CompareResult run_comparison(const Program& program, Task& task, const CompareSettings& settings,
                             const std::function<void(const std::string&, const TrainProgress&)>& progress = {},
                             const std::vector<GivenModel>& given = {});

// The reports: a plain table (stdout), Markdown, JSON and an SVG plot of token accuracy against
// length (one line per arm, the training lengths shaded).
std::string comparison_table(const CompareResult& result);
std::string comparison_markdown(const CompareResult& result, const std::string& svg_file_name);
nlohmann::json comparison_json(const CompareResult& result);
std::string comparison_svg(const CompareResult& result);

// Learning curves as one SVG: held-out token accuracy and loss against step, one line
// per named curve (the trained arms of a comparison, each in its colour of comparison_svg, or one
// training run).
struct NamedCurve {
  std::string name;
  int colour = -1;  // the plot palette's index; -1: the curve's position
  std::vector<CurvePoint> points;
};
std::string learning_curves_svg(const std::string& title, const std::vector<NamedCurve>& curves);
std::string comparison_curves_svg(const CompareResult& result);

}  // namespace raspc
