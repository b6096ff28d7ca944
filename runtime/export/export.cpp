#include "runtime/export/export.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace fs = std::filesystem;
using nlohmann::json;

ExportFormat parse_export_format(const std::string& name, const std::string& origin) {
  if (name == "hf") return ExportFormat::HuggingFace;
  if (name == "tlens") return ExportFormat::TransformerLens;
  if (name == "gguf") return ExportFormat::Gguf;
  if (name == "llmc") return ExportFormat::Llmc;
  fail_file(origin, "unknown export format \"" + name + "\"; the formats are hf, tlens, gguf and llmc");
}

const char* export_format_name(ExportFormat format) {
  switch (format) {
    case ExportFormat::HuggingFace: return "hf";
    case ExportFormat::TransformerLens: return "tlens";
    case ExportFormat::Gguf: return "gguf";
    case ExportFormat::Llmc: return "llmc";
  }
  return "?";
}

std::optional<std::string> export_refusal(const Model& model, ExportFormat format) {
  const ModelConfig& c = model.config;
  const std::string no_layer_norm =
      " always applies LayerNorm, so this model (made without LayerNorm) would give wrong answers there; "
      "export it with --format tlens, which runs models without LayerNorm exactly";
  switch (format) {
    case ExportFormat::TransformerLens: return std::nullopt;
    case ExportFormat::HuggingFace:
      if (!c.layer_norm) return "Hugging Face's GPT2LMHeadModel" + no_layer_norm;
      return std::nullopt;
    case ExportFormat::Gguf:
      if (!c.layer_norm) return "llama.cpp's gpt2 graph" + no_layer_norm;
      if (c.activation != Activation::Gelu)
        return std::string("llama.cpp's gpt2 graph has only a GELU MLP, so this ReLU model would give wrong "
                           "answers there; export it with --format tlens (or hf), which run ReLU exactly");
      return std::nullopt;
    case ExportFormat::Llmc:
      if (!c.causal)
        return std::string("llm.c's GPT-2 always applies a causal mask, so this bidirectional model would give wrong "
                           "answers there; compile with --causal, or export with --format hf, tlens or gguf");
      if (!c.layer_norm) return "llm.c's GPT-2" + no_layer_norm;
      if (c.activation != Activation::Gelu)
        return std::string("llm.c's GPT-2 has only a GELU MLP, so this ReLU model would give wrong answers there; "
                           "export it with --format tlens or hf, which run ReLU exactly");
      if (c.n_inner > 4 * c.n_embd)
        return "llm.c's GPT-2 has an MLP of exactly 4 x n_embd = " + std::to_string(4 * c.n_embd) +
               " units and this model's has " + std::to_string(c.n_inner) +
               " (a narrower one is padded with zero units, but a wider one cannot be cut); export it with "
               "--format hf, tlens or gguf";
      for (const std::string& token : model.vocab)
        if (token.empty() || token.size() > 255)
          return "llm.c's tokenizer stores tokens of 1 to 255 bytes, and the token \"" + token.substr(0, 40) +
                 "\" is " + std::to_string(token.size()) + " bytes; export it with --format hf, tlens or gguf";
      return std::nullopt;
  }
  return std::nullopt;
}

void export_model(const Model& model, ExportFormat format, const std::string& path,
                  const std::vector<std::string>& inputs, const std::string& flag) {
  check_export_path(format, path, flag, inputs);
  if (auto reason = export_refusal(model, format))
    fail_file(path, std::string("cannot export as ") + export_format_name(format) + ": " + *reason);
  if (format == ExportFormat::Gguf) {
    write_gguf_export(model, path);  // one file, written atomically
    return;
  }
  write_folder_atomically(path, [&](const std::string& folder) {
    switch (format) {
      case ExportFormat::HuggingFace: write_hf_export(model, folder); break;
      case ExportFormat::TransformerLens: write_tlens_export(model, folder); break;
      case ExportFormat::Llmc: write_llmc_export(model, folder); break;
      case ExportFormat::Gguf: break;
    }
  });
}

json export_metadata(const Model& model) {
  json meta = {{"vocab", model.vocab},
               {"bos_id", model.bos_id},
               {"input_ids", input_vocabulary(model)},
               {"residual_labels", model.residual_labels},
               {"config", config_to_json(model.config)}};
  meta["mode"] = model.metadata.value("mode", model.config.causal ? "causal" : "bidirectional");
  meta["output"] = model.metadata.value("output", json{{"encoding", "categorical"}});
  for (const char* key : {"program", "source", "mlp_units", "compile", "trainer"})
    if (model.metadata.contains(key)) meta[key] = model.metadata[key];
  return meta;
}

Model with_mlp_width(const Model& model, int width) {
  const ModelConfig& from = model.config;
  Model out;
  out.config = from;
  out.config.n_inner = width;
  if (from.n_layer == 0) out.config.n_layer = 1, out.config.n_head = 1;
  out.vocab = model.vocab;
  out.bos_id = model.bos_id;
  out.input_ids = model.input_ids;
  out.residual_labels = model.residual_labels;
  out.metadata = model.metadata;
  out.allocate();
  const size_t C = size_t(from.n_embd), I = size_t(from.n_inner), W = size_t(width);
  auto copy = [](const float* src, float* dst, size_t n) {
    if (src && n) std::copy(src, src + n, dst);
  };
  copy(model.w.wte, out.w.wte, size_t(from.vocab_size) * C);
  copy(model.w.wpe, out.w.wpe, size_t(from.n_positions) * C);
  copy(model.w.ln_f_w, out.w.ln_f_w, C);
  copy(model.w.ln_f_b, out.w.ln_f_b, C);
  for (size_t l = 0; l < model.w.layers.size(); ++l) {
    const LayerWeights& a = model.w.layers[l];
    LayerWeights& b = out.w.layers[l];
    copy(a.ln_1_w, b.ln_1_w, C);
    copy(a.ln_1_b, b.ln_1_b, C);
    copy(a.attn_w, b.attn_w, C * 3 * C);
    copy(a.attn_b, b.attn_b, 3 * C);
    copy(a.attn_proj_w, b.attn_proj_w, C * C);
    copy(a.attn_proj_b, b.attn_proj_b, C);
    copy(a.ln_2_w, b.ln_2_w, C);
    copy(a.ln_2_b, b.ln_2_b, C);
    if (I == 0) continue;
    for (size_t r = 0; r < C; ++r) copy(a.fc_w + r * I, b.fc_w + r * W, I);  // (C,I) into (C,W)
    copy(a.fc_b, b.fc_b, I);
    copy(a.fc_proj_w, b.fc_proj_w, I * C);  // (I,C): the first I rows of (W,C)
    copy(a.fc_proj_b, b.fc_proj_b, C);
  }
  return out;
}

std::vector<float> transposed(const float* data, size_t rows, size_t cols) {
  std::vector<float> out(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) out[c * rows + r] = data[r * cols + c];
  return out;
}

const std::vector<std::string>& export_file_names(ExportFormat format) {
  static const std::vector<std::string> hf = {"config.json",    "generation_config.json", "model.safetensors",
                                              "raspc_gpt2.py",  "README.md",              "tokenizer.json",
                                              "tokenizer_config.json"};
  static const std::vector<std::string> tlens = {"load_tlens.py", "model.safetensors", "tlens_config.json",
                                                 "tokenizer.json", "tokenizer_config.json"};
  static const std::vector<std::string> llmc = {"model.bin", "raspc.json", "tokenizer.bin"};
  static const std::vector<std::string> none;
  switch (format) {
    case ExportFormat::HuggingFace: return hf;
    case ExportFormat::TransformerLens: return tlens;
    case ExportFormat::Llmc: return llmc;
    case ExportFormat::Gguf: return none;
  }
  return none;
}

void check_export_path(ExportFormat format, const std::string& path, const std::string& flag,
                       const std::vector<std::string>& inputs) {
  if (format == ExportFormat::Gguf) {
    check_output_path(path, flag, inputs);
    return;
  }
  const std::string usage = std::string("; this format is written as a folder: name a new or empty folder, or one a "
                                        "previous --format ") + export_format_name(format) + " export wrote";
  const std::vector<std::string>& ours = export_file_names(format);
  check_replaceable_folder(
      path, flag, inputs, [&](const std::string& name) { return std::find(ours.begin(), ours.end(), name) != ours.end(); },
      {std::string(export_format_name(format)) + " export", "export", "export into another folder", usage});
}

std::string join_path(const std::string& folder, const std::string& file) {
  return (fs::path(folder) / file).string();
}

std::string describe_output(const Model& model) {
  const json output = model.metadata.value("output", json{{"encoding", "categorical"}});
  const bool has_bos = model.bos_id >= 0;
  std::string text;
  if (output.value("encoding", "categorical") == "numerical") {
    text = "The output is numerical: at every position it is the residual stream's dimension " +
           std::to_string(output.value("dim", 0)) +
           " (label `" + (size_t(output.value("dim", 0)) < model.residual_labels.size()
                              ? model.residual_labels[size_t(output.value("dim", 0))] : std::string()) +
           "`) after the last block, before the final LayerNorm; the logits mean nothing.";
  } else {
    text = "The output is categorical: at every position it is the argmax of the logits";
    if (output.contains("token_ids")) text += " over the output token ids raspc's metadata lists (`output.token_ids`)";
    text += ", read as a token of the vocabulary.";
  }
  if (has_bos)
    text += " Inputs start with the BOS token `" + model.vocab[size_t(model.bos_id)] +
            "` (id " + std::to_string(model.bos_id) + "); the output at the BOS position is not part of the answer.";
  return text;
}

using nlohmann::json;

bool single_character_inputs(const Model& model) {
  for (int id : input_vocabulary(model)) {
    const std::string& t = model.vocab[size_t(id)];
    size_t length = 0;
    for (unsigned char ch : t) length += (ch & 0xC0) != 0x80;  // UTF-8 code points
    if (length != 1) return false;
  }
  return true;
}

// A word-level tokenizer over the vocabulary: tokens are separated by spaces ("a a b"), or also
// written together when every input token is one character ("aab"); BOS is prepended.
json tokenizer_json(const Model& model) {
  json vocab = json::object();
  for (size_t id = 0; id < model.vocab.size(); ++id) vocab[model.vocab[id]] = id;
  json pre = {{"type", "WhitespaceSplit"}};
  if (single_character_inputs(model))
    pre = {{"type", "Sequence"},
           {"pretokenizers",
            {pre, {{"type", "Split"}, {"pattern", {{"Regex", "."}}}, {"behavior", "Isolated"}, {"invert", false}}}}};
  json tokenizer = {{"version", "1.0"},  {"truncation", nullptr}, {"padding", nullptr},
                    {"added_tokens", json::array()}, {"normalizer", nullptr}, {"pre_tokenizer", pre},
                    {"post_processor", nullptr}, {"decoder", nullptr},
                    // The unknown-token name is not in the vocabulary, so an unknown word is an error.
                    {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "<unk>"}}}};
  if (model.bos_id >= 0) {
    const std::string bos = model.vocab[size_t(model.bos_id)];
    tokenizer["added_tokens"].push_back({{"id", model.bos_id}, {"content", bos}, {"single_word", false},
                                         {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                                         {"special", true}});
    json special = {{"SpecialToken", {{"id", bos}, {"type_id", 0}}}};
    tokenizer["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single", {special, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair", {special, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
        {"special_tokens", {{bos, {{"id", bos}, {"ids", {model.bos_id}}, {"tokens", {bos}}}}}}};
  }
  return tokenizer;
}

json tokenizer_config_json(const Model& model) {
  json config = {{"tokenizer_class", "PreTrainedTokenizerFast"},
                 {"model_max_length", model.config.n_positions},
                 {"clean_up_tokenization_spaces", false}};
  if (model.bos_id >= 0) config["bos_token"] = model.vocab[size_t(model.bos_id)];
  return config;
}

}  // namespace raspc
