// The native model file: one safetensors file.
//
//   bytes 0..8     header length N, unsigned 64-bit little-endian
//   bytes 8..8+N   JSON header: {"__metadata__": {string: string}, "<tensor name>": {"dtype": "F32",
//                  "shape": [...], "data_offsets": [begin, end]}, ...}; padded with spaces to a
//                  multiple of 8 bytes so the data starts aligned
//   bytes 8+N..    the tensors' data; offsets are relative to this point, contiguous, no gaps
//
// Tensors are float32 under the Hugging Face GPT-2 names of parameter_specs(). Hugging Face
// requires __metadata__ to map strings to strings, so structured values are stored as JSON text:
//   "format": "pt", "raspc.config": {...}, "raspc.vocab": [...], "raspc.bos_id": "-1",
//   "raspc.input_ids": [...], "raspc.residual_labels": [...], "raspc.metadata": {...}
//
// Reading validates everything (sizes, JSON, dtypes, shapes against the config, offsets, finite
// values, missing and unknown tensors) and reports the first problem as a UserError; header
// problems point at the header text with a caret.
#pragma once

#include <string>
#include <string_view>

#include "runtime/model.hpp"

namespace raspc {

// A safetensors file from its header and data: the header is written one entry a line
// (__metadata__ first) so an error about a tensor shows just that tensor's line, and padded with
// spaces to a multiple of 8 bytes.
std::string safetensors_bytes(const nlohmann::json& header, std::string_view data);

// The file's bytes for a model.
std::string serialize_model(const Model& model);
// Writes serialize_model(model) to path atomically.
void save_model(const Model& model, const std::string& path);

// Parses a file's bytes; `name` is the file name used in error messages.
Model parse_model(std::string_view bytes, const std::string& name);
// Reads and parses a file; a missing file is a UserError naming it.
Model load_model(const std::string& path);

// The config as stored in "raspc.config", and back (a bad config is a UserError naming `origin`).
nlohmann::json config_to_json(const ModelConfig& config);
ModelConfig config_from_json(const nlohmann::json& json, const std::string& origin);

}  // namespace raspc
