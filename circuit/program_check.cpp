#include "circuit/program_check.hpp"

#include <charconv>

#include "language/evaluate.hpp"
#include "language/interpret.hpp"
#include "runtime/model_output.hpp"

namespace raspc {

namespace {

bool is_integer(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::unique_ptr<Program> model_program(const Model& model) {
  if (!model.metadata.is_object() || !model.metadata.contains("program") || !model.metadata["program"].is_string())
    return nullptr;
  auto source = std::make_shared<SourceFile>(SourceFile{"the model's program", model.metadata["program"].get<std::string>()});
  return std::make_unique<Program>(evaluate_program(source));
}

Mode model_mode(const Model& model) {
  const bool causal = model.metadata.is_object() && model.metadata.contains("mode") && model.metadata["mode"] == "causal";
  return causal ? Mode::Causal : Mode::Bidirectional;
}

std::vector<Value> interpreter_input(const Model& model, const std::vector<std::string>& tokens) {
  bool integers = true;
  for (int id : input_vocabulary(model)) integers = integers && is_integer(model.vocab[size_t(id)]);
  std::vector<Value> input;
  for (const std::string& token : tokens)
    input.push_back(integers ? Value::of_int(std::stoll(token)) : Value::of_string(token));
  return input;
}

std::vector<std::string> check_against_program(const Model& model, ResidualTrace& trace) {
  const std::unique_ptr<Program> program = model_program(model);
  if (!program) return {};
  const std::vector<std::string> tokens(trace.tokens.begin() + trace.first, trace.tokens.end());
  Interpreter interpreter(*program, model_mode(model));
  Trace values;
  std::vector<std::string> output;
  for (const Value& v : interpreter.run(interpreter_input(model, tokens), &values)) output.push_back(to_display(v));
  trace.expected.assign(trace.placement.sops.size(), {});
  for (size_t k = 0; k < trace.placement.sops.size(); ++k) {
    const SopPlacement& sop = trace.placement.sops[k];
    std::vector<std::string>& expected = trace.expected[k];
    if (sop.kind == "tokens") {
      expected = tokens;
    } else if (sop.kind == "indices") {
      for (size_t i = 0; i < tokens.size(); ++i) expected.push_back(std::to_string(i));
    } else if (sop.kind != "scratch") {
      const NodeId id = program->find(sop.name);
      if (id < 0 || program->node(id).is_selector()) continue;
      for (const Value& v : values.sop[size_t(id)]) expected.push_back(to_display(v));
    }
  }
  return output;
}

}  // namespace raspc
