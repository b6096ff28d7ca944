// The command-line options `raspc train` and `raspc compare` share, and their checks.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "trainer/program_task.hpp"
#include "trainer/train.hpp"

namespace raspc {

struct ShapeOptions {
  std::string vocab;      // not given means the program header's; given empty is an error
  const CLI::Option* vocab_option = nullptr;
  int max_len = 16;
  std::string train_len;  // "" means 1-max_len
  int layers = 1, heads = 1, d_model = 16;
  int mlp = -1;  // -1 means 4 * d_model
  bool no_layernorm = false;
  std::string activation = "gelu";
};

struct TrainingOptions {
  int steps = 1000, batch = 32;
  float lr = 3e-3f, weight_decay = 0.01f;
  int warmup = -1;
  uint64_t seed = 1;
  int eval_every = 100;
  int held_out = 256;
  bool stop_at_perfect = false;
  int threads = 1;  // 0: every core
};

// with_model_shape adds --layers, --heads, --d-model (compare takes them from the compiled model).
void add_shape_options(CLI::App& cmd, ShapeOptions& shape, bool with_model_shape);
void add_training_options(CLI::App& cmd, TrainingOptions& training);

TaskOptions task_options_from(const TrainingOptions& training, const ShapeOptions& shape, const LoadedProgram& program);
// Checks every value (a bad one is a UserError naming its option) and builds the settings.
TrainSettings train_settings_from(const TrainingOptions& training, const ShapeOptions& shape, bool causal, int layers,
                                  int heads, int d_model);

}  // namespace raspc
