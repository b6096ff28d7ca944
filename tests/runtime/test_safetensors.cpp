// The model file: round trips, and every malformed file the reader must reject with a message.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;
using nlohmann::json;

namespace {

// A model small enough that its whole header fits in a test: 6 tensors, no LayerNorm, no MLP.
Model tiny_model() {
  ModelConfig config = make_config(1, 1, 2, 0, 2, 2, true, false);
  return testing::make_random_model(config, 7);
}

struct SplitFile {
  json header;
  std::string data;
};

SplitFile split(const std::string& bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

std::string error_of(const std::string& bytes) {
  try {
    parse_model(bytes, "m.safetensors");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The error after changing the tiny model's header (and data) with `edit`.
template <class Edit>
std::string error_after(Edit edit) {
  SplitFile file = split(serialize_model(tiny_model()));
  edit(file);
  return error_of(safetensors_bytes(file.header, file.data));
}

}  // namespace

TEST_CASE("a model survives the file round trip bit for bit") {
  ModelConfig config = make_config(2, 2, 8, 12, 6, 5, false, true, Activation::Relu);
  Model model = testing::make_random_model(config, 11, 0.3f, true);
  model.input_ids = {1, 2, 3};
  model.metadata = {{"mode", "bidirectional"}, {"output", {{"encoding", "categorical"}}}, {"program", "hist = 1;"}};

  std::string path = std::string("runtime_test_roundtrip.safetensors");
  save_model(model, path);
  Model loaded = load_model(path);
  std::remove(path.c_str());

  CHECK(loaded.config.n_layer == 2);
  CHECK(loaded.config.n_head == 2);
  CHECK(loaded.config.n_embd == 8);
  CHECK(loaded.config.n_inner == 12);
  CHECK(loaded.config.n_positions == 6);
  CHECK(loaded.config.vocab_size == 5);
  CHECK_FALSE(loaded.config.causal);
  CHECK(loaded.config.layer_norm);
  CHECK(loaded.config.activation == Activation::Relu);
  CHECK(loaded.vocab == model.vocab);
  CHECK(loaded.bos_id == 0);
  CHECK(loaded.input_ids == model.input_ids);
  CHECK(loaded.residual_labels == model.residual_labels);
  CHECK(loaded.metadata == model.metadata);
  REQUIRE(loaded.storage.size() == model.storage.size());
  CHECK(std::memcmp(loaded.storage.data(), model.storage.data(), model.storage.size() * sizeof(float)) == 0);
  CHECK(loaded.w.layers[1].fc_proj_b == loaded.storage.data() + (model.w.layers[1].fc_proj_b - model.storage.data()));
}

TEST_CASE("the file keeps Hugging Face's conventions") {
  SplitFile file = split(serialize_model(tiny_model()));
  const json& metadata = file.header["__metadata__"];
  CHECK(metadata["format"] == "pt");
  for (const auto& [key, value] : metadata.items()) CHECK(value.is_string());
  CHECK(json::parse(metadata["raspc.config"].get<std::string>())["activation"] == "gelu");
  CHECK(file.header["transformer.h.0.attn.c_attn.weight"] ==
        json::parse(R"({"dtype":"F32","shape":[2,6],"data_offsets":[32,80]})"));
  CHECK(file.data.size() == 128);
  std::string bytes = serialize_model(tiny_model());
  CHECK((bytes.size() - file.data.size()) % 8 == 0);  // the data starts 8-byte aligned
}

TEST_CASE("a missing model file is named") {
  CHECK_THROWS_WITH(load_model("no/such/model.safetensors"),
                    "no/such/model.safetensors: error: cannot open the file (does it exist, and is it readable?)\n");
}

TEST_CASE("a truncated file is rejected") {
  CHECK(error_of(std::string("\x10\x00\x00", 3)) ==
        "m.safetensors: error: the file is truncated: it has 3 bytes, fewer than the 8-byte header length of a "
        "safetensors file\n");
  std::string bytes = serialize_model(tiny_model());
  CHECK(error_of(bytes.substr(0, bytes.size() - 4)) ==
        "m.safetensors: error: the config needs 128 bytes of weights but the file holds only 124 after its header; "
        "the file is truncated\n");
  CHECK(error_of(bytes.substr(0, 30)) ==
        "m.safetensors: error: the header length field says 864 bytes, past the end of the file (30 bytes); the file "
        "is truncated or not a safetensors file\n");
}

TEST_CASE("a header length past the end of the file is rejected") {
  std::string bytes = serialize_model(tiny_model());
  bytes[5] = 1;  // 2^40 bytes
  CHECK(error_of(bytes) ==
        "m.safetensors: error: the header length field says 1099511628640 bytes, past the end of the file (1000 "
        "bytes); the file is truncated or not a safetensors file\n");
}

TEST_CASE("malformed JSON in the header is shown with a caret") {
  std::string header = "{\n\"__metadata__\": {\"format\": pt}\n}";
  std::string bytes(8, '\0');
  bytes[0] = char(header.size());
  bytes += header;
  CHECK(error_of(bytes) ==
        "m.safetensors:header:2:28: error: the JSON header is malformed: syntax error while parsing value - invalid "
        "literal; last read: '\"format\": p'\n"
        "  \"__metadata__\": {\"format\": pt}\n"
        "                             ^\n");
}

TEST_CASE("a dtype other than F32 is rejected") {
  std::string error = error_after([](SplitFile& f) { f.header["transformer.wpe.weight"]["dtype"] = "F16"; });
  CHECK(error.substr(0, error.find('{')) ==
        "m.safetensors:header:7:1: error: tensor \"transformer.wpe.weight\" has dtype \"F16\"; raspc models store "
        "every tensor as F32\n"
        "  \"transformer.wpe.weight\":");
  CHECK(error.substr(error.rfind('\n', error.size() - 2) + 1) == "  ^~~~~~~~~~~~~~~~~~~~~~~~\n");
}

TEST_CASE("a shape that disagrees with the config is rejected") {
  CHECK(first_line(error_after([](SplitFile& f) { f.header["transformer.wte.weight"]["shape"] = {4, 1}; })) ==
        "m.safetensors:header:8:1: error: tensor \"transformer.wte.weight\" has shape [4,1] but the config needs [2,2]");
}

TEST_CASE("overlapping, gapped and out-of-file offsets are rejected") {
  // wte holds bytes [0,16), wpe [16,32), c_attn.weight [32,80), c_attn.bias [80,104), c_proj.weight
  // [104,120), c_proj.bias [120,128).
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["transformer.wpe.weight"]["data_offsets"] = {8, 24};
        })) == "m.safetensors:header:7:1: error: tensor \"transformer.wpe.weight\" overlaps the tensor before it in "
               "the data (starts at byte 8, the previous one ends at 16)");
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["transformer.h.0.attn.c_proj.bias"]["data_offsets"] = {124, 132};
          f.data += std::string(4, '\0');
        })) == "m.safetensors:header:5:1: error: tensor \"transformer.h.0.attn.c_proj.bias\" leaves a gap in the "
               "data (starts at byte 124, the previous one ends at 120)");
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["transformer.wte.weight"]["data_offsets"] = {128, 144};
        })) == "m.safetensors:header:8:1: error: tensor \"transformer.wte.weight\" has data_offsets [128,144] "
               "pointing past the end of the data (128 bytes); the file is truncated");
  CHECK(first_line(error_after([](SplitFile& f) { f.header["transformer.wte.weight"]["data_offsets"] = {0, 12}; })) ==
        "m.safetensors:header:8:1: error: tensor \"transformer.wte.weight\" has data_offsets spanning 12 bytes but "
        "its shape needs 16");
  CHECK(error_after([](SplitFile& f) { f.data += "junk"; }) ==
        "m.safetensors: error: the file has 4 bytes after the last tensor; the data section must hold exactly the "
        "tensors\n");
}

TEST_CASE("NaN and infinite weights are rejected") {
  auto poison = [](float value) {
    return [value](SplitFile& f) { std::memcpy(f.data.data() + 84, &value, sizeof value); };  // c_attn.bias[1]
  };
  CHECK(first_line(error_after(poison(std::numeric_limits<float>::quiet_NaN()))) ==
        "m.safetensors:header:3:1: error: tensor \"transformer.h.0.attn.c_attn.bias\" has a NaN value at flat "
        "index 1; weights must be finite");
  CHECK(first_line(error_after(poison(-std::numeric_limits<float>::infinity()))) ==
        "m.safetensors:header:3:1: error: tensor \"transformer.h.0.attn.c_attn.bias\" has an infinite value at flat "
        "index 1; weights must be finite");
}

TEST_CASE("missing and unknown tensors are rejected") {
  CHECK(first_line(error_after([](SplitFile& f) { f.header.erase("transformer.h.0.attn.c_proj.weight"); })) ==
        "m.safetensors:header:1:1: error: tensor \"transformer.h.0.attn.c_proj.weight\" is missing; the config needs it");
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["transformer.h.0.mlp.c_fc.weight"] = f.header["transformer.wte.weight"];
        })) == "m.safetensors:header:7:1: error: unknown tensor \"transformer.h.0.mlp.c_fc.weight\": a GPT-2 with "
               "this config (n_layer 1, layer_norm off, n_inner 0) has no such parameter");
}

TEST_CASE("metadata that is not raspc's is rejected") {
  CHECK(first_line(error_after([](SplitFile& f) { f.header["__metadata__"]["raspc.bos_id"] = 3; })) ==
        "m.safetensors:header:2:31: error: the __metadata__ entry \"raspc.bos_id\" is not a string (safetensors "
        "metadata maps strings to strings)");
  CHECK(first_line(error_after([](SplitFile& f) { f.header["__metadata__"]["raspc.vocab"] = "[\"a\"]"; })) ==
        "m.safetensors:header:2:307: error: raspc.vocab has 1 tokens but the config says vocab_size 2");
  CHECK(first_line(error_after([](SplitFile& f) { f.header["__metadata__"].erase("raspc.config"); })) ==
        "m.safetensors:header:2:1: error: __metadata__ has no \"raspc.config\" entry; this is not a raspc model file");
  CHECK(error_after([](SplitFile& f) {
          json config = json::parse(f.header["__metadata__"]["raspc.config"].get<std::string>());
          config["n_head"] = 3;
          f.header["__metadata__"]["raspc.config"] = config.dump();
        }) == "m.safetensors: error: the model config's n_embd (2) is not a multiple of n_head (3)\n");
  // A config far larger than the file is refused before anything is allocated for it.
  CHECK(error_after([](SplitFile& f) {
          json config = json::parse(f.header["__metadata__"]["raspc.config"].get<std::string>());
          config["n_layer"] = 1000000000;
          f.header["__metadata__"]["raspc.config"] = config.dump();
        }) == "m.safetensors: error: the config needs 96000000032 bytes of weights but the file holds only 128 after "
              "its header; the file is truncated\n");
}
