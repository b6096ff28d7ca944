// raspc import hf's reader: a Hugging Face GPT-2 folder back into a raspc Model, and what it refuses.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "runtime/export/export.hpp"
#include "runtime/hf_import.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/random_model.hpp"
#include "tests/runtime/temp_folder.hpp"

using namespace raspc;
using namespace raspc::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// 2 layers, 2 heads of 4, an MLP of 12, BOS at 0: a trained model's layout (labels d0..d7).
Model trained_like(bool causal) {
  Model m = make_random_model(make_config(2, 2, 8, 12, 6, 5, causal), 3, 0.3f, true);
  m.vocab = {"BOS", "a", "b", "1", "2"};
  m.input_ids = {1, 2};
  m.metadata = {{"mode", causal ? "causal" : "bidirectional"},
                {"output", {{"encoding", "categorical"}, {"token_ids", {3, 4}}}}};
  return m;
}

HfVocabulary vocabulary_of(const Model& m) {
  HfVocabulary v;
  v.vocab = m.vocab;
  v.bos_id = m.bos_id;
  v.input_ids = m.input_ids;
  v.output = m.metadata["output"];
  v.causal = m.config.causal;
  return v;
}

std::string error_of(const std::string& folder, const HfVocabulary& vocabulary) {
  try {
    import_hf_gpt2(folder, vocabulary);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

json json_of_file(const std::string& path) { return json::parse(read_file_bytes(path)); }
void write_json(const std::string& path, const json& j) { write_file_atomically(path, j.dump(2)); }

// A safetensors file of `model`'s tensors under Hugging Face's names, in `dtype` (F32, F16, BF16
// or F64), optionally without the "transformer." prefix and with an lm_head.weight.
std::string hf_weights(const Model& model, const std::string& dtype, bool prefixed, const float* lm_head = nullptr) {
  json header = json::object();
  std::string data;
  auto add = [&](const std::string& name, const std::vector<size_t>& shape, const float* values, size_t n) {
    const size_t begin = data.size();
    for (size_t i = 0; i < n; ++i) {
      const float v = values[i];
      if (dtype == "F32") {
        data.append(reinterpret_cast<const char*>(&v), 4);
      } else if (dtype == "F64") {
        const double d = v;
        data.append(reinterpret_cast<const char*>(&d), 8);
      } else {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        // The test's values are exact in both 16-bit forms (see make_exact): truncation is exact.
        uint16_t h = uint16_t(bits >> 16);
        if (dtype == "F16") {
          const int exponent = int((bits >> 23) & 0xff) - 127;
          const uint32_t mantissa = bits & 0x7fffff;
          h = v == 0.0f ? uint16_t((bits >> 16) & 0x8000)
                        : uint16_t(((bits >> 16) & 0x8000) | uint32_t(exponent + 15) << 10 | mantissa >> 13);
        }
        data.append(reinterpret_cast<const char*>(&h), 2);
      }
    }
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, data.size()}}};
  };
  for (const ParameterSpec& spec : parameter_specs(model.config)) {
    std::string name = prefixed ? spec.name : spec.name.substr(12);
    add(name, spec.shape, model.storage.data() + spec.offset, spec.size());
  }
  if (lm_head) add("lm_head.weight", {size_t(model.config.vocab_size), size_t(model.config.n_embd)}, lm_head,
                   size_t(model.config.vocab_size) * model.config.n_embd);
  header["__metadata__"] = {{"format", "pt"}};
  return safetensors_bytes(header, data);
}

// Values exact in float16 and bfloat16: multiples of 1/8 in [-2, 2].
void make_exact(Model& model) {
  for (size_t i = 0; i < model.storage.size(); ++i) model.storage[i] = float(int(i % 33) - 16) / 8.0f;
}

}  // namespace

TEST_CASE("an hf export imports back to the same weights, config and vocabulary") {
  for (bool causal : {false, true}) {
    TempFolder dir("raspc-hf-import-test");
    const Model model = trained_like(causal);
    export_model(model, ExportFormat::HuggingFace, dir / "hf");
    const Model back = import_hf_gpt2(dir / "hf", vocabulary_of(model));
    CHECK(back.storage == model.storage);
    CHECK(config_to_json(back.config) == config_to_json(model.config));
    CHECK(back.vocab == model.vocab);
    CHECK(back.bos_id == 0);
    CHECK(back.input_ids == model.input_ids);
    CHECK(back.residual_labels == model.residual_labels);
    CHECK(back.metadata["mode"] == (causal ? "causal" : "bidirectional"));
    CHECK(back.metadata["output"] == model.metadata["output"]);
  }
}

TEST_CASE("tensors in float16, bfloat16 or float64, with or without the transformer. prefix, a tied lm_head") {
  Model model = trained_like(false);
  make_exact(model);
  for (const char* dtype : {"F32", "F16", "BF16", "F64"})
    for (bool prefixed : {true, false}) {
      TempFolder dir("raspc-hf-import-test");
      export_model(model, ExportFormat::HuggingFace, dir / "hf");
      write_file_atomically(dir / "hf/model.safetensors", hf_weights(model, dtype, prefixed, model.w.wte));
      INFO(dtype << (prefixed ? " prefixed" : " unprefixed"));
      CHECK(import_hf_gpt2(dir / "hf", vocabulary_of(model)).storage == model.storage);
    }
}

TEST_CASE("a sharded checkpoint is read through its index") {
  TempFolder dir("raspc-hf-import-test");
  Model model = trained_like(false);
  export_model(model, ExportFormat::HuggingFace, dir / "hf");
  fs::remove(dir / "hf/model.safetensors");
  // Two shards: the embeddings in one, the rest in the other.
  json map = json::object();
  json h1 = json::object(), h2 = json::object();
  std::string d1, d2;
  for (const ParameterSpec& spec : parameter_specs(model.config)) {
    const bool embedding = spec.name == "transformer.wte.weight" || spec.name == "transformer.wpe.weight";
    json& header = embedding ? h1 : h2;
    std::string& data = embedding ? d1 : d2;
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(model.storage.data() + spec.offset), spec.size() * 4);
    header[spec.name] = {{"dtype", "F32"}, {"shape", spec.shape}, {"data_offsets", {begin, data.size()}}};
    map[spec.name] = embedding ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  write_file_atomically(dir / "hf/model-00001-of-00002.safetensors", safetensors_bytes(h1, d1));
  write_file_atomically(dir / "hf/model-00002-of-00002.safetensors", safetensors_bytes(h2, d2));
  write_json(dir / "hf/model.safetensors.index.json", {{"metadata", json::object()}, {"weight_map", map}});
  CHECK(import_hf_gpt2(dir / "hf", vocabulary_of(model)).storage == model.storage);
}

TEST_CASE("what raspc's forward cannot run is refused, naming the file and the reason") {
  TempFolder dir("raspc-hf-import-test");
  const Model model = trained_like(false);
  export_model(model, ExportFormat::HuggingFace, dir / "hf");
  const HfVocabulary vocabulary = vocabulary_of(model);
  const std::string config_path = dir / "hf/config.json";
  const json config = json_of_file(config_path);
  auto with = [&](const std::string& key, const json& value) {
    json changed = config;
    changed[key] = value;
    write_json(config_path, changed);
    return error_of(dir / "hf", vocabulary);
  };
  CHECK(with("activation_function", "gelu") ==
        config_path + ": error: \"activation_function\" is \"gelu\"; raspc's MLP computes tanh GELU (\"gelu_new\") or "
                      "\"relu\", and another activation would give other outputs\n");
  CHECK(with("layer_norm_epsilon", 1e-6) ==
        config_path + ": error: \"layer_norm_epsilon\" is 1e-06; raspc's LayerNorm uses 1e-5\n");
  CHECK(with("tie_word_embeddings", false) ==
        config_path + ": error: \"tie_word_embeddings\" is false; raspc's logits are the final LayerNorm's output times "
                      "the token embedding, so the output layer must be tied to it\n");
  CHECK(with("vocab_size", 7) == config_path + ": error: \"vocab_size\" is 7 but the vocabulary given has 5 tokens; "
                                               "import the model with the dataset it was trained on\n");
  CHECK(with("model_type", "llama") ==
        config_path + ": error: \"model_type\" is \"llama\"; raspc imports GPT-2 models (\"gpt2\") only\n");
  CHECK(with("n_head", 3) == config_path + ": error: n_embd 8 is not a multiple of n_head 3\n");
  // A config far larger than its weights is refused before anything is allocated for it.
  CHECK(with("n_positions", 1 << 20).find(config_path + ": error: describes a model of 8389728 weights, more than its "
                                                        "weight files' ") == 0);
  write_json(config_path, config);

  // An untied lm_head, a missing tensor, a tensor GPT-2 has not, a shape that is not the config's.
  std::vector<float> head(model.w.wte, model.w.wte + 5 * 8);
  head[17] += 1.0f;
  const std::string weights = dir / "hf/model.safetensors";
  write_file_atomically(weights, hf_weights(model, "F32", true, head.data()));
  CHECK(error_of(dir / "hf", vocabulary) == weights + ": error: lm_head.weight differs from the token embedding at "
                                                      "flat index 17; raspc's output layer is tied to the embedding\n");
  Model one_layer = model;
  one_layer.config.n_layer = 1;  // writes only layer 0's tensors (and the others from the same storage)
  write_file_atomically(weights, hf_weights(one_layer, "F32", true));
  CHECK(error_of(dir / "hf", vocabulary) ==
        weights + ": error: has no tensor \"transformer.h.1.ln_1.weight\" (or without \"transformer.\"); config.json's "
                  "model needs it\n");
  write_json(config_path, [&] {
    json c = config;
    c["n_layer"] = 1;
    return c;
  }());
  write_file_atomically(weights, hf_weights(model, "F32", true));
  CHECK(error_of(dir / "hf", vocabulary) == weights + ": error: holds tensor \"transformer.h.1.attn.c_attn.bias\", which a "
                                                      "GPT-2 of this config (config.json) does not have\n");
  write_json(config_path, config);
  fs::remove(weights);
  write_file_atomically(dir / "hf/pytorch_model.bin", "not read");
  CHECK(error_of(dir / "hf", vocabulary) ==
        dir / "hf" + ": error: holds pytorch_model.bin but no model.safetensors; raspc reads safetensors (save with "
                     "save_pretrained(..., safe_serialization=True), the default)\n");
  CHECK(error_of(dir / "missing", vocabulary) ==
        dir / "missing" + ": error: is not a folder; give the folder save_pretrained (or Trainer.save_model) wrote\n");
}
