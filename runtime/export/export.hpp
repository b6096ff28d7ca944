// Exports: a raspc model in the file formats of the runtimes interpretability people use, each
// loadable there unmodified. One writer a format:
//
//   hf     Hugging Face transformers folder: config.json, model.safetensors, generation_config.json,
//          tokenizer.json + tokenizer_config.json (word level, BOS prepended), README.md model card,
//          and for a bidirectional model raspc_gpt2.py (the mask defaulted)  (hf_export.cpp)
//   tlens  TransformerLens folder: tlens_config.json (HookedTransformerConfig fields),
//          model.safetensors in TL's names and shapes, load_tlens.py, the tokenizer's two files
//                                                                   (tlens_export.cpp)
//   gguf   one GGUF v3 file, architecture gpt2, F32 tensors, token list  (gguf_export.cpp)
//   llmc   llm.c folder: model.bin (v3 checkpoint), tokenizer.bin, raspc.json (llmc_export.cpp)
//
// Every format carries raspc's metadata (vocabulary, BOS id, input and output token ids, output
// encoding and dimension, residual labels, program source) in its own metadata slot, so a reader
// can decode outputs without raspc. A format that cannot express a model refuses it with the
// reason and the format that can take it, before anything is written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/model.hpp"

namespace raspc {

enum class ExportFormat { HuggingFace, TransformerLens, Gguf, Llmc };

// "hf", "tlens", "gguf", "llmc"; anything else is a UserError naming `origin` (the flag).
ExportFormat parse_export_format(const std::string& name, const std::string& origin = "--format");
const char* export_format_name(ExportFormat format);

// Why `format`'s runtime cannot run `model` exactly, or nothing when it can.
std::optional<std::string> export_refusal(const Model& model, ExportFormat format);

// The files a folder format writes (none for gguf, a file); hf writes raspc_gpt2.py for a
// bidirectional model only.
const std::vector<std::string>& export_file_names(ExportFormat format);

// Refuses, before any work, an export path that would destroy something: for gguf (a file) what
// check_output_path refuses (one of `inputs`, a folder, a link, a device...); for the folder
// formats an existing path that is not a folder, a folder whose parent does not exist, and an
// existing folder holding anything but the files a previous export of this format wrote (a user's
// own files, another format's, one of `inputs`). `flag` names the option in the message.
void check_export_path(ExportFormat format, const std::string& path, const std::string& flag,
                       const std::vector<std::string>& inputs);

// Writes `model` in `format` at `path` (a folder for hf, tlens and llmc, a file for gguf), after
// check_export_path. A folder is written whole into a temporary folder beside it and renamed into
// place (replacing a previous export of the same format), so a failure leaves no partial folder.
// A refusal, or a path that cannot take the export, is a UserError naming the path.
void export_model(const Model& model, ExportFormat format, const std::string& path,
                  const std::vector<std::string>& inputs = {}, const std::string& flag = "-o");

// --- shared by the writers ---------------------------------------------------------------------

// The metadata every format carries, as one JSON object: vocab, bos_id, input_ids, output,
// residual_labels, mode, program, mlp_units and the config.
nlohmann::json export_metadata(const Model& model);

// `model` with its MLP widened to `width` units by zero units (exact: a zero unit adds
// activation(0) * 0 = 0), or given a 1-unit zero MLP when it has none; a model of no blocks (its
// embeddings compute the output) gets one block of zeros, for the runtimes whose GPT-2 needs a block
// (exact: its attention averages values of 0, its MLP writes 0).
Model with_mlp_width(const Model& model, int width);

// A Conv1D weight (rows, cols) row-major, transposed into PyTorch Linear's (cols, rows), as llm.c
// and GGUF store it.
std::vector<float> transposed(const float* data, size_t rows, size_t cols);

// llm.c's padded vocabulary size (Vp): the vocabulary rounded up to a multiple of 128.
int llmc_padded_vocab(int vocab_size);

std::string join_path(const std::string& folder, const std::string& file);

// A word-level tokenizer over the vocabulary for transformers' PreTrainedTokenizerFast
// (tokenizer.json) and its config (tokenizer_config.json): tokens separated by spaces ("a a b"),
// or also written together when every input token is one character ("aab"); BOS prepended. The hf
// and tlens exports ship it.
nlohmann::json tokenizer_json(const Model& model);
// Whether every input token is one character, so "aab" can be split into characters (the
// tokenizer does; the model card's example writes its input so).
bool single_character_inputs(const Model& model);
nlohmann::json tokenizer_config_json(const Model& model);

// The writers, called by export_model after the refusal check; a folder format's writer writes
// export_file_names' files (those its model needs) into `folder`, a new empty folder.
void write_hf_export(const Model& model, const std::string& folder);
void write_tlens_export(const Model& model, const std::string& folder);
void write_gguf_export(const Model& model, const std::string& file);
void write_llmc_export(const Model& model, const std::string& folder);

// The model card's and loader's shared prose: what the model computes and how to read its output.
std::string describe_output(const Model& model);

}  // namespace raspc
