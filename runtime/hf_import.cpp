#include "runtime/hf_import.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "support/json_file.hpp"

namespace raspc {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Hugging Face's own limit on a safetensors header.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

float half_to_float(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0) value = std::ldexp(float(mantissa), -24);  // zero and subnormals
  else if (exponent == 31) value = mantissa ? NAN : INFINITY;
  else value = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}

float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "F64") return 8;
  return 0;
}

// A config.json value: an integer in [low, high] (`fallback` where the key is absent or null).
int config_int(const json& config, const std::string& file, const char* key, long low, long high, long fallback = -1) {
  if (!config.contains(key) || config[key].is_null()) {
    if (fallback >= 0) return int(fallback);
    fail_file(file, std::string("has no \"") + key + "\"; a GPT-2 config names it");
  }
  const json& v = config[key];
  if (!v.is_number_integer() || v.get<long>() < low || v.get<long>() > high)
    fail_file(file, std::string("\"") + key + "\" is " + v.dump() + "; raspc reads a whole number from " +
                        std::to_string(low) + " to " + std::to_string(high));
  return v.get<int>();
}

ModelConfig read_config(const std::string& file, const HfVocabulary& vocabulary) {
  const json config = read_json_file(file);
  if (!config.is_object()) fail_file(file, "is not a JSON object; a Hugging Face config.json is one");
  if (config.value("model_type", json()).dump() != "\"gpt2\"")
    fail_file(file, "\"model_type\" is " + config.value("model_type", json()).dump() +
                        "; raspc imports GPT-2 models (\"gpt2\") only");
  ModelConfig c;
  c.n_layer = config_int(config, file, "n_layer", 0, 1024);
  c.n_head = config_int(config, file, "n_head", 1, 4096);
  c.n_embd = config_int(config, file, "n_embd", 1, 1 << 16);
  c.n_inner = config_int(config, file, "n_inner", 0, 1 << 20, 4L * c.n_embd);
  c.n_positions = config_int(config, file, "n_positions", 1, 1 << 20);
  c.vocab_size = config_int(config, file, "vocab_size", 1, 1 << 24);
  if (c.n_embd % c.n_head != 0)
    fail_file(file, "n_embd " + std::to_string(c.n_embd) + " is not a multiple of n_head " + std::to_string(c.n_head));
  const json activation = config.value("activation_function", json("gelu_new"));
  if (activation == "gelu_new" || activation == "gelu_pytorch_tanh") {
    c.activation = Activation::Gelu;
  } else if (activation == "relu") {
    c.activation = Activation::Relu;
  } else {
    fail_file(file, "\"activation_function\" is " + activation.dump() +
                        "; raspc's MLP computes tanh GELU (\"gelu_new\") or \"relu\", and another activation would "
                        "give other outputs");
  }
  const json epsilon = config.value("layer_norm_epsilon", json(1e-5));
  if (!epsilon.is_number() || std::fabs(epsilon.get<double>() - 1e-5) > 1e-12)
    fail_file(file, "\"layer_norm_epsilon\" is " + epsilon.dump() + "; raspc's LayerNorm uses 1e-5");
  if (!config.value("scale_attn_weights", true) || config.value("scale_attn_by_inverse_layer_idx", false))
    fail_file(file, "scales attention otherwise than by 1/sqrt(d_head) (scale_attn_weights, "
                    "scale_attn_by_inverse_layer_idx); raspc's attention cannot");
  if (!config.value("tie_word_embeddings", true))
    fail_file(file, "\"tie_word_embeddings\" is false; raspc's logits are the final LayerNorm's output times the token "
                    "embedding, so the output layer must be tied to it");
  if (size_t(c.vocab_size) != vocabulary.vocab.size())
    fail_file(file, "\"vocab_size\" is " + std::to_string(c.vocab_size) + " but the vocabulary given has " +
                        std::to_string(vocabulary.vocab.size()) + " tokens; import the model with the dataset it was "
                        "trained on");
  c.layer_norm = true;
  c.causal = vocabulary.causal;
  return c;
}

// One safetensors file's tensors, read into the model's parameters (converted to float32).
class WeightReader {
 public:
  WeightReader(Model& model, std::map<std::string, const ParameterSpec*>& expected)
      : model_(model), expected_(expected) {}

  void read(const std::string& path) {
    auto file = std::make_shared<InputFile>(path);
    uint64_t data_start = 0;
    const json header = read_header(path, *file, data_start);
    const uint64_t data_size = file->size() - data_start;
    for (const auto& [key, entry] : header.items()) {
      if (key == "__metadata__") continue;
      std::string name = key.rfind("transformer.", 0) == 0 ? key.substr(12) : key;
      if (name == "lm_head.weight") {
        lm_head_ = {path, file, data_start, data_size, entry};
        continue;
      }
      // Older transformers saved the causal mask and its fill value as buffers: not parameters.
      auto ends_with = [&](const std::string& suffix) {
        return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      };
      if (ends_with(".attn.bias") || ends_with(".attn.masked_bias")) continue;
      auto it = expected_.find("transformer." + name);
      if (it == expected_.end())
        fail_file(path, "holds tensor \"" + key + "\", which a GPT-2 of this config (config.json) does not have");
      read_tensor(path, *file, data_start, data_size, key, entry, *it->second, model_.storage.data() + it->second->offset);
      expected_.erase(it);
    }
  }

  // An lm_head.weight, where a file held one: it must equal the token embedding (tied).
  void check_lm_head(const ParameterSpec& wte) {
    if (!lm_head_.file) return;
    std::vector<float> head(wte.size());
    read_tensor(lm_head_.path, *lm_head_.file, lm_head_.data_start, lm_head_.data_size, "lm_head.weight",
                lm_head_.entry, wte, head.data());
    const float* embedding = model_.storage.data() + wte.offset;
    for (size_t i = 0; i < head.size(); ++i)
      if (head[i] != embedding[i])
        fail_file(lm_head_.path, "lm_head.weight differs from the token embedding at flat index " + std::to_string(i) +
                                     "; raspc's output layer is tied to the embedding");
  }

 private:
  void read_tensor(const std::string& path, const InputFile& file, uint64_t data_start, uint64_t data_size,
                   const std::string& key, const json& entry, const ParameterSpec& spec, float* destination) {
    auto fail = [&](const std::string& message) { fail_file(path, "tensor \"" + key + "\" " + message); };
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry.contains("data_offsets"))
      fail("needs \"dtype\", \"shape\" and \"data_offsets\"");
    const std::string dtype = entry["dtype"].get<std::string>();
    const size_t bytes = dtype_bytes(dtype);
    if (bytes == 0) fail("has dtype " + dtype + "; raspc reads F32, F16, BF16 and F64");
    const json& shape = entry["shape"];
    bool shape_ok = shape.is_array() && shape.size() == spec.shape.size();
    for (size_t d = 0; shape_ok && d < spec.shape.size(); ++d)
      shape_ok = shape[d].is_number_unsigned() && shape[d].get<uint64_t>() == spec.shape[d];
    if (!shape_ok) fail("has shape " + shape.dump() + " but config.json's model needs " + json(spec.shape).dump());
    const json& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned() || offsets[1].get<uint64_t>() < offsets[0].get<uint64_t>() ||
        offsets[1].get<uint64_t>() - offsets[0].get<uint64_t>() != spec.size() * bytes ||
        offsets[1].get<uint64_t>() > data_size)
      fail("has data_offsets " + offsets.dump() + " that do not hold its shape within the file's " +
           std::to_string(data_size) + " bytes of data");
    std::vector<char> raw(spec.size() * bytes);
    file.read_at(data_start + offsets[0].get<uint64_t>(), raw.data(), raw.size());
    for (size_t i = 0; i < spec.size(); ++i) {
      const char* p = raw.data() + i * bytes;
      float v;
      if (dtype == "F32") {
        std::memcpy(&v, p, 4);
      } else if (dtype == "F64") {
        double d;
        std::memcpy(&d, p, 8);
        v = float(d);
      } else {
        uint16_t h;
        std::memcpy(&h, p, 2);
        v = dtype == "F16" ? half_to_float(h) : bfloat16_to_float(h);
      }
      if (!std::isfinite(v)) fail("has a non-finite value at flat index " + std::to_string(i) + "; weights must be finite");
      destination[i] = v;
    }
  }

  // A safetensors file's JSON header (after its 8-byte little-endian length); `data_start` is
  // where its tensors' data begins.
  static json read_header(const std::string& path, const InputFile& file, uint64_t& data_start) {
    if (file.size() < 8) fail_file(path, "is too short to be a safetensors file");
    char prefix[8];
    file.read_at(0, prefix, 8);
    uint64_t header_length = 0;
    for (int i = 7; i >= 0; --i) header_length = header_length << 8 | uint8_t(prefix[i]);
    if (header_length > kMaxHeaderBytes || header_length > file.size() - 8)
      fail_file(path, "its header length (" + std::to_string(header_length) +
                          " bytes) does not fit the file; is it a safetensors file?");
    std::string text(size_t(header_length), '\0');
    file.read_at(8, text.data(), header_length);
    json header;
    try {
      header = json::parse(text);
    } catch (const json::exception& e) {
      fail_file(path, std::string("its header is not valid JSON: ") + e.what());
    }
    if (!header.is_object()) fail_file(path, "its header is not a JSON object");
    data_start = 8 + header_length;
    return header;
  }

  // Where an lm_head.weight was found, read once the embedding it must equal is in.
  struct LmHead {
    std::string path;
    std::shared_ptr<InputFile> file;
    uint64_t data_start = 0, data_size = 0;
    json entry;
  };

  Model& model_;
  std::map<std::string, const ParameterSpec*>& expected_;
  LmHead lm_head_;
};

// The safetensors files of a folder: the index's shards, or model.safetensors.
std::vector<std::string> weight_files(const std::string& folder) {
  const fs::path index = fs::path(folder) / "model.safetensors.index.json";
  std::error_code error;
  if (fs::exists(index, error)) {
    const json j = read_json_file(index.string());
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      fail_file(index.string(), "has no \"weight_map\" object; a sharded checkpoint's index names each tensor's file");
    std::set<std::string> files;
    for (const auto& [tensor, file] : j["weight_map"].items()) {
      if (!file.is_string() || file.get<std::string>().find('/') != std::string::npos)
        fail_file(index.string(), "names " + file.dump() + " for tensor \"" + tensor + "\"; a shard is a file beside it");
      files.insert(file.get<std::string>());
    }
    std::vector<std::string> paths;
    for (const std::string& f : files) paths.push_back((fs::path(folder) / f).string());
    return paths;
  }
  const fs::path single = fs::path(folder) / "model.safetensors";
  if (fs::exists(single, error)) return {single.string()};
  if (fs::exists(fs::path(folder) / "pytorch_model.bin", error))
    fail_file(folder, "holds pytorch_model.bin but no model.safetensors; raspc reads safetensors (save with "
                      "save_pretrained(..., safe_serialization=True), the default)");
  fail_file(folder, "holds no model.safetensors (nor model.safetensors.index.json); is it a saved Hugging Face model?");
}

}  // namespace

Model import_hf_gpt2(const std::string& folder, const HfVocabulary& vocabulary) {
  std::error_code error;
  if (!fs::is_directory(folder, error))
    fail_file(folder, "is not a folder; give the folder save_pretrained (or Trainer.save_model) wrote");
  const std::string config_file = (fs::path(folder) / "config.json").string();
  if (!fs::exists(config_file, error)) fail_file(config_file, "is missing; a saved Hugging Face model has one");
  Model model;
  model.config = read_config(config_file, vocabulary);
  const ModelConfig& c = model.config;
  model.vocab = vocabulary.vocab;
  model.bos_id = vocabulary.bos_id;
  model.input_ids = vocabulary.input_ids;
  for (int i = 0; i < c.n_embd; ++i) model.residual_labels.push_back("d" + std::to_string(i));
  model.metadata["mode"] = c.causal ? "causal" : "bidirectional";
  model.metadata["output"] = vocabulary.output;
  // A config whose weights cannot be in the files is refused before anything is allocated for it
  // (two bytes a weight at the least: float16 and bfloat16).
  const std::vector<std::string> files = weight_files(folder);
  // (read_config's bounds keep the count within 64 bits.)
  {
    uint64_t bytes = 0;
    for (const std::string& file : files) {
      const uintmax_t size = fs::file_size(file, error);
      if (!error) bytes += size;  // a file that cannot be read is reported when it is read
    }
    const size_t weights = parameter_count(c);
    if (2 * uint64_t(weights) > bytes)
      fail_file(config_file, "describes a model of " + std::to_string(weights) + " weights, more than its weight files' " +
                                 std::to_string(bytes) + " bytes can hold; are they this config's?");
  }
  model.allocate();

  const std::vector<ParameterSpec> specs = parameter_specs(c);
  std::map<std::string, const ParameterSpec*> expected;
  for (const ParameterSpec& spec : specs) expected[spec.name] = &spec;
  WeightReader reader(model, expected);
  for (const std::string& file : files) reader.read(file);
  for (const ParameterSpec& spec : specs)
    if (expected.count(spec.name))
      fail_file(files.size() == 1 ? files[0] : folder, "has no tensor \"" + spec.name +
                                                          "\" (or without \"transformer.\"); config.json's model needs it");
  reader.check_lm_head(specs.front());  // transformer.wte.weight comes first
  return model;
}

}  // namespace raspc
