// raspc demo aab: the (aab)* story end to end, as a story told in order. The hand-set model of the
// post "I made a transformer by hand" (runtime/handset_aab.hpp): its shape, its head's weights, its
// completions and the post's 27/27 score; programs/aab.rasp; the model raspc compiles from it, where
// each line of the program is in it (its placement metadata) and its MLP; both side by side, why
// their first completions differ and why one is larger; and the `raspc view` command to try next.
#include <cstdio>
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
#include "runtime/model_report.hpp"
#include "runtime/residual_trace.hpp"
#include "runtime/safetensors.hpp"
#include "view/html_view.hpp"
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

// The prompt and 9 tokens greedily after it.
std::string completion(Backend& backend, const Model& model, const std::string& prompt) {
  std::vector<int> ids;
  for (char c : prompt) ids.push_back(model.token_id(std::string(1, c)));
  std::string text = prompt;
  for (int t : generate_greedy(backend, model, ids, 9)) text += model.vocab[size_t(t)];
  return text;
}

std::string completions(Backend& backend, const Model& model) {
  std::ostringstream out;
  for (const std::string prompt : {"a", "aa", "aab", "aaba", "b"})
    out << "  " << prompt << " -> " << completion(backend, model, prompt) << "\n";
  return out.str();
}

// The model's shape as every command describes a config, with its parameters and FLOPs per token.
std::string shape(const Model& model) {
  const ModelConfig& c = model.config;
  return describe_config(config_to_json(c)) + "; " + with_commas(double(parameter_count(c))) + " parameters, " +
         with_commas(flops_per_token(c, c.n_positions)) + " FLOPs per token at " + std::to_string(c.n_positions) +
         " positions";
}

// Where each line of the program is in the compiled model (its placement metadata): the s-ops each
// half-block completes, a head's construction in words, and the residual's dimensions by purpose.
std::string where_the_program_is(const Model& model) {
  const ModelPlacement placement = read_placement(model);
  std::ostringstream out;
  for (int stage = 1; stage <= 2 * model.config.n_layer; ++stage)
    for (const SopPlacement& sop : placement.sops) {
      if (sop.stage != stage || sop.kind == "scratch") continue;
      out << "  " << stage_description(stage) << ": " << sop.shown << " (" << sop.source.at << ")\n";
      if (stage % 2 == 1)
        for (const HeadPlacement& head : placement.heads[size_t((stage - 1) / 2)])
          if (head.sop == sop.name) out << "      " << construction_sentence(head.construction) << "\n";
      if (stage % 2 == 0)
        out << "      A lookup table in " << model.config.n_inner << " units, read from "
            << [&] {
                 std::string reads;
                 for (const std::string& r : sop.reads) reads += (reads.empty() ? "" : " and ") + r;
                 return reads;
               }()
            << ". docs/compiler.md, \"MLPs\".\n";
    }
  const std::vector<bool> bookkeeping = bookkeeping_dimensions(placement, model.config.n_embd);
  std::string values, kept;
  for (size_t d = 0; d < model.residual_labels.size(); ++d)
    if (!model.residual_labels[d].empty())
      (bookkeeping[d] ? kept : values) += " " + model.residual_labels[d];
  out << "  The residual stream, " << model.config.n_embd << " dimensions:\n"
      << "    the program's values:" << values << "\n"
      << "    bookkeeping:" << kept << "\n"
      << "      (a real GPT-2 needs them: `one` carries biases, `bos` the fallback of a head that selects\n"
      << "      nothing, `zero` and `pad` steady LayerNorm, and indices.x ... are the position as a number,\n"
      << "      balanced so that LayerNorm sees the same mean and variance at every position, which the\n"
      << "      head compares to find the previous position)\n";
  return out.str();
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
    std::cout << "raspc demo aab: one task, two transformers.\n\n"
                 "The task: continue (aab)*. After \"aa\" comes \"b\", after anything else \"a\".\n\n";

    const Model handset = make_handset_aab();
    std::unique_ptr<Backend> handset_backend = make_backend(handset);
    const AabScore handset_score = score_aab(*handset_backend, handset);
    std::cout << "1. A transformer set by hand\n\n"
                 "  From the post \"I made a transformer by hand (no training!)\" (vgel.me): a person chose\n"
                 "  every weight. "
              << shape(handset) << ".\n"
              << "  Its residual stream: pos:0 to pos:4 (the position, one-hot), tokens:a, tokens:b, scratch.\n"
                 "  Its one head looks back from each position to the two before it (the query weights: each\n"
                 "  position's row is high on the keys one and two back), averages +1 for each a and -1 for\n"
                 "  each b it sees there (the value weights), and writes that, times 1024, against a and for b\n"
                 "  (the output weights): after two a's the unembedding reads b.\n\n"
              << format_tensor(handset, "transformer.h.0.attn.c_attn.weight") << "\n"
              << format_tensor(handset, "transformer.h.0.attn.c_proj.weight") << "\n"
              << "  Completions (greedy, 9 tokens):\n"
              << completions(*handset_backend, handset) << "  Score on \"aab\" x 10, each token from index 2 to 28 "
              << "predicted from those before it: " << handset_score.correct << "/" << handset_score.total << "\n\n";

    const std::string path = aab_program_path();
    auto source = read_source_file(path);
    std::cout << "2. The same task as a RASP program (" << path << ")\n\n";
    std::istringstream lines(source->text);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty() && line[0] != '#') std::cout << "  " << line << "\n";
    std::cout << "\n";

    CompileOptions options;
    options.vocab = header_vocabulary(read_program_header(source));
    options.max_len = handset.config.n_positions - 1;  // the same 5 positions, BOS included
    options.mode = Mode::Causal;
    options.source_text = source->text;
    const CompileResult compiled = compile_program(evaluate_program(source), options);
    const Model& model = compiled.model;
    std::unique_ptr<Backend> backend = make_backend(model);
    const AabScore score = score_aab(*backend, model);
    std::cout << "3. Compiled by raspc into a GPT-2, then verified\n\n"
              << "  raspc compile " << path << " --causal --max-len " << options.max_len << "\n";
    std::istringstream report(describe_report(compiled.report));
    for (std::string line; std::getline(report, line);)
      if (line.rfind("verification:", 0) == 0) std::cout << "  " << line << "\n";
    std::cout << "  " << shape(model) << ".\n\n  Where each line of the program is:\n"
              << where_the_program_is(model) << "\n"
              << format_tensor(model, "transformer.h.0.mlp.c_fc.weight") << "\n"
              << "  Completions (greedy, 9 tokens):\n"
              << completions(*backend, model) << "  Score on \"aab\" x 10: " << score.correct << "/" << score.total
              << "\n\n";

    char table[512];
    std::snprintf(table, sizeof table,
                  "4. Side by side\n\n"
                  "                           hand-set    compiled\n"
                  "  parameters               %8s    %8s\n"
                  "  FLOPs per token          %8s    %8s\n"
                  "  (aab)* x 10                 %2d/%d       %2d/%d\n"
                  "  completion of \"a\"      %s  %s\n\n",
                  with_commas(double(parameter_count(handset.config))).c_str(),
                  with_commas(double(parameter_count(model.config))).c_str(),
                  with_commas(flops_per_token(handset.config, handset.config.n_positions)).c_str(),
                  with_commas(flops_per_token(model.config, model.config.n_positions)).c_str(), handset_score.correct,
                  handset_score.total, score.correct, score.total, completion(*handset_backend, handset, "a").c_str(),
                  completion(*backend, model, "a").c_str());
    std::cout << table
              << "  The first completions differ at one token: after a single \"a\" the hand-set model says \"b\"\n"
                 "  (its head weighs the tokens it sees, and at the first position it sees only that \"a\"), the\n"
                 "  program says \"a\": (aab)* goes on from \"a\" with \"a\". The post scores from index 2, where\n"
                 "  the two agree on every token. The compiled model is larger because it is an ordinary GPT-2\n"
                 "  that any GPT-2 runtime runs: LayerNorm and GELU (the hand-set model has neither), a BOS token,\n"
                 "  the position as a number for its head to compare, and an MLP for the lookup the hand-set model\n"
                 "  folds into its unembedding.\n\n"
                 "Next, see inside the compiled model on an input of your choice (one page: the residual stream\n"
                 "decoded at every stage, every head's attention, every weight):\n\n"
                 "  raspc view "
              << path << " --causal --input aabaab -o aab.html\n";
  });
}

}  // namespace raspc
