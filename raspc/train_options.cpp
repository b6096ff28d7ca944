#include "raspc/train_options.hpp"

#include <cmath>
#include <thread>

#include "language/input.hpp"

namespace raspc {

void add_shape_options(CLI::App& cmd, ShapeOptions& s, bool with_model_shape) {
  s.vocab_option = cmd.add_option("--vocab", s.vocab, "Input symbols, as in abcd or \"[1,2,3]\" (default: the program header's)");
  cmd.add_option("--max-len", s.max_len, "Longest input the model accepts (BOS not counted)")->capture_default_str();
  cmd.add_option("--train-len", s.train_len, "Input lengths drawn for training, A-B (default: 1 to --max-len)");
  if (with_model_shape) {
    cmd.add_option("--layers", s.layers, "Transformer blocks")->capture_default_str();
    cmd.add_option("--heads", s.heads, "Attention heads per block")->capture_default_str();
    cmd.add_option("--d-model", s.d_model, "Residual width n_embd (a multiple of --heads)")->capture_default_str();
    cmd.add_option("--mlp", s.mlp, "MLP width (default: 4 * d_model; 0: no MLP)");
  }
  cmd.add_flag("--no-layernorm", s.no_layernorm, "Models without LayerNorm");
  cmd.add_option("--activation", s.activation, "MLP activation: gelu or relu")->capture_default_str();
}

void add_training_options(CLI::App& cmd, TrainingOptions& t) {
  cmd.add_option("--steps", t.steps, "Optimizer steps (the budget)")->capture_default_str();
  cmd.add_option("--batch", t.batch, "Sequences per step")->capture_default_str();
  cmd.add_option("--lr", t.lr, "Peak learning rate (AdamW; linear warmup, cosine decay to 0.1x)")->capture_default_str();
  cmd.add_option("--weight-decay", t.weight_decay, "AdamW weight decay (matrices and embeddings only)")->capture_default_str();
  cmd.add_option("--warmup", t.warmup, "Warmup steps (default: steps / 20)");
  cmd.add_option("--seed", t.seed, "Seed of the initialisation and of the training inputs")->capture_default_str();
  cmd.add_option("--eval-every", t.eval_every, "Held-out evaluation every this many steps")->capture_default_str();
  cmd.add_option("--held-out", t.held_out, "Held-out inputs per length (fewer where the length has few inputs)")->capture_default_str();
  cmd.add_flag("--stop-at-perfect", t.stop_at_perfect, "Stop at the first evaluation with 100% held-out token accuracy");
  cmd.add_option("--threads", t.threads,
                 "Threads a step splits its batch over (0: every core); another count changes the result by float "
                 "rounding only")
      ->capture_default_str();
}

TaskOptions task_options_from(const TrainingOptions& t, const ShapeOptions& s, const LoadedProgram& program) {
  if (s.max_len < 1 || s.max_len > 512)
    fail_option("--max-len", std::to_string(s.max_len), "the maximum length must be between 1 and 512");
  if (t.held_out < 1) fail_option("--held-out", std::to_string(t.held_out), "give at least 1 held-out input per length");
  TaskOptions o;
  if (s.vocab_option && s.vocab_option->count() > 0 && s.vocab.empty()) parse_vocabulary(s.vocab, "--vocab");  // refuses it
  o.input_vocab = task_vocabulary(s.vocab, program);
  o.max_len = s.max_len;
  if (s.train_len.empty()) {
    o.train_min = 1;
    o.train_max = s.max_len;
  } else {
    parse_length_range("--train-len", s.train_len, s.max_len, o.train_min, o.train_max);
  }
  o.held_out_per_length = t.held_out;
  return o;
}

TrainSettings train_settings_from(const TrainingOptions& t, const ShapeOptions& s, bool causal, int layers, int heads,
                                  int d_model) {
  auto require = [](bool ok, const std::string& option, const std::string& text, const std::string& message) {
    if (!ok) fail_option(option, text, message);
  };
  require(layers >= 0 && layers <= 64, "--layers", std::to_string(layers), "the number of layers must be between 0 and 64");
  require(heads >= 1, "--heads", std::to_string(heads), "give at least one head");
  require(d_model >= 1 && d_model <= 4096, "--d-model", std::to_string(d_model), "d_model must be between 1 and 4096");
  require(d_model % heads == 0, "--d-model", std::to_string(d_model),
          "d_model must be a multiple of the number of heads (" + std::to_string(heads) + ")");
  require(s.mlp >= -1, "--mlp", std::to_string(s.mlp), "the MLP width must be 0 (no MLP) or more");
  require(s.activation == "gelu" || s.activation == "relu", "--activation", s.activation, "the activation must be gelu or relu");
  require(t.steps >= 1, "--steps", std::to_string(t.steps), "give at least one step");
  require(t.batch >= 1 && t.batch <= 4096, "--batch", std::to_string(t.batch), "the batch must be between 1 and 4096");
  require(std::isfinite(t.lr) && t.lr > 0, "--lr", std::to_string(t.lr), "the learning rate must be a positive number");
  require(std::isfinite(t.weight_decay) && t.weight_decay >= 0, "--weight-decay", std::to_string(t.weight_decay),
          "the weight decay must be 0 or more");
  require(t.warmup >= -1, "--warmup", std::to_string(t.warmup), "the warmup must be 0 steps or more");
  require(t.threads >= 0 && t.threads <= 1024, "--threads", std::to_string(t.threads),
          "the thread count must be between 0 (every core) and 1024");
  require(t.eval_every >= 1, "--eval-every", std::to_string(t.eval_every), "evaluate at least every step (1) or less often");
  TrainSettings r;
  r.layers = layers;
  r.heads = heads;
  r.d_model = d_model;
  r.mlp = s.mlp;
  r.causal = causal;
  r.layer_norm = !s.no_layernorm;
  r.activation = s.activation == "relu" ? Activation::Relu : Activation::Gelu;
  r.steps = t.steps;
  r.batch = t.batch;
  r.learning_rate = t.lr;
  r.weight_decay = t.weight_decay;
  r.warmup_steps = t.warmup;
  r.seed = t.seed;
  r.eval_every = t.eval_every;
  r.stop_when_perfect = t.stop_at_perfect;
  r.threads = t.threads > 0 ? t.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  return r;
}

}  // namespace raspc
