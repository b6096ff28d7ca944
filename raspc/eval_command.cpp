// raspc eval: runs a RASP program through the reference interpreter.
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "language/analyse.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"
#include "language/program_file.hpp"
#include "raspc/commands.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

struct EvalOptions {
  std::string file;
  std::string expression;
  std::string input;
  std::string vocab;
  std::string output;
  bool causal = false;
  bool trace = false;
  bool analyse = false;
  bool json = false;
};

std::vector<std::string> displayed(const std::vector<Value>& values) {
  std::vector<std::string> texts;
  for (const Value& v : values) texts.push_back(to_display(v));
  return texts;
}

std::string format_sequence(const std::vector<Value>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += to_display(values[i]);
  }
  return text + "]";
}

void run_eval(const EvalOptions& options, bool have_input, bool have_vocab) {
  if (options.file.empty() == options.expression.empty())
    fail_file("raspc eval", "give either a program FILE or -e EXPRESSION (exactly one of them)");
  std::shared_ptr<const SourceFile> source;
  if (!options.file.empty()) {
    source = read_source_file(options.file);
  } else {
    // A one-line program may omit its final `;`.
    auto file = std::make_shared<SourceFile>();
    file->name = "-e";
    file->text = options.expression;
    size_t last = file->text.find_last_not_of(" \t\r\n");
    if (last != std::string::npos && file->text[last] != ';' && file->text[last] != '}') file->text += ";";
    source = file;
  }
  if (!have_input && !options.analyse)
    fail_file("raspc eval", "give an input sequence with --input (as in --input hello or --input \"[3,1,2]\")");

  std::optional<std::vector<Value>> vocabulary;
  bool from_header = false;
  if (have_vocab) {
    vocabulary = parse_vocabulary(options.vocab);  // given empty: an error, not no vocabulary
  } else {
    // The file's `# vocab:` line, as compile reads it: the input is checked against it.
    std::vector<Value> declared = header_vocabulary(read_program_header(source));
    if (!declared.empty()) vocabulary = std::move(declared), from_header = true;
  }
  // The input is checked before the program runs, so a bad input is reported as such.
  std::vector<Value> input;
  try {
    if (have_input) input = parse_input(options.input, "--input", vocabulary ? &*vocabulary : nullptr);
  } catch (const UserError& e) {
    if (!from_header) throw;
    throw UserError(e.what() + std::string("note: the vocabulary is the `# vocab:` line of ") + source->name +
                    "; --vocab gives another\n");
  }

  EvaluateOptions evaluate_options;
  evaluate_options.output_name = options.output;
  Program program = evaluate_program(source, evaluate_options);

  nlohmann::json json = nlohmann::json::object();
  if (options.analyse) {
    Analysis analysis = analyse(program);
    if (options.json) {
      json["analysis"] = {{"layers", analysis.layers}, {"heads_per_layer", analysis.heads_per_layer},
                          {"max_heads", analysis.max_heads()}};
    } else {
      std::cout << "layers: " << analysis.layers << ", heads per layer:";
      for (int heads : analysis.heads_per_layer) std::cout << " " << heads;
      if (analysis.heads_per_layer.empty()) std::cout << " none";
      std::cout << ", max heads: " << analysis.max_heads() << "\n";
    }
  }
  if (have_input) {
    Interpreter interpreter(program, options.causal ? Mode::Causal : Mode::Bidirectional);
    Trace trace;
    std::vector<Value> output =
        naming_errors(source->name, [&] { return interpreter.run(input, options.trace ? &trace : nullptr); });
    if (options.trace) {
      nlohmann::json traced = nlohmann::json::object();
      for (const auto& [name, id] : program.named) {
        if (program.node(id).is_selector()) continue;
        const auto& values = trace.sop[size_t(id)];
        if (options.json) traced[name] = values.empty() ? nlohmann::json(nullptr) : nlohmann::json(displayed(values));
        else if (values.empty()) std::cout << name << ": (undefined on this input)\n";
        else std::cout << name << ": " << format_sequence(values) << "\n";
      }
      if (options.json) json["trace"] = traced;
    }
    if (options.json) {
      json["input"] = displayed(input);
      json["output"] = displayed(output);
    } else {
      std::cout << format_sequence(output) << "\n";
    }
  }
  if (options.json) std::cout << json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  auto* cmd = app.add_subcommand("eval", "Run a RASP program on an input with the reference interpreter");
  cmd->add_option("file", options->file, "The RASP program (.rasp file; - for standard input)");
  cmd->add_option("-e,--expression", options->expression,
                  "A program given on the command line instead of FILE, as in -e 'sort(tokens, tokens)'");
  auto* input = cmd->add_option("--input", options->input,
                                "The input sequence: hello (one token per character) or \"[3,1,2,4]\" (integers)");
  cmd->add_flag("--causal", options->causal,
                "Causal (GPT-2, RASP-L) semantics: a selector sees only keys at or before the query");
  auto* vocab = cmd->add_option("--vocab", options->vocab,
                  "The allowed input symbols (ehlo, \"a b c\", \"1 2 3\" or \"[1,2,3]\"; default: the file's # vocab: line); "
                  "other input tokens are refused");
  cmd->add_option("--output", options->output, "Output the top-level s-op of this name instead of the last expression");
  cmd->add_flag("--trace", options->trace, "Also print every named s-op on the input, one line each");
  cmd->add_flag("--analyse", options->analyse,
                "Print RASP's layer and head count of the program (an elementwise operation is free)");
  cmd->add_flag("--json", options->json,
                "Print one JSON object: input, output (and trace, analysis); values as the text output shows them");
  cmd->callback([options, input, vocab] { run_eval(*options, input->count() > 0, vocab->count() > 0); });
}

}  // namespace raspc
