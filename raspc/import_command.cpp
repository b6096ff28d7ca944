// raspc import hf DIR -o M.safetensors: a GPT-2 trained with Hugging Face (examples/train_hf.py on
// a `raspc dataset`) back into raspc's format, its vocabulary from the dataset card.
#include <filesystem>
#include <iostream>

#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "runtime/hf_import.hpp"
#include "runtime/safetensors.hpp"
#include "trainer/program_task.hpp"
#include "trainer/dataset.hpp"

namespace raspc {

namespace {

struct ImportOptions {
  std::string format, folder, model_path, dataset;
};

void run_import_hf(const ImportOptions& o) {
  namespace fs = std::filesystem;
  if (o.format != "hf") fail_option("FORMAT", o.format, "raspc imports hf (a Hugging Face GPT-2 folder); write `raspc import hf DIR -o M`");
  check_writable_output(o.model_path, "-o", {(fs::path(o.folder) / "model.safetensors").string()});
  std::error_code error;
  if (!fs::is_directory(o.folder, error))
    fail_file(o.folder, "is not a folder; give the folder save_pretrained (or Trainer.save_model) wrote");
  // The card: --dataset's, else the one examples/train_hf.py copies beside the weights.
  const DatasetCard card = read_dataset_card(o.dataset.empty() ? o.folder : o.dataset);
  HfVocabulary vocabulary;
  vocabulary.vocab = card.vocab;
  vocabulary.bos_id = card.bos_id;
  vocabulary.input_ids = card.input_ids;
  vocabulary.output = {{"encoding", "categorical"}, {"token_ids", card.output_ids}};
  vocabulary.causal = card.causal;
  Model model = import_hf_gpt2(o.folder, vocabulary);
  if (model.config.n_positions < card.max_len + 1)
    fail_file(o.folder, "the model has " + std::to_string(model.config.n_positions) +
                            " positions but the dataset's inputs need " + std::to_string(card.max_len + 1) +
                            " (BOS and up to " + std::to_string(card.max_len) + " symbols)");
  if (!card.program_text.empty()) model.metadata["program"] = card.program_text;
  const nlohmann::json& j = card.json;
  model.metadata["trainer"] = {{"source", "huggingface"},
                               {"folder", o.folder},
                               {"dataset", {{"program", card.program_name},
                                            {"mode", j.value("mode", "")},
                                            {"train_lengths", j.value("train_lengths", nlohmann::json())},
                                            {"seed", j.value("seed", nlohmann::json())},
                                            {"counts", j.value("counts", nlohmann::json())}}}};
  save_model(model, o.model_path);
  const ModelConfig& c = model.config;
  std::cout << "wrote " << o.model_path << ": " << c.n_layer << " layer" << (c.n_layer == 1 ? "" : "s") << ", "
            << c.n_head << " head" << (c.n_head == 1 ? "" : "s") << ", d_model " << c.n_embd << ", MLP " << c.n_inner
            << ", " << parameter_count(c) << " parameters, vocabulary " << c.vocab_size << ", "
            << (c.causal ? "causal" : "bidirectional") << "\n";
}

}  // namespace

void add_import_command(CLI::App& app) {
  auto options = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand("import", "Read a model trained elsewhere into raspc's format: `raspc import hf DIR -o M` "
                                           "(a Hugging Face GPT-2 trained on a `raspc dataset`)");
  cmd->add_option("FORMAT", options->format, "hf: a saved Hugging Face GPT-2 folder (config.json, model.safetensors)")
      ->required();
  cmd->add_option("DIR", options->folder, "The folder save_pretrained or Trainer.save_model wrote")->required();
  cmd->add_option("-o", options->model_path, "The raspc model file to write (.safetensors)")->required();
  cmd->add_option("--dataset", options->dataset,
                  "The dataset folder (or its raspc_dataset.json) the model was trained on (default: DIR's "
                  "raspc_dataset.json, which examples/train_hf.py copies there)");
  cmd->callback([options] { run_import_hf(*options); });
}

}  // namespace raspc
