// raspc demo aab: the (aab)* story end to end. The hand-set model of the post "I made a
// transformer by hand" (runtime/handset_aab.hpp) beside programs/aab.rasp compiled in causal
// mode: config, parameters, FLOPs per token, labelled weights, completions and the 27/27 score.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/program_file.hpp"
#include "raspc/commands.hpp"
#include "raspc/compile_header.hpp"
#include "runtime/flops.hpp"
#include "runtime/handset_aab.hpp"
#include "runtime/inspect.hpp"
#include "support/diagnostics.hpp"
#include "support/number_text.hpp"

namespace raspc {
namespace {

const char* const kText = "aabaabaabaabaabaabaabaabaabaab";  // "aab" * 10

// The post's test on any model with tokens "a" and "b": predict each token at index 2..28 from
// the tokens before it, as many as fit beside BOS (when the model has one).
AabScore score_aab(Backend& backend, const Model& model) {
  const std::string text = kText;
  const int a = model.token_id("a"), b = model.token_id("b");
  const int capacity = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
  AabScore score;
  for (int i = 2; i < int(text.size()) - 1; ++i) {
    std::vector<int> context;
    if (model.bos_id >= 0) context.push_back(model.bos_id);
    for (int j = std::max(0, i - capacity); j < i; ++j) context.push_back(text[size_t(j)] == 'a' ? a : b);
    ForwardResult result = backend.forward({context});
    const float* logits = result.logits_at(0, int(context.size()) - 1);
    int predicted = logits[b] > logits[a] ? b : a;
    score.correct += predicted == (text[size_t(i)] == 'a' ? a : b);
    ++score.total;
  }
  return score;
}

std::string completions(Backend& backend, const Model& model) {
  std::ostringstream out;
  for (const std::string prompt : {"a", "aa", "aab", "aaba", "b"}) {
    std::vector<int> ids;
    for (char c : prompt) ids.push_back(model.token_id(std::string(1, c)));
    std::vector<int> generated = generate_greedy(backend, model, ids, 9);
    out << "  " << prompt << " -> " << prompt;
    for (int t : generated) out << model.vocab[size_t(t)];
    out << "\n";
  }
  return out.str();
}

void show(const std::string& title, const Model& model, const std::vector<std::string>& tensors) {
  std::cout << "=== " << title << " ===\n" << describe_model(model) << "\n";
  for (const std::string& name : tensors) std::cout << format_tensor(model, name) << "\n";
  std::unique_ptr<Backend> backend = make_backend(model);
  std::cout << "completions (greedy, 9 tokens):\n" << completions(*backend, model);
  AabScore score = score_aab(*backend, model);
  std::cout << "score on \"aab\" * 10 (indices 2..28): " << score.correct << "/" << score.total << "\n\n";
}

// programs/aab.rasp: under the working directory, else beside this source file's checkout.
std::string aab_program_path() {
  std::string local = "programs/aab.rasp";
  if (std::filesystem::exists(local)) return local;
  std::filesystem::path here(__FILE__);
  return (here.parent_path().parent_path() / "programs" / "aab.rasp").string();
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "The (aab)* story: the hand-set model beside the compiled one");
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "The demo to run: aab")->required();
  cmd->callback([name] {
    if (*name != "aab") fail_file("raspc demo", "unknown demo \"" + *name + "\"; the demo is: aab");
    Model handset = make_handset_aab();
    show("the hand-set (aab)* model (vgel.me)", handset,
         {"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.attn.c_attn.weight",
          "transformer.h.0.attn.c_proj.weight"});

    std::string path = aab_program_path();
    auto source = read_source_file(path);
    CompileOptions options;
    options.vocab = header_vocabulary(read_program_header(source));
    options.max_len = handset.config.n_positions - 1;  // the same 5 positions, BOS included
    options.mode = Mode::Causal;
    options.source_text = source->text;
    CompileResult compiled = compile_program(evaluate_program(source), options);
    std::cout << "compiled " << path << " (--causal --max-len " << options.max_len << ")\n"
              << describe_report(compiled.report);
    show("programs/aab.rasp compiled", compiled.model,
         {"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.attn.c_attn.weight",
          "transformer.h.0.mlp.c_fc.weight", "transformer.h.0.mlp.c_proj.weight"});
    std::cout << "FLOPs per token at 5 positions: hand-set "
              << with_commas(flops_per_token(handset.config, handset.config.n_positions)) << ", compiled "
              << with_commas(flops_per_token(compiled.model.config, compiled.model.config.n_positions)) << "\n";
  });
}

}  // namespace raspc
