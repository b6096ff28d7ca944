// raspc compile FILE: a RASP program into verified GPT-2 weights.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <iostream>
#include <sstream>

#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/program_file.hpp"
#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "raspc/compile_header.hpp"
#include "raspc/verify_progress.hpp"
#include "runtime/export/export.hpp"
#include "runtime/model_report.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "support/number_text.hpp"

namespace raspc {

std::string describe_shape(const CompileReport& r) {
  const nlohmann::json report = report_json(r);
  std::string out = "model: " + describe_config(report["config"]) + "\n";
  out += "parameters: " + with_commas(report["parameters"].get<double>()) + "; FLOPs per token: " +
         with_commas(report["flops_per_token"].get<double>()) + " (at " + std::to_string(r.config.n_positions) +
         " positions)\n";
  if (r.estimated_verify_inputs > 0) {
    // The budget's estimate (compiler/budget.cpp), before the verification starts: two figures at
    // most (an estimate has no more), never an exponent ("4.2e+02 s"), minutes past two of them.
    const double t = r.estimated_verify_seconds;
    char when[48];
    if (t < 0.1) std::snprintf(when, sizeof when, "under 0.1 s");
    else if (t < 10) std::snprintf(when, sizeof when, "about %.2g s", t);
    else if (t < 120) std::snprintf(when, sizeof when, "about %.0f s", t);
    else std::snprintf(when, sizeof when, "about %.0f min", t / 60);
    out += "verification to come: " + with_commas(r.estimated_verify_inputs) + " inputs, " + when +
           " estimated on " + std::to_string(r.verify_threads) + (r.verify_threads == 1 ? " thread\n" : " threads\n");
  }
  return out;
}

std::string describe_report(const CompileReport& r) { return describe_shape(r) + describe_verification(report_json(r)); }

void add_compile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "Compile a RASP program into verified GPT-2 weights");
  struct Args {
    std::string file, vocab, output_name, out_path, activation = "gelu", dump_after, device = "cpu", export_format,
        export_path;
    int max_len = 16, verify_len = 0, threads = 0;
    long samples = 10000;
    double max_parameters = 200e6;
    bool causal = false, no_layernorm = false, no_verify = false, force = false, explain = false, json = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("file", args->file, "The .rasp program (- for standard input)")->required();
  auto* vocab_option = cmd->add_option("--vocab", args->vocab, "Input symbols: ehlo, \"a b c\" or [1,2,3] (default: the # vocab: line)");
  cmd->add_option("--max-len", args->max_len, "Longest input (BOS not counted)")->capture_default_str();
  cmd->add_flag("--causal", args->causal, "A selector sees only keys at or before the query (GPT-2 semantics)");
  cmd->add_option("--output", args->output_name, "The s-op to output (default: the last expression)");
  auto* out_option = cmd->add_option("-o", args->out_path, "Write the model here (safetensors; default: nothing is written)");
  cmd->add_flag("--no-layernorm", args->no_layernorm, "Emit a model without LayerNorm (Tracr-style)");
  cmd->add_option("--activation", args->activation, "gelu or relu")->capture_default_str();
  cmd->add_option("--verify-len", args->verify_len, "Verify inputs up to this length (0: --max-len)")->capture_default_str();
  cmd->add_option("--samples", args->samples,
                  "Inputs checked at each length beyond the exhaustive ones (those with at most 10^5 inputs up "
                  "to them): each symbol repeated, then random ones; 0 checks the exhaustive lengths only")
      ->capture_default_str();
  cmd->add_option("--max-parameters", args->max_parameters,
                  "Refuse, before building it, a model estimated to have more parameters (0: no limit)")
      ->capture_default_str();
  cmd->add_flag("--no-verify", args->no_verify, "Skip the verification");
  cmd->add_flag("--force", args->force, "Write the model even if verification finds mismatches");
  std::string passes;
  for (const std::string& pass : compiler_pass_names()) passes += " " + pass;
  auto* dump_option = cmd->add_option("--dump-after", args->dump_after, "Print a pass's result, one of:" + passes);
  auto* explain_option = cmd->add_flag("--explain", args->explain, "Say why each s-op got its encoding and its block");
  cmd->add_option("--device", args->device, "Verify on cpu or cuda")->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads the CPU verification runs on (0: every core); the report is the same for every count")
      ->capture_default_str();
  cmd->add_option("--export", args->export_format, "Also export the model: hf, tlens, gguf or llmc (see raspc export)");
  cmd->add_option("--export-to", args->export_path,
                  "Where --export writes (default: -o's path with .hf, .tlens, .gguf or .llmc for its extension)");
  cmd->add_flag("--json", args->json, "Print the report as one JSON object (docs/json.md) instead of text")
      ->excludes(dump_option)
      ->excludes(explain_option);
  cmd->callback([args, out_option, vocab_option] {
    // Before the verification, which can take minutes: a bad -o is refused at once.
    if (out_option->count() > 0) check_writable_output(args->out_path, "-o", {args->file});
    auto source = read_source_file(args->file);
    const ProgramHeader header = read_program_header(source);
    CompileOptions options;
    // A --vocab given empty is an error, not the header's vocabulary.
    options.vocab = vocab_option->count() > 0 ? parse_vocabulary(args->vocab, "--vocab") : header_vocabulary(header);
    if (options.vocab.empty())
      fail_file(args->file, "no vocabulary: give --vocab, or a `# vocab: ...` line at the top of the program");
    check_compile_limits(args->max_len, args->verify_len, args->samples, {"--max-len", "--verify-len", "--samples"});
    if (const std::string warning = causal_header_warning(header.causal, args->causal ? Mode::Causal : Mode::Bidirectional);
        !warning.empty())
      std::cerr << args->file << ": warning: " << warning << " (--causal)\n";
    if (!(args->max_parameters >= 0) || args->max_parameters > 1e15)
      fail_file("--max-parameters", "must be from 0 to 1e15, not " + std::to_string(args->max_parameters));
    options.max_parameters = size_t(args->max_parameters);
    options.max_len = args->max_len;
    options.mode = args->causal ? Mode::Causal : Mode::Bidirectional;
    options.layer_norm = !args->no_layernorm;
    if (args->activation == "gelu") options.activation = Activation::Gelu;
    else if (args->activation == "relu") options.activation = Activation::Relu;
    else fail_file("--activation", "must be gelu or relu, not \"" + args->activation + "\"");
    options.verify = !args->no_verify;
    options.verify_len = args->verify_len;
    options.samples = args->samples;
    options.device = device_option(args->device);
    if (args->threads < 0 || args->threads > kMaxThreads)
      fail_file("--threads", "must be from 0 (every core) to " + std::to_string(kMaxThreads) + ", not " +
                                 std::to_string(args->threads));
    options.threads = args->threads;
    options.source_text = source->text;
    options.explain = args->explain;
    std::optional<ExportFormat> export_format;
    std::string export_path = args->export_path;
    if (!args->export_format.empty()) {
      export_format = parse_export_format(args->export_format, "--export");
      if (export_path.empty()) {
        if (args->out_path.empty()) fail_file("--export", "needs -o or --export-to to know where to write");
        std::filesystem::path p(args->out_path);
        export_path = p.replace_extension(export_format_name(*export_format)).string();
      }
      const std::string flag = args->export_path.empty() ? "--export" : "--export-to";
      if (export_path == args->out_path) fail_file(flag, "would write to -o's path; give the export a path of its own");
      check_export_path(*export_format, export_path, flag, {args->file});
    } else if (!export_path.empty()) {
      fail_file("--export-to", "needs --export FORMAT");
    }
    // Printed at once too: why each s-op got its encoding and block is what explains a refusal.
    options.on_explanation = [](const std::string& text) { std::cout << text << std::flush; };
    if (!args->dump_after.empty()) {
      check_pass_name(args->dump_after, "--dump-after");
      options.dump_after = args->dump_after;
      // Printed at once: when a later pass refuses the program, the dump comes before the error.
      options.on_dump = [](const std::string& dump) { std::cout << dump << std::flush; };
    }
    // The shape is known long before the verification ends (51-79 s for most_freq at length 16):
    // it is printed at once, and the verification shows its progress on standard error.
    if (!args->json) options.on_assembled = [](const CompileReport& r) { std::cout << describe_shape(r) << std::flush; };
    VerifyProgress progress("verifying", verification_threads(options));
    options.on_verify_progress = [&progress](long done, long total, double work) { progress.update(done, total, work); };
    EvaluateOptions evaluate_options;
    evaluate_options.output_name = args->output_name;
    Program program = evaluate_program(source, evaluate_options);
    // A refusal about a node with no place in the source (`tokens` itself) names the program.
    CompileResult result = naming_errors(args->file, [&] { return compile_program(program, options); });
    const CompileReport& report = result.report;
    nlohmann::json json = report_json(report);
    json["program"] = args->file;
    json["written"] = nlohmann::json::array();
    const bool write = report.mismatches == 0 || args->force;
    if (write && out_option->count() > 0) json["written"].push_back(args->out_path);
    if (write && export_format) json["written"].push_back(export_path);
    if (args->json) std::cout << json.dump(2) << "\n" << std::flush;
    else std::cout << describe_verification(json) << std::flush;
    if (const std::string warning = mostly_undefined_warning(report); !warning.empty()) {
      std::cout.flush();
      std::cerr << args->file << ": warning: " << warning << "\n";
    }
    if (!write)
      throw VerificationMismatch(format_file_error(
          args->file, "verification found " + std::to_string(report.mismatches) +
                          " mismatching inputs, so no model was written (--force writes it anyway)"));
    if (export_format) {
      if (auto reason = export_refusal(result.model, *export_format))
        fail_file("--export", std::string("cannot export as ") + export_format_name(*export_format) + ": " + *reason +
                                  "; nothing was written");
    }
    if (out_option->count() > 0) {
      save_model(result.model, args->out_path);
      if (!args->json) std::cout << "wrote " << args->out_path << "\n";
    } else if (!args->json) {
      std::cout << "nothing written (no -o given)\n";
    }
    if (export_format) {
      export_model(result.model, *export_format, export_path, {args->file},
                   args->export_path.empty() ? "--export" : "--export-to");
      if (!args->json) std::cout << "wrote " << export_path << " (" << export_format_name(*export_format) << ")\n";
    }
  });
}

}  // namespace raspc
