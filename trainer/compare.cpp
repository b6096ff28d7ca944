#include "trainer/compare.hpp"

#include <algorithm>

#include "compiler/compile.hpp"
#include "language/analyse.hpp"
#include "runtime/flops.hpp"
#include "runtime/forward.hpp"
#include "runtime/model_output.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

// Attention of the compiled model on the held-out inputs of one training length.
struct CompiledAttention {
  int length = 0, batch = 0;
  std::vector<float> attention;  // (B,L,H,T,T)
};

bool trained_length(const CompareSettings& s, int length) {
  return length >= s.task.train_min && length <= s.task.train_max;
}

void evaluate_model(const Model& model, const Task& task, const CompareSettings& settings, ArmResult& arm,
                       std::vector<CompiledAttention>& attention) {
  std::unique_ptr<Backend> backend = make_backend(model);
  ForwardOptions options = output_forward_options(model);
  options.capture_attention = true;
  for (const HeldOutSet& set : task.held_out()) {
    Evaluation e;
    if (!set.tokens.empty()) {
      std::vector<std::vector<int>> batch;
      for (const std::vector<int>& tokens : set.tokens) {
        std::vector<int> translated{model.bos_id};
        for (size_t t = 1; t < tokens.size(); ++t) translated.push_back(model.token_id(task.vocab()[tokens[t]]));
        batch.push_back(std::move(translated));
      }
      ForwardResult result = backend->forward(batch, options);
      for (size_t b = 0; b < batch.size(); ++b) {
        PositionOutputs outputs = read_outputs(model, result, int(b));
        long counted = 0, right = 0;
        for (int i = 0; i < set.length; ++i) {
          if (set.targets[b][i + 1] == -1) continue;
          ++counted;
          right += output_matches(model, outputs.values[i], set.expected[b][i]);
        }
        if (!counted) continue;
        e.positions += counted;
        e.correct_positions += right;
        ++e.sequences;
        e.correct_sequences += right == counted;
      }
      if (trained_length(settings, set.length))
        attention.push_back({set.length, int(batch.size()), std::move(result.attention)});
    }
    arm.by_length.push_back(e);
    if (trained_length(settings, set.length)) arm.training_lengths.add(e);
  }
}

// Adds one input's agreements to `sum` (compiled head by other head): for every query but BOS's,
// sum_k min(a, b). compiled_at(l, h) and other_at(l, h) are (T,T) [query][key].
template <class CompiledAt, class OtherAt>
void add_agreements(std::vector<double>& sum, const ModelConfig& compiled, CompiledAt compiled_at,
                    const ModelConfig& other, OtherAt other_at, int T) {
  const int other_heads = other.n_layer * other.n_head;
  for (int cl = 0; cl < compiled.n_layer; ++cl)
    for (int ch = 0; ch < compiled.n_head; ++ch) {
      const float* a = compiled_at(cl, ch);
      for (int tl = 0; tl < other.n_layer; ++tl)
        for (int th = 0; th < other.n_head; ++th) {
          const float* t = other_at(tl, th);
          double overlap = 0;
          for (int q = 1; q < T; ++q)
            for (int k = 0; k < T; ++k) overlap += std::min(a[q * T + k], t[q * T + k]);
          sum[size_t(cl * compiled.n_head + ch) * other_heads + tl * other.n_head + th] += overlap;
        }
    }
}

// Per compiled head, the other model's head of the highest mean agreement.
void best_matches(const std::vector<double>& sum, double queries, const ModelConfig& compiled, const ModelConfig& other,
                  ArmResult& arm) {
  const int other_heads = other.n_layer * other.n_head;
  for (int cl = 0; cl < compiled.n_layer; ++cl)
    for (int ch = 0; ch < compiled.n_head; ++ch) {
      HeadMatch m;
      m.compiled_layer = cl;
      m.compiled_head = ch;
      for (int th = 0; th < other_heads; ++th) {
        const double agreement = queries ? sum[size_t(cl * compiled.n_head + ch) * other_heads + th] / queries : 0;
        if (m.layer < 0 || agreement > m.agreement) {
          m.layer = th / other.n_head;
          m.head = th % other.n_head;
          m.agreement = agreement;
        }
      }
      arm.heads.push_back(m);
    }
}

// Per (compiled head, trained head): sum over held-out queries of sum_k min(a, b), and the count.
void match_heads(Network<float>& network, const Task& task, const ModelConfig& compiled,
                 const std::vector<CompiledAttention>& attention, int chunk, ArmResult& arm) {
  const ModelConfig& c = network.config;
  std::vector<double> sum(size_t(compiled.n_layer * compiled.n_head) * c.n_layer * c.n_head, 0.0);
  double queries = 0;
  std::vector<int> tokens, lengths;
  for (const CompiledAttention& ca : attention) {
    const HeldOutSet* set = nullptr;
    for (const HeldOutSet& s : task.held_out())
      if (s.length == ca.length) set = &s;
    const int T = ca.length + 1;
    tokens.assign(size_t(chunk) * T, 0);
    lengths.assign(chunk, T);
    for (int first = 0; first < ca.batch; first += chunk) {
      const int B = std::min(chunk, ca.batch - first);
      for (int b = 0; b < B; ++b)
        std::copy(set->tokens[first + b].begin(), set->tokens[first + b].end(), tokens.begin() + size_t(b) * T);
      network.forward(tokens.data(), lengths.data(), nullptr, B, T);
      for (int b = 0; b < B; ++b) {
        queries += T - 1;  // BOS's own output is never read: its query is left out
        add_agreements(
            sum, compiled,
            [&](int l, int h) {
              return ca.attention.data() + ((size_t(first + b) * compiled.n_layer + l) * compiled.n_head + h) * T * T;
            },
            c, [&](int l, int h) { return network.attention(l) + (size_t(b) * c.n_head + h) * T * T; }, T);
      }
    }
  }
  best_matches(sum, queries, compiled, c, arm);
}

// The same from a given model's attention on the same inputs (evaluate_model captured both).
void match_given_heads(const ModelConfig& compiled, const std::vector<CompiledAttention>& compiled_attention,
                       const ModelConfig& given, const std::vector<CompiledAttention>& given_attention, ArmResult& arm) {
  std::vector<double> sum(size_t(compiled.n_layer * compiled.n_head) * given.n_layer * given.n_head, 0.0);
  double queries = 0;
  for (size_t s = 0; s < compiled_attention.size() && s < given_attention.size(); ++s) {
    const CompiledAttention &ca = compiled_attention[s], &ga = given_attention[s];
    const int T = ca.length + 1;
    for (int b = 0; b < ca.batch; ++b) {
      queries += T - 1;
      auto at = [&](const CompiledAttention& x, const ModelConfig& c) {
        return [&x, &c, b, T](int l, int h) {
          return x.attention.data() + ((size_t(b) * c.n_layer + l) * c.n_head + h) * T * T;
        };
      };
      add_agreements(sum, compiled, at(ca, compiled), given, at(ga, given), T);
    }
  }
  best_matches(sum, queries, compiled, given, arm);
}

// Refuses a given model that cannot be measured on the task's held-out inputs.
void check_given_model(const GivenModel& given, const Task& task, const CompareSettings& settings) {
  const Model& m = given.model;
  const bool causal = settings.mode == Mode::Causal;
  if (m.config.causal != causal)
    fail_file(given.path, std::string("the model is ") + (m.config.causal ? "causal" : "bidirectional") +
                              " but the comparison is " + (causal ? "causal" : "bidirectional") +
                              (causal ? "" : " (give --causal to compare causal models)"));
  if (m.config.n_positions < settings.task.max_len + 1)
    fail_file(given.path, "the model takes " + std::to_string(m.config.n_positions) + " positions but --max-len " +
                              std::to_string(settings.task.max_len) + " needs " +
                              std::to_string(settings.task.max_len + 1) + " (BOS included)");
  if (m.bos_id < 0) fail_file(given.path, "the model has no BOS token, which the task's inputs start with");
  for (int id : task.input_ids())
    if (m.token_id(task.vocab()[size_t(id)]) < 0)
      fail_file(given.path, "the model's vocabulary has no token \"" + task.vocab()[size_t(id)] +
                                "\", an input symbol of the task; was it trained on this program's dataset?");
}

}  // namespace

CompareResult run_comparison(const Program& program, Task& task, const CompareSettings& settings,
                             const std::function<void(const std::string&, const TrainProgress&)>& progress,
                             const std::vector<GivenModel>& given) {
  for (const GivenModel& g : given) check_given_model(g, task, settings);  // before the long work
  CompareResult result;
  result.program_name = settings.program_name;
  result.train_min = settings.task.train_min;
  result.train_max = settings.task.train_max;
  result.max_len = settings.task.max_len;
  result.settings = settings_json(settings.training, settings.task);
  result.settings.erase("layers");
  result.settings.erase("heads");
  result.settings.erase("d_model");
  result.settings.erase("mlp");
  result.settings["stop_at_perfect"] = settings.training.stop_when_perfect;
  result.settings["train_arms"] = settings.train_arms;

  // The compiled arm, and the shape the trained arms start from.
  ArmResult compiled;
  compiled.name = "compiled";
  std::vector<CompiledAttention> attention;
  ModelConfig shape;
  try {
    CompileOptions options;
    options.vocab = settings.task.input_vocab;
    options.max_len = settings.task.max_len;
    options.mode = settings.mode;
    options.layer_norm = settings.training.layer_norm;
    options.activation = settings.training.activation;
    options.samples = settings.verify_samples;
    options.exhaustive_limit = 20000;
    options.source_text = settings.source_text;
    CompileResult compiled_model = compile_program(program, options);
    const Model& model = compiled_model.model;
    shape = model.config;
    compiled.config = model.config;
    compiled.parameters = parameter_count(model.config);
    compiled.flops_per_token = flops_per_token(model.config, model.config.n_positions);
    evaluate_model(model, task, settings, compiled, attention);
  } catch (const UserError& e) {
    // Programs the compiler refuses still get their trained arms, at RASP's own layer count.
    std::string message = e.what();
    result.compile_error = message.substr(0, message.find('\n'));
    compiled.available = false;
    compiled.note = result.compile_error;
    Analysis analysis = analyse(program);
    shape.n_layer = std::max(1, analysis.layers);
    shape.n_head = std::max(1, analysis.max_heads());
    shape.n_embd = 16 * shape.n_head;
    shape.n_inner = 4 * shape.n_embd;
  }
  result.arms.push_back(compiled);

  struct Plan {
    std::string name;
    int layers, heads, d_model, mlp;
  };
  // A compiled model of no blocks (an embedded map) has no layer fewer to train, and a comfortable
  // model of it still has blocks: 2 layers, as for a model of one.
  std::vector<Plan> plans = {{"trained, compiled shape", shape.n_layer, shape.n_head, shape.n_embd, shape.n_inner}};
  if (shape.n_layer > 0)
    plans.push_back({"trained, 1 layer fewer", shape.n_layer - 1, shape.n_head, shape.n_embd, shape.n_inner});
  plans.push_back({"trained, comfortable", 2 * std::max(1, shape.n_layer), 4, 64, 256});
  const int chunk = 64;
  for (const Plan& plan : settings.train_arms ? plans : std::vector<Plan>{}) {
    TrainSettings s = settings.training;
    s.layers = plan.layers;
    s.heads = plan.heads;
    s.d_model = plan.d_model;
    s.mlp = plan.mlp;
    TrainResult trained = train_model(task, s, [&](const TrainProgress& p) {
      if (progress) progress(plan.name, p);
    });
    ArmResult arm;
    arm.name = plan.name;
    arm.trained = true;
    arm.config = trained.model.config;
    arm.parameters = parameter_count(arm.config);
    arm.flops_per_token = flops_per_token(arm.config, arm.config.n_positions);
    arm.steps_run = trained.steps_run;
    arm.seconds = trained.seconds;
    arm.steps_to_99 = trained.steps_to_99;
    arm.curve = trained.curve;
    arm.steps_to_100 = trained.steps_to_100;
    arm.seconds_to_99 = trained.seconds_to_99;
    arm.seconds_to_100 = trained.seconds_to_100;
    Network<float> network(trained.model, chunk);
    for (const HeldOutSet& set : task.held_out()) {
      Evaluation e = evaluate_held_out(network, task.output_ids(), set, chunk);
      arm.by_length.push_back(e);
      if (trained_length(settings, set.length)) arm.training_lengths.add(e);
    }
    if (compiled.available) match_heads(network, task, compiled.config, attention, chunk, arm);
    result.arms.push_back(std::move(arm));
  }
  for (const GivenModel& g : given) {
    ArmResult arm;
    arm.name = g.path.substr(g.path.rfind('/') == std::string::npos ? 0 : g.path.rfind('/') + 1);
    arm.source = g.path;
    arm.trained = true;
    arm.config = g.model.config;
    arm.parameters = parameter_count(arm.config);
    arm.flops_per_token = flops_per_token(arm.config, arm.config.n_positions);
    std::vector<CompiledAttention> given_attention;
    evaluate_model(g.model, task, settings, arm, given_attention);
    if (compiled.available) match_given_heads(compiled.config, attention, arm.config, given_attention, arm);
    result.arms.push_back(std::move(arm));
  }
  return result;
}

}  // namespace raspc
