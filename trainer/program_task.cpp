#include "trainer/program_task.hpp"

#include <set>


#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

Labeller LoadedProgram::labeller(Mode mode) const {
  auto interpreter = std::make_shared<Interpreter>(*program, mode);
  auto keep_alive = program;
  return [interpreter, keep_alive](const std::vector<Value>& input) { return interpreter->run(input); };
}

namespace {

LoadedProgram loaded_from(std::shared_ptr<const SourceFile> source, const std::string& output_name) {
  LoadedProgram loaded;
  loaded.source = std::move(source);
  EvaluateOptions options;
  options.output_name = output_name;
  loaded.program = std::make_shared<Program>(evaluate_program(loaded.source, options));
  loaded.header = read_program_header(loaded.source);
  return loaded;
}

}  // namespace

LoadedProgram load_program(const std::string& path, const std::string& output_name) {
  return loaded_from(read_source_file(path), output_name);
}

LoadedProgram program_from_text(const std::string& name, const std::string& text) {
  auto file = std::make_shared<SourceFile>();
  file->name = name;
  file->text = text;
  return loaded_from(file, "");
}

void fail_option(const std::string& option, const std::string& text, const std::string& message) {
  auto file = std::make_shared<SourceFile>();
  file->name = option;
  file->text = text;
  Span span;
  span.file = file;
  span.begin = 0;
  span.end = uint32_t(std::max<size_t>(text.size(), 1));
  fail_at(span, message);
}

void parse_length_range(const std::string& option, const std::string& text, int max_len, int& min, int& max) {
  const std::string usage = "write the lengths as A-B with 1 <= A <= B <= --max-len (" + std::to_string(max_len) + "), as in 1-8";
  size_t dash = text.find('-');
  try {
    size_t used = 0;
    min = std::stoi(text.substr(0, dash), &used);
    if (used != (dash == std::string::npos ? text.size() : dash)) fail_option(option, text, usage);
    if (dash == std::string::npos) {
      max = min;
    } else {
      std::string rest = text.substr(dash + 1);
      max = std::stoi(rest, &used);
      if (used != rest.size()) fail_option(option, text, usage);
    }
  } catch (const std::logic_error&) {
    fail_option(option, text, usage);
  }
  if (min < 1 || min > max || max > max_len) fail_option(option, text, usage);
}

std::vector<Value> task_vocabulary(const std::string& vocab_option, const LoadedProgram& program) {
  std::vector<Value> vocab;
  if (!vocab_option.empty()) {
    vocab = parse_vocabulary(vocab_option, "--vocab");
  } else if (!program.header.vocab_text.empty()) {
    vocab = header_vocabulary(program.header);
  } else {
    fail_file(program.source->name, "the program declares no vocabulary; give the input symbols with --vocab, as in --vocab abcd");
  }
  if (const std::string problem = input_symbols_problem(vocab); !problem.empty())
    fail_option("--vocab", vocab_option, problem);
  return vocab;
}

std::string input_symbols_problem(const std::vector<Value>& vocab) {
  if (vocab.empty()) return "the vocabulary is empty; give at least one input symbol";
  std::set<std::string> seen;
  for (const Value& v : vocab) {
    const std::string shown = to_display(v);
    if (shown == "BOS") return "\"BOS\" is the trainer's start token and cannot be an input symbol; rename it";
    if (!seen.insert(shown).second) return "the symbol " + shown + " appears twice; give each input symbol once";
  }
  return "";
}

}  // namespace raspc
