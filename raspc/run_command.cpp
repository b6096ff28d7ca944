// raspc run MODEL --input ... (or --inputs FILE): the model's output at every input position.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/forward.hpp"
#include "runtime/model_output.hpp"
#include "runtime/residual_trace.hpp"
#include "runtime/safetensors.hpp"
#include "circuit/program_check.hpp"
#include "support/diagnostics.hpp"
#include "support/utf8.hpp"

namespace raspc {

namespace {

struct RunOptions {
  std::string model_path, input, inputs_path, device = "cpu";
  bool margins = false, json = false, logits = false, trace = false;
};

// The inputs of --inputs: the file (or standard input for "-") as one SourceFile, so an error
// points at its line, and the byte range of each line.
struct InputLines {
  std::shared_ptr<const SourceFile> file;
  std::vector<std::pair<size_t, size_t>> lines;
};
InputLines read_input_lines(const std::string& path) {
  InputLines in;
  in.file = read_source_file(path);  // "-" is standard input, within the same 64 MiB as a file
  in.lines = input_lines(in.file);
  return in;
}

std::string format_margin(float m) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", m);
  return text;
}

// One input's result: a line of text, or (--json) one JSON object a line:
//   {"input": "aab", "outputs": ["a","b","a"], "margins": [45.0, ...], "logits": [[...], ...]}
// "margins" is null for a numerical output, which has "readings" instead: the raw residual values
// the outputs were read from; "logits" (--logits) has one row per position, BOS
// first when the model has one, each the vocabulary's logits in token-id order.
void print_result(const RunOptions& options, const Model& model, const std::string& input,
                  const std::vector<int>& tokens, Backend& backend) {
  const std::vector<int> sequence = with_bos(model, tokens);
  ForwardOptions forward = output_forward_options(model);
  forward.capture_residual = forward.capture_residual || options.trace;
  ForwardResult result = backend.forward({sequence}, forward);
  PositionOutputs outputs =
      naming_errors(options.model_path, [&] { return read_outputs_locating(backend, model, result, 0, sequence); });
  if (options.trace) {
    ResidualTrace trace = naming_errors(options.model_path, [&] { return decode_residual(model, result, 0, sequence); });
    if (trace.placement.sops.empty())
      fail_file(options.model_path, "the model says nothing about its s-ops (a trained model, or one compiled before "
                                    "raspc stored them), so --trace has nothing to decode; raspc view still draws it");
    naming_errors(options.model_path, [&] { return check_against_program(model, trace); });
    std::cout << format_trace(trace) << "\n";
  }
  if (!options.json) {
    std::cout << format_outputs(outputs.values) << "\n";
    if (options.margins) {
      std::vector<std::string> margins;
      for (float m : outputs.margins) margins.push_back(format_margin(m));
      std::cout << "margins: " << format_outputs(margins) << "\n";
    }
    return;
  }
  nlohmann::json line = {{"input", input}, {"outputs", outputs.values}};
  nlohmann::json margins = nlohmann::json::array();
  for (float m : outputs.margins) margins.push_back(std::isnan(m) ? nlohmann::json(nullptr) : nlohmann::json(m));
  line["margins"] = margins;
  const nlohmann::json& output = model.metadata.contains("output") ? model.metadata["output"] : nlohmann::json();
  if (output.is_object() && output.value("encoding", "") == "numerical") {
    const int stage = 2 * model.config.n_layer, dim = output.value("dim", 0);
    nlohmann::json readings = nlohmann::json::array();
    for (int t = model.bos_id >= 0 ? 1 : 0; t < int(sequence.size()); ++t)
      readings.push_back(result.residual_at(0, stage, t)[dim]);
    line["readings"] = readings;
  }
  if (options.logits) {
    nlohmann::json rows = nlohmann::json::array();
    for (int t = 0; t < int(sequence.size()); ++t)
      rows.push_back(std::vector<float>(result.logits_at(0, t), result.logits_at(0, t) + result.vocab));
    line["logits"] = rows;
  }
  std::cout << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Run a model file on an input (or a file of inputs) and print its output at every position");
  auto options = std::make_shared<RunOptions>();
  cmd->add_option("model", options->model_path, "The model file (.safetensors)")->required();
  auto* input = cmd->add_option("--input", options->input, "The input: hello (one token a character) or [3,1,2,4]");
  auto* inputs = cmd->add_option("--inputs", options->inputs_path,
                                 "A file of inputs, one a line (- for standard input): one result a line, in one process");
  input->excludes(inputs);
  cmd->add_option("--device", options->device, "cpu or cuda")->capture_default_str();
  cmd->add_flag("--margins", options->margins, "Also print each position's logit margin (best minus runner-up)");
  cmd->add_flag("--json", options->json, "One JSON object a result: input, outputs, margins (see the README)");
  cmd->add_flag("--logits", options->logits, "With --json: also every position's logits, BOS included");
  cmd->add_flag("--trace", options->trace,
                "First print the residual stream decoded: the value of every s-op at every position after the "
                "embedding and after every half-block, checked against the interpreter (\"!=\" marks a difference)");
  cmd->callback([options] {
    if (options->input.empty() && options->inputs_path.empty())
      fail_file("run", "give --input TEXT, or --inputs FILE with one input a line");
    if (options->logits && !options->json) fail_file("--logits", "needs --json: the logits are printed as JSON");
    if (options->trace && (options->json || !options->inputs_path.empty()))
      fail_file("--trace", "prints tables for one --input; it does not combine with --json or --inputs");
    Device device = device_option(options->device);
    Model model = load_model(options->model_path);
    std::unique_ptr<Backend> backend = make_backend(model, device);
    if (!options->inputs_path.empty()) {
      InputLines in = read_input_lines(options->inputs_path);
      // Every line is checked before any is run, so a bad line never leaves half the results printed.
      std::vector<std::vector<int>> all;
      for (const auto& [first, last] : in.lines) all.push_back(parse_model_input(model, in.file, first, last));
      for (size_t i = 0; i < all.size(); ++i) {
        const auto& [first, last] = in.lines[i];
        print_result(*options, model, in.file->text.substr(first, last - first), all[i], *backend);
      }
      return;
    }
    print_result(*options, model, options->input, parse_model_input(model, options->input), *backend);
  });
}

}  // namespace raspc
