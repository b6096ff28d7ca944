// The training loop: fresh labelled batches, forward, backward, AdamW; held-out evaluation along
// the way (for "steps to 99% / 100%"); the result is an ordinary raspc Model.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "runtime/model.hpp"
#include "trainer/network.hpp"
#include "trainer/optimizer.hpp"
#include "trainer/task.hpp"

namespace raspc {

struct TrainSettings {
  int layers = 1, heads = 1, d_model = 16;
  int mlp = -1;  // MLP width; -1 means 4 * d_model
  bool causal = false;
  bool layer_norm = true;
  Activation activation = Activation::Gelu;
  int steps = 1000, batch = 32;
  float learning_rate = 3e-3f;
  float weight_decay = 0.01f;
  float clip_norm = 1.0f;
  int warmup_steps = -1;  // -1 means steps / 20
  uint64_t seed = 1;
  int eval_every = 100;            // held-out evaluation (training lengths) every this many steps
  bool stop_when_perfect = false;  // stop at the first evaluation with 100% held-out accuracy
  // Threads a step's forward and backward split the batch over (trainer/network.hpp). The same
  // seed and thread count give the same model bit for bit; another count differs by float rounding.
  int threads = 1;
};

// Accuracy on held-out inputs. Token accuracy counts every position whose output is defined;
// sequence accuracy counts sequences whose every such position is right (sequences on which the
// program is undefined are left out of both).
struct Evaluation {
  long positions = 0, correct_positions = 0;
  long sequences = 0, correct_sequences = 0;
  double loss_sum = 0;  // cross-entropy summed over the counted positions
  double mean_loss() const { return positions ? loss_sum / double(positions) : 0.0; }
  double token_accuracy() const { return positions ? double(correct_positions) / positions : 0.0; }
  double sequence_accuracy() const { return sequences ? double(correct_sequences) / sequences : 0.0; }
  void add(const Evaluation& other);
};

// Runs the network on one held-out set, `chunk` sequences at a time (chunk <= the network's batch).
Evaluation evaluate_held_out(Network<float>& network, const std::vector<int>& output_ids, const HeldOutSet& set,
                             int chunk);
// Over the held-out sets of the lengths [min_len, max_len].
Evaluation evaluate_lengths(Network<float>& network, const Task& task, int min_len, int max_len, int chunk);

struct TrainProgress {
  int step = 0, steps = 0;  // steps done, of the budget
  float loss = 0;           // of the last batch
  float batch_accuracy = 0;    // token accuracy on the last batch
  double held_out_accuracy = -1;  // token accuracy at the training lengths, last evaluation (-1: none yet)
  double seconds = 0;             // training time so far (evaluations not counted)
  double steps_per_second = 0;
};

// One held-out evaluation during training, a point of the learning curve.
struct CurvePoint {
  int step = 0;
  double held_out_accuracy = 0;  // token accuracy at the training lengths
  double held_out_loss = 0;      // mean cross-entropy there
  double training_loss = 0;      // mean batch loss over the steps since the previous point
};

struct TrainResult {
  Model model;
  std::vector<CurvePoint> curve;  // every held-out evaluation, in step order
  int steps_run = 0;
  double seconds = 0;  // training time, evaluations not counted
  float final_loss = 0;
  // First evaluation reaching 99% / 100% held-out token accuracy at the training lengths;
  // -1 where none did within the budget.
  int steps_to_99 = -1, steps_to_100 = -1;
  double seconds_to_99 = -1, seconds_to_100 = -1;
  Evaluation held_out;  // final, at the training lengths
};

// The untrained model for a task and shape: vocabulary, BOS, input ids, residual labels
// "d0".."d{C-1}", metadata["output"] (categorical over the task's output ids) and GPT-2
// initialisation from settings.seed.
Model make_trainable_model(const Task& task, const TrainSettings& settings);

// Trains from settings.seed; the same seed gives the same model, bit for bit. `progress` is
// called after every step.
TrainResult train_model(Task& task, const TrainSettings& settings,
                        const std::function<void(const TrainProgress&)>& progress = {});

// The settings as JSON, for model metadata and reports.
nlohmann::json settings_json(const TrainSettings& settings, const TaskOptions& task);

}  // namespace raspc
