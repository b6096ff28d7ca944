#include "circuit/interventions.hpp"

#include <algorithm>
#include <random>

#include "circuit/program_check.hpp"
#include "runtime/model_output.hpp"
#include "support/edit_distance.hpp"

namespace raspc {

namespace {

// A value of a numerical s-op as a number (True is 1); false for a string.
bool numeric(const Value& v, Rational& out) {
  if (v.is_string()) return false;
  out = v.is_bool() ? Rational::integer(v.boolean ? 1 : 0) : v.number;
  return true;
}

// Whether an intervention changed the output: a position whose value differs (numbers beyond
// kNumericalOutputTolerance: the edited forward adds in another order, and a raw reading's last
// digit is no change).
bool outputs_differ(const Model& model, const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return true;
  for (size_t i = 0; i < a.size(); ++i)
    if (!output_matches(model, a[i], b[i])) return true;
  return false;
}

std::string input_text(const Model& model, const std::vector<int>& tokens) {
  return format_outputs(token_texts(model, tokens));
}

// A name given inside a def (`frequency` in most_freq's unique_by_frequency): the one node of the
// program with that local name ("frequency#4" in the model: the compiler numbers its own nodes) at
// the same line and column. A def called twice has two such nodes, and neither is taken: a node is
// patched only where it is certain which one the model holds.
NodeId local_node(const Program& program, const SopPlacement& sop) {
  const size_t colon = sop.source.at.find(':'), hash = sop.name.find('#');
  if (colon == std::string::npos || hash == std::string::npos) return -1;
  const std::string place = sop.source.at.substr(colon + 1), local = sop.name.substr(0, hash);
  NodeId found = -1;
  for (NodeId id = 0; id < NodeId(program.nodes.size()); ++id) {
    const Node& node = program.node(id);
    if (node.local_name != local || !node.span.valid() || node.is_selector()) continue;
    const LineColumn at = line_column(*node.span.file, node.span.begin);
    if (std::to_string(at.line) + ":" + std::to_string(at.column) != place) continue;
    if (found >= 0) return -1;
    found = id;
  }
  return found;
}

}  // namespace

std::vector<std::string> token_texts(const Model& model, const std::vector<int>& tokens) {
  std::vector<std::string> texts;
  for (int t : tokens) texts.push_back(model.vocab[size_t(t)]);
  return texts;
}

Ablation parse_ablation(const std::string& name, const std::string& origin) {
  if (name == "zero") return Ablation::Zero;
  if (name == "mean") return Ablation::Mean;
  if (name == "bos") return Ablation::Bos;
  fail_file(origin, "\"" + name + "\" is no ablation; say zero (the output set to 0), mean (to its mean over "
                    "random inputs) or bos (a head's attention moved to BOS)");
}

const char* ablation_name(Ablation how) {
  switch (how) {
    case Ablation::Zero: return "zero";
    case Ablation::Mean: return "mean";
    case Ablation::Bos: return "bos";
  }
  return "";
}

Intervener::Intervener(const Model& model)
    : model_(model), placement_(read_placement(model)), circuit_(model_circuit(model)),
      program_(model_program(model)), backend_(model) {
  if (!program_ || model.bos_id < 0)
    fail_at(Span{}, "this model keeps no program (or no BOS token), so no interpreter can predict an intervention "
                    "on it; compile the program with raspc");
  interpreter_ = std::make_unique<Interpreter>(*program_, model_mode(model));
}

Intervener::~Intervener() = default;

const SopPlacement* Intervener::find_sop(const std::string& name, NodeId& program_node) const {
  for (const SopPlacement& sop : placement_.sops) {
    if (sop.kind == "scratch" || (sop.shown != name && sop.name != name)) continue;
    program_node = program_->find(sop.name);
    // A library s-op the program names (`n_tokens = length;`): its shown name is the program's.
    if (program_node < 0) program_node = program_->find(sop.shown);
    if (program_node < 0) program_node = local_node(*program_, sop);
    if (program_node < 0 && (sop.kind == "tokens" || sop.kind == "indices"))
      for (NodeId id = 0; id < NodeId(program_->nodes.size()); ++id)
        if (program_->node(id).kind == (sop.kind == "tokens" ? NodeKind::Tokens : NodeKind::Indices)) program_node = id;
    if (program_node >= 0 && !program_->node(program_node).is_selector()) return &sop;
  }
  return nullptr;
}

std::vector<std::string> Intervener::patchable() const {
  std::vector<std::string> names;
  for (const SopPlacement& sop : placement_.sops) {
    NodeId id = -1;
    if (sop.kind != "scratch" && find_sop(sop.shown, id) == &sop) names.push_back(sop.shown);
  }
  return names;
}

std::vector<std::vector<int>> Intervener::random_inputs(int length, int count, uint64_t seed) const {
  const std::vector<int> vocabulary = input_vocabulary(model_);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> inputs(size_t(count), std::vector<int>(size_t(length), 0));
  for (auto& input : inputs)
    for (int& t : input) t = vocabulary[size_t(rng() % vocabulary.size())];
  return inputs;
}

std::vector<std::vector<std::string>> Intervener::model_outputs(const std::vector<std::vector<int>>& inputs,
                                                                 const Interventions* edits) {
  ForwardOptions options = output_forward_options(model_);
  options.interventions = edits;
  std::vector<std::vector<int>> batch;
  for (const auto& input : inputs) batch.push_back(with_bos(model_, input));
  const ForwardResult result = backend_.forward(batch, options);
  std::vector<std::vector<std::string>> outputs;
  for (int b = 0; b < result.batch; ++b) outputs.push_back(read_outputs(model_, result, b).values);
  return outputs;
}

std::vector<Value> Intervener::interpreter_values(const std::vector<int>& input, NodeId id) {
  Trace trace;
  interpreter_->run(interpreter_input(model_, token_texts(model_, input)), &trace);
  return trace.sop[size_t(id)];
}

// The interpreter on `input` with the overrides set, into result.predicted (or no_prediction when
// the program is undefined there); clears the overrides.
void Intervener::predict(InterventionResult& result, const std::vector<int>& input) {
  try {
    for (const Value& v : interpreter_->run(interpreter_input(model_, token_texts(model_, input)))) result.predicted.push_back(to_display(v));
  } catch (const UserError& error) {
    result.predicted.clear();
    const std::string message = error.what();
    result.no_prediction = "the program is undefined on the changed input: " + message.substr(0, message.find('\n'));
  }
  interpreter_->clear_overrides();
  result.agree = !result.predicted.empty() && result.predicted.size() == result.model.size();
  for (size_t i = 0; result.agree && i < result.model.size(); ++i)
    result.agree = output_matches(model_, result.model[i], result.predicted[i]);
}

InterventionResult Intervener::patch(const std::vector<int>& input, const std::vector<int>& source,
                                     const std::string& sop, const std::string& origin, const std::string& source_origin) {
  return patch(std::vector<std::vector<int>>{input}, std::vector<std::vector<int>>{source}, sop, origin, source_origin).at(0);
}

std::vector<InterventionResult> Intervener::patch(const std::vector<std::vector<int>>& inputs,
                                                  const std::vector<std::vector<int>>& sources,
                                                  const std::string& sop_name, const std::string& origin,
                                                  const std::string& source_origin) {
  NodeId id = -1;
  const SopPlacement* sop = find_sop(sop_name, id);
  if (!sop) {
    const std::vector<std::string> names = patchable();
    const std::string near = closest_name(sop_name, names);
    fail_file(origin, "\"" + sop_name + "\" is no s-op of the program that this model holds in dimensions of its own" +
                          (near.empty() ? "" : " (did you mean \"" + near + "\"?)") + "; it can patch " + join_names(names));
  }
  if (inputs.size() != sources.size()) throw std::logic_error("Intervener::patch: as many sources as inputs");
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].size() != sources[i].size())
      fail_file(source_origin, "has " + std::to_string(sources[i].size()) + " tokens and the input " +
                                   std::to_string(inputs[i].size()) + ": an interchange needs two inputs of one length");
  if (inputs.empty()) return {};
  // The model: the s-op's dimensions after the half-block that writes it, from the run on each source.
  ForwardOptions capture;
  capture.capture_residual = true;
  std::vector<std::vector<int>> batch;
  for (const auto& source : sources) batch.push_back(with_bos(model_, source));
  const ForwardResult from = backend_.forward(batch, capture);
  ResidualPatch edit{sop->stage, sop->dims, {}, true};
  for (int b = 0; b < from.batch; ++b)
    for (int t = 0; t < from.time; ++t)
      for (int d : sop->dims) edit.values.push_back(from.residual_at(b, sop->stage, t)[d]);
  Interventions edits;
  edits.residual.push_back(std::move(edit));
  const auto clean = model_outputs(inputs, nullptr);
  const auto patched = model_outputs(inputs, &edits);

  std::vector<InterventionResult> results(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    InterventionResult& result = results[i];
    result.description = sop->shown + " patched from " + input_text(model_, sources[i]);
    result.clean = clean[i];
    result.model = patched[i];
    result.changed = outputs_differ(model_, result.model, result.clean);
    // The interpreter: the s-op takes its values on the source.
    std::vector<Value> values;
    try {
      values = interpreter_values(sources[i], id);
    } catch (const UserError& error) {
      const std::string message = error.what();
      result.no_prediction = "the program is undefined on the source input: " + message.substr(0, message.find('\n'));
      continue;
    }
    interpreter_->set_override(id, std::move(values));
    predict(result, inputs[i]);
  }
  return results;
}

InterventionResult Intervener::ablate(const std::vector<int>& input, const std::string& node, Ablation how,
                                      std::vector<std::vector<int>> reference, int mean_samples, uint64_t seed,
                                      const std::string& origin) {
  return ablate(std::vector<std::vector<int>>{input}, node, how, std::move(reference), mean_samples, seed, origin).at(0);
}

std::vector<InterventionResult> Intervener::ablate(const std::vector<std::vector<int>>& inputs,
                                                   const std::string& node_id, Ablation how,
                                                   std::vector<std::vector<int>> reference, int mean_samples,
                                                   uint64_t seed, const std::string& origin) {
  const CircuitNode* node = circuit_.node(node_id);
  if (!node || (node->kind != "head" && node->kind != "mlp")) {
    std::vector<std::string> ids;
    for (const CircuitNode& n : circuit_.nodes)
      if (n.kind == "head" || n.kind == "mlp") ids.push_back(n.id);
    if (ids.empty())  // an embedded map's model (compiler/constructions/embedded_map.cpp)
      fail_file(origin, "\"" + node_id + "\" is no head or MLP of this model; it has none: it has no blocks, and its "
                                        "embeddings compute the output");
    fail_file(origin, "\"" + node_id + "\" is no head or MLP of this model; it has " + join_names(ids) +
                          " (aL.H: layer L's head H; mL: layer L's MLP)");
  }
  if (how == Ablation::Bos && node->kind != "head")
    fail_file(origin, "an MLP has no attention to move to BOS; ablate " + node_id + " with zero or mean");
  if (inputs.empty()) return {};
  const ModelConfig& cfg = model_.config;
  const int C = cfg.n_embd, d = cfg.d_head(), L = cfg.n_layer;
  const size_t length = inputs[0].size();
  const int T = int(length) + 1;

  // Means over the reference inputs: the node's output at each position (BOS's included).
  std::vector<float> means;
  if (how == Ablation::Mean) {
    if (reference.empty()) reference = random_inputs(int(length), mean_samples, seed);
    std::vector<std::vector<int>> batch;
    for (const auto& r : reference) batch.push_back(with_bos(model_, r));
    for (const auto& input : inputs) batch.push_back(with_bos(model_, input));
    for (const auto& sequence : batch)
      if (sequence.size() != size_t(T))
        fail_file(origin, "a mean ablation averages over inputs of the input's length, and takes inputs of one length");
    batch.resize(reference.size());
    ForwardOptions options;
    options.capture_outputs = true;
    const ForwardResult r = backend_.forward(batch, options);
    const int width = node->kind == "head" ? d : C, offset = node->kind == "head" ? node->head * d : 0;
    means.assign(size_t(T) * width, 0.0f);
    const std::vector<float>& all = node->kind == "head" ? r.z : r.mlp_out;
    for (int b = 0; b < r.batch; ++b)
      for (int t = 0; t < T; ++t)
        for (int j = 0; j < width; ++j)
          means[size_t(t) * width + j] += all[((size_t(b) * L + node->layer) * T + t) * C + offset + j] / float(r.batch);
  }
  Interventions edits;
  if (node->kind == "head") {
    const HeadEdit edit = how == Ablation::Zero ? HeadEdit::Zero : how == Ablation::Mean ? HeadEdit::Replace : HeadEdit::Bos;
    edits.heads.push_back({node->layer, node->head, edit, means});
  } else {
    edits.mlps.push_back({node->layer, means});
  }
  const auto clean = model_outputs(inputs, nullptr);
  const auto ablated = model_outputs(inputs, &edits);

  // Outside the circuit the prediction is the untouched program; inside, what the ablation sets.
  std::vector<std::pair<NodeId, std::vector<Value>>> overrides;
  std::string why;
  const bool predicted = !node->in_circuit || ablation_overrides(*node, how, int(length), reference, overrides, why);
  std::vector<InterventionResult> results(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    InterventionResult& result = results[i];
    result.description = node_id + " " + ablation_name(how) + "-ablated";
    result.clean = clean[i];
    result.model = ablated[i];
    result.changed = outputs_differ(model_, result.model, result.clean);
    if (!predicted) {
      result.no_prediction = why;
      continue;
    }
    for (auto [id, values] : overrides) {
      values.resize(inputs[i].size(), values.empty() ? Value::of_int(0) : values[0]);  // zero and bos: one value a position
      interpreter_->set_override(id, std::move(values));
    }
    predict(result, inputs[i]);
  }
  return results;
}

bool Intervener::ablation_overrides(const CircuitNode& node, Ablation how, int length,
                                    const std::vector<std::vector<int>>& reference,
                                    std::vector<std::pair<NodeId, std::vector<Value>>>& overrides, std::string& why) {
  // The s-ops the node computes, as the program names them.
  std::vector<std::pair<const SopPlacement*, NodeId>> written;
  std::string unnamed;
  for (const SopPlacement& sop : placement_.sops) {
    const bool computed = sop.stage == (node.kind == "head" ? 2 * node.layer + 1 : 2 * node.layer + 2);
    if (!computed || std::none_of(sop.dims.begin(), sop.dims.end(), [&](int dim) {
          return std::find(node.dims.begin(), node.dims.end(), dim) != node.dims.end();
        }))
      continue;
    NodeId id = -1;
    if (find_sop(sop.shown, id) == &sop) written.emplace_back(&sop, id);
    else unnamed = sop.shown;
  }
  if (!unnamed.empty() || written.empty()) {
    why = node.id + " writes " + (unnamed.empty() ? join_names(node.writes) : unnamed) +
          " (no s-op the program names, in dimensions of its own), so the program says nothing of its ablation";
    return false;
  }
  // Another head writing the same dimensions shares the s-op: ablating one leaves no program value.
  if (node.kind == "head")
    for (const CircuitNode& other : circuit_.nodes)
      if (other.id != node.id && other.kind == "head" && other.layer == node.layer)
        for (const auto& [sop, id] : written)
          for (int dim : sop->dims)
            if (std::find(other.dims.begin(), other.dims.end(), dim) != other.dims.end()) {
              why = sop->shown + " is computed by " + node.id + " and " + other.id +
                    " together, so ablating one leaves no value of the program";
              return false;
            }
  for (const auto& [sop, id] : written) {
    const Node& program_node = program_->node(id);
    std::vector<Value> values;  // zero and bos: one value, the same at every position
    if (how == Ablation::Bos) {
      if (program_node.kind != NodeKind::Aggregate) {
        why = node.id + " computes " + sop->shown + " by a " + node.construction +
              " head, whose attention on BOS is no value of the program (only an aggregate's is: its default)";
        return false;
      }
      values.push_back(program_node.default_value);
    } else if (!sop->numerical) {
      why = std::string(how == Ablation::Zero ? "zeroing" : "averaging") + " " + sop->shown +
            "'s one-hot dimensions leaves no value of the program";
      return false;
    } else if (how == Ablation::Zero) {
      values.push_back(Value::of_int(0));
    } else {
      std::vector<Rational> sums(size_t(length), Rational::integer(0));
      for (const auto& r : reference) {
        std::vector<Value> v;
        try {
          v = interpreter_values(r, id);
        } catch (const UserError&) {
          why = "the program is undefined on one of the inputs the mean is taken over";
          return false;
        }
        for (int i = 0; i < length; ++i) {
          Rational q;
          if (!numeric(v[size_t(i)], q)) {
            why = sop->shown + " holds text, which has no mean";
            return false;
          }
          sums[size_t(i)] = sums[size_t(i)] + q;
        }
      }
      for (const Rational& sum : sums) values.push_back(Value::of_number(sum / Rational::integer(int64_t(reference.size()))));
    }
    overrides.emplace_back(id, std::move(values));
  }
  return true;
}

}  // namespace raspc
