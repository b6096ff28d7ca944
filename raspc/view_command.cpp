// raspc view MODEL|PROGRAM.rasp --input X -o view.html: one self-contained HTML page of what the
// model computes on the input (view/html_view.hpp says what is on it).
#include <iostream>

#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/program_file.hpp"
#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "raspc/compile_header.hpp"
#include "raspc/verify_progress.hpp"
#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "view/html_view.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

struct ViewOptions {
  std::string file, input, out_path, vocab;
  int max_len = 0;
  bool causal = false;
};

bool is_program_file(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".rasp") == 0;
}

// A program is compiled (and verified) first, for the input's length unless --max-len says more.
Model compile_for_view(const ViewOptions& options, bool have_vocab) {
  auto source = read_source_file(options.file);
  const auto header = read_program_header(source);
  CompileOptions compile;
  compile.vocab = have_vocab ? parse_vocabulary(options.vocab, "--vocab") : header_vocabulary(header);
  if (compile.vocab.empty())
    fail_file(options.file, "no vocabulary: give --vocab, or a `# vocab: ...` line at the top of the program");
  const int input_length = int(parse_input(options.input, "--input", &compile.vocab).size());
  if (options.max_len == 0 && input_length > kMaxCompileLength)
    fail_file("--input", "has " + std::to_string(input_length) + " tokens, more than the " +
                             std::to_string(kMaxCompileLength) +
                             " a program is compiled for; view a shorter input, or a compiled model");
  if (options.max_len != 0 && (options.max_len < input_length || options.max_len > kMaxCompileLength))
    fail_file("--max-len", "must be from the input's length " + std::to_string(input_length) + " to " +
                               std::to_string(kMaxCompileLength) + ", not " + std::to_string(options.max_len));
  compile.max_len = options.max_len != 0 ? options.max_len : input_length;
  compile.mode = options.causal || header.causal.value_or(false) ? Mode::Causal : Mode::Bidirectional;
  compile.source_text = source->text;
  Program program = evaluate_program(source);
  // The page waits on a verification that can take minutes at a long input: say what is coming
  // (where it is more than a moment) and show its progress, as compile does, on standard error.
  compile.on_assembled = [&](const CompileReport& r) {
    if (r.estimated_verify_seconds >= 1)
      std::cerr << "compiling " << options.file << " for inputs up to length " << compile.max_len << "\n"
                << describe_shape(r) << std::flush;
  };
  VerifyProgress progress;
  compile.on_verify_progress = [&progress](long done, long total, double work) { progress.update(done, total, work); };
  CompileResult result = naming_errors(options.file, [&] { return compile_program(program, compile); });
  if (result.report.mismatches > 0)
    fail_file(options.file, "verification found " + std::to_string(result.report.mismatches) +
                                " mismatching inputs; `raspc compile --force` writes such a model, and view can open it");
  return std::move(result.model);
}

}  // namespace

void add_view_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("view", "Write an HTML page of what a model (or a program, compiled first) computes on an input");
  auto options = std::make_shared<ViewOptions>();
  cmd->add_option("file", options->file, "The model file (.safetensors) or a RASP program (.rasp)")->required();
  cmd->add_option("--input", options->input, "The input: hello (one token a character) or [3,1,2,4]")->required();
  cmd->add_option("-o", options->out_path, "Write the page here (.html)")->required();
  auto* vocab = cmd->add_option("--vocab", options->vocab, "For a program: its input symbols (default: its # vocab: line)");
  auto* max_len = cmd->add_option("--max-len", options->max_len, "For a program: the longest input (default: the input's length)");
  auto* causal = cmd->add_flag("--causal", options->causal, "For a program: compile it causal (GPT-2 semantics; default: the program's # causal: line)");
  cmd->callback([options, vocab, max_len, causal] {
    check_output_path(options->out_path, "-o", {options->file});
    const bool program = is_program_file(options->file);
    if (!program)
      for (auto* option : {vocab, max_len, causal})
        if (option->count() > 0) fail_file(option->get_name(), "applies to a .rasp program, not to a model file");
    Model model = program ? compile_for_view(*options, vocab->count() > 0) : load_model(options->file);
    const std::vector<int> sequence = with_bos(model, parse_model_input(model, options->input));
    std::unique_ptr<Backend> backend = make_backend(model, Device::Cpu);
    bool differs = false;
    const std::string page =
        naming_errors(options->file, [&] { return view_page(model, *backend, sequence, options->file, &differs); });
    write_file_atomically(options->out_path, page);
    std::cout << "wrote " << options->out_path << (differs ? " (some s-ops differ from the interpreter: shown in red)" : "") << "\n";
  });
}

}  // namespace raspc
