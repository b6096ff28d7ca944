#include "trainer/train.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "language/value.hpp"

namespace raspc {

void Evaluation::add(const Evaluation& o) {
  positions += o.positions;
  correct_positions += o.correct_positions;
  sequences += o.sequences;
  correct_sequences += o.correct_sequences;
  loss_sum += o.loss_sum;
}

Evaluation evaluate_held_out(Network<float>& network, const std::vector<int>& output_ids, const HeldOutSet& set,
                             int chunk) {
  Evaluation e;
  const int T = set.length + 1;
  std::vector<int> tokens(size_t(chunk) * T), lengths(chunk, T), predicted(size_t(chunk) * T), targets(size_t(chunk) * T);
  for (size_t first = 0; first < set.tokens.size(); first += chunk) {
    const int B = int(std::min<size_t>(chunk, set.tokens.size() - first));
    long chunk_positions = 0;
    for (int b = 0; b < B; ++b) {
      std::copy(set.tokens[first + b].begin(), set.tokens[first + b].end(), tokens.begin() + size_t(b) * T);
      std::copy(set.targets[first + b].begin(), set.targets[first + b].end(), targets.begin() + size_t(b) * T);
      chunk_positions += std::count_if(set.targets[first + b].begin(), set.targets[first + b].end(), [](int t) { return t != -1; });
    }
    const double loss = network.forward(tokens.data(), lengths.data(), targets.data(), B, T);
    if (chunk_positions > 0) e.loss_sum += loss * double(chunk_positions);
    network.predict(predicted.data(), output_ids);
    for (int b = 0; b < B; ++b) {
      const std::vector<int>& targets = set.targets[first + b];
      long counted = 0, right = 0;
      for (int t = 0; t < T; ++t) {
        if (targets[t] == -1) continue;
        ++counted;
        right += predicted[size_t(b) * T + t] == targets[t];
      }
      if (!counted) continue;
      e.positions += counted;
      e.correct_positions += right;
      ++e.sequences;
      e.correct_sequences += right == counted;
    }
  }
  return e;
}

Evaluation evaluate_lengths(Network<float>& network, const Task& task, int min_len, int max_len, int chunk) {
  Evaluation e;
  for (const HeldOutSet& set : task.held_out())
    if (set.length >= min_len && set.length <= max_len) e.add(evaluate_held_out(network, task.output_ids(), set, chunk));
  return e;
}

Model make_trainable_model(const Task& task, const TrainSettings& s) {
  Model model;
  ModelConfig& c = model.config;
  c.n_layer = s.layers;
  c.n_head = s.heads;
  c.n_embd = s.d_model;
  c.n_inner = s.mlp < 0 ? 4 * s.d_model : s.mlp;
  c.n_positions = task.options().max_len + 1;
  c.vocab_size = int(task.vocab().size());
  c.causal = s.causal;
  c.layer_norm = s.layer_norm;
  c.activation = s.activation;
  model.vocab = task.vocab();
  model.bos_id = task.bos_id();
  model.input_ids = task.input_ids();
  for (int i = 0; i < c.n_embd; ++i) model.residual_labels.push_back("d" + std::to_string(i));
  model.metadata["mode"] = s.causal ? "causal" : "bidirectional";
  model.metadata["output"] = {{"encoding", "categorical"}, {"token_ids", task.output_ids()}};
  model.allocate();
  initialise_parameters(model, s.seed);
  return model;
}

nlohmann::json settings_json(const TrainSettings& s, const TaskOptions& task) {
  nlohmann::json vocab = nlohmann::json::array();
  for (const Value& v : task.input_vocab) vocab.push_back(to_display(v));
  return {{"vocab", vocab},
          {"max_len", task.max_len},
          {"train_len", std::to_string(task.train_min) + "-" + std::to_string(task.train_max)},
          {"layers", s.layers},
          {"heads", s.heads},
          {"d_model", s.d_model},
          {"mlp", s.mlp < 0 ? 4 * s.d_model : s.mlp},
          {"causal", s.causal},
          {"layer_norm", s.layer_norm},
          {"activation", s.activation == Activation::Gelu ? "gelu" : "relu"},
          {"steps", s.steps},
          {"batch", s.batch},
          {"lr", s.learning_rate},
          {"weight_decay", s.weight_decay},
          {"clip_norm", s.clip_norm},
          {"warmup_steps", s.warmup_steps < 0 ? s.steps / 20 : s.warmup_steps},
          {"schedule", "linear warmup, cosine decay to 0.1 lr"},
          {"seed", s.seed},
          // The weights depend on it by float rounding (each thread's chunk of the batch sums its
          // own gradients), so a run is reproduced with the same seed and the same thread count.
          {"threads", s.threads},
          {"held_out_per_length", task.held_out_per_length},
          {"held_out_seed", task.held_out_seed}};
}

TrainResult train_model(Task& task, const TrainSettings& s, const std::function<void(const TrainProgress&)>& progress) {
  using Clock = std::chrono::steady_clock;
  TrainResult result;
  result.model = make_trainable_model(task, s);
  const TaskOptions& options = task.options();

  OptimizerSettings os;
  os.learning_rate = s.learning_rate;
  os.weight_decay = s.weight_decay;
  os.clip_norm = s.clip_norm;
  os.total_steps = s.steps;
  os.warmup_steps = s.warmup_steps < 0 ? s.steps / 20 : s.warmup_steps;
  AdamW optimizer(result.model.config, os);
  Network<float> network(result.model, s.batch, s.threads);

  // The data stream has its own generator, so evaluations never shift the training inputs.
  std::mt19937_64 data_rng(s.seed * 0x9e3779b97f4a7c15ull + 1);
  Batch batch;
  batch.tokens.assign(size_t(s.batch) * (options.max_len + 1), 0);
  batch.targets.assign(batch.tokens.size(), -1);
  batch.lengths.assign(s.batch, 0);
  std::vector<int> predicted(batch.tokens.size());

  TrainProgress p;
  p.steps = s.steps;
  double seconds = 0;
  double loss_since_evaluation = 0;
  int steps_since_evaluation = 0;
  for (int step = 0; step < s.steps; ++step) {
    const auto start = Clock::now();
    task.fill_batch(batch, s.batch, data_rng);
    p.loss = network.forward(batch.tokens.data(), batch.lengths.data(), batch.targets.data(), batch.B, batch.T);
    network.backward();
    optimizer.update(network.params.data(), network.grads.data(), step);
    seconds += std::chrono::duration<double>(Clock::now() - start).count();

    network.predict(predicted.data(), task.output_ids());
    long counted = 0, right = 0;
    for (int i = 0; i < batch.B * batch.T; ++i)
      if (batch.targets[i] >= 0) {
        ++counted;
        right += predicted[i] == batch.targets[i];
      }
    p.batch_accuracy = counted ? float(right) / counted : 0.0f;
    p.step = step + 1;
    p.seconds = seconds;
    p.steps_per_second = seconds > 0 ? p.step / seconds : 0;
    result.final_loss = p.loss;
    result.steps_run = p.step;
    loss_since_evaluation += p.loss;
    ++steps_since_evaluation;

    const bool last = p.step == s.steps;
    bool perfect = false;
    if (last || (s.eval_every > 0 && p.step % s.eval_every == 0)) {
      Evaluation e = evaluate_lengths(network, task, options.train_min, options.train_max, s.batch);
      p.held_out_accuracy = e.token_accuracy();
      result.held_out = e;
      result.curve.push_back({p.step, p.held_out_accuracy, e.mean_loss(), loss_since_evaluation / steps_since_evaluation});
      loss_since_evaluation = 0;
      steps_since_evaluation = 0;
      if (p.held_out_accuracy >= 0.99 && result.steps_to_99 < 0) {
        result.steps_to_99 = p.step;
        result.seconds_to_99 = seconds;
      }
      perfect = e.positions > 0 && e.correct_positions == e.positions;
      if (perfect && result.steps_to_100 < 0) {
        result.steps_to_100 = p.step;
        result.seconds_to_100 = seconds;
      }
    }
    if (progress) progress(p);
    if (perfect && s.stop_when_perfect) break;
  }
  result.seconds = seconds;
  network.store(result.model);
  nlohmann::json report = {{"steps_run", result.steps_run},
                           {"final_loss", result.final_loss},
                           {"held_out_token_accuracy", result.held_out.token_accuracy()},
                           {"held_out_sequence_accuracy", result.held_out.sequence_accuracy()},
                           {"steps_to_99", result.steps_to_99},
                           {"steps_to_100", result.steps_to_100},
                           {"unrepresentable_targets", task.unrepresentable_targets()}};
  nlohmann::json curve = {{"step", nlohmann::json::array()},
                          {"held_out_token_accuracy", nlohmann::json::array()},
                          {"held_out_loss", nlohmann::json::array()},
                          {"training_loss", nlohmann::json::array()}};
  for (const CurvePoint& point : result.curve) {
    curve["step"].push_back(point.step);
    curve["held_out_token_accuracy"].push_back(point.held_out_accuracy);
    curve["held_out_loss"].push_back(point.held_out_loss);
    curve["training_loss"].push_back(point.training_loss);
  }
  result.model.metadata["trainer"] = {{"settings", settings_json(s, options)}, {"result", report}, {"curve", curve}};
  return result;
}

}  // namespace raspc
