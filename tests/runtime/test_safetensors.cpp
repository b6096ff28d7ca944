// The model file: round trips, and every malformed file the reader must reject with a message.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>

#include <sys/resource.h>
#include <unistd.h>

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

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("raspc_roundtrip_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "roundtrip.safetensors").string();
  save_model(model, path);
  Model loaded = load_model(path);
  std::filesystem::remove_all(dir);

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

TEST_CASE("a header length near 2^64 is past the end, not wrapped around to a short header") {
  std::string bytes = serialize_model(tiny_model());
  for (int i = 0; i < 8; ++i) bytes[i] = char(0xff);
  bytes[0] = char(0xfc);  // 2^64 - 4: 8 + it wraps to 4
  CHECK(error_of(bytes) == "m.safetensors: error: the header length field says 18446744073709551612 bytes, past the "
                           "end of the file (1000 bytes); the file is truncated or not a safetensors file\n");
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

namespace {

// The error after replacing `from` (its first occurrence) in the tiny model's header text with `to`:
// for what a json value cannot hold (1e999999, a key twice).
std::string error_after_text_edit(const std::string& from, const std::string& to) {
  SplitFile file = split(serialize_model(tiny_model()));
  std::string bytes = safetensors_bytes(file.header, file.data);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  std::string text = bytes.substr(8, n);
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::string edited(8, '\0');
  for (int i = 0; i < 8; ++i) edited[i] = char((text.size() >> (8 * i)) & 0xff);
  return error_of(edited + text + file.data);
}

// The error after setting metadata["output"] of the tiny model to `output`.
std::string error_with_output(const json& output) {
  return first_line(error_after([&](SplitFile& f) {
    f.header["__metadata__"]["raspc.metadata"] = json{{"output", output}}.dump();
  }));
}

}  // namespace

TEST_CASE("a number out of range in the header or its metadata is a located error, not an abort") {
  CHECK(first_line(error_after_text_edit("\"shape\":[2,2]", "\"shape\":[1e999999,2]")) ==
        "m.safetensors:header:6:87: error: the JSON header is malformed: the number 1e999999 is out of range");
  CHECK(first_line(error_after([](SplitFile& f) { f.header["__metadata__"]["raspc.bos_id"] = "1e400"; })) ==
        "m.safetensors:header:2:31: error: the __metadata__ entry \"raspc.bos_id\" is not valid JSON text: the "
        "number 1e400 is out of range");
}

TEST_CASE("ids beyond int are refused, never wrapped into a valid one") {
  // 2^64 - 1 read as int64 is -1, "no BOS"; 2^32 read as int is 0.
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["__metadata__"]["raspc.bos_id"] = "18446744073709551615";
        })) == "m.safetensors:header:2:31: error: raspc.bos_id must be -1 or a token id below vocab_size");
  CHECK(first_line(error_after([](SplitFile& f) { f.header["__metadata__"]["raspc.input_ids"] = "[4294967296]"; })) ==
        "m.safetensors:header:2:220: error: raspc.input_ids must list non-BOS token ids below vocab_size");
  CHECK(error_with_output({{"encoding", "categorical"}, {"token_ids", {4294967296}}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: output.token_ids lists 4294967296, which is not a token "
        "id below vocab_size 2");
  CHECK(error_with_output({{"encoding", "numerical"}, {"dim", 4294967296}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: output.dim must be an integer residual dimension from 0 "
        "to 1, not 4294967296");
  CHECK(first_line(error_after([](SplitFile& f) {
          json config = json::parse(f.header["__metadata__"]["raspc.config"].get<std::string>());
          config["n_head"] = 18446744073709551615ull;
          f.header["__metadata__"]["raspc.config"] = config.dump();
        })) == "m.safetensors: error: the model config's \"n_head\" is 18446744073709551615, outside [1, 1e9]");
}

TEST_CASE("output metadata of the wrong type or empty is refused, naming the field and the type wanted") {
  CHECK(error_with_output({{"encoding", 3}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: output.encoding must be the string \"categorical\" or "
        "\"numerical\", not 3");
  CHECK(error_with_output({{"encoding", "numerical"}, {"dim", "1"}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: output.dim must be an integer residual dimension from 0 "
        "to 1, not \"1\"");
  CHECK(error_with_output({{"encoding", "numerical"}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: output.dim must be an integer residual dimension from 0 "
        "to 1, not missing");
  CHECK(error_with_output({{"encoding", "categorical"}, {"token_ids", json::array()}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: output.token_ids must be a non-empty list of token ids, "
        "not []");
  CHECK(error_with_output({{"encoding", "numerical"}, {"dim", 0}, {"values", {"x"}}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: the model's output metadata lists value \"x\", which is "
        "not a number");
  CHECK(error_with_output("categorical") ==
        "m.safetensors:header:2:243: error: raspc.metadata: \"output\" must be an object, not \"categorical\"");
  CHECK(error_with_output({{"encoding", "numerical"}, {"dim", 1}}).empty());
}

TEST_CASE("metadata fields every command reads are checked at load, not inside a command") {
  auto error_with = [](const json& metadata) {
    return first_line(error_after([&](SplitFile& f) { f.header["__metadata__"]["raspc.metadata"] = metadata.dump(); }));
  };
  // These ended in `internal error: [json.exception.type_error.302]` in every export format.
  CHECK(error_with({{"mode", 5}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: \"mode\" must be \"causal\" or \"bidirectional\", not 5");
  CHECK(error_with({{"mode", "sideways"}}) == "m.safetensors:header:2:243: error: raspc.metadata: \"mode\" must be "
                                              "\"causal\" or \"bidirectional\", not \"sideways\"");
  CHECK(error_with({{"program", 5}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: \"program\" must be a string (the program's source), not "
        "number 5");
  CHECK(error_with({{"heads", "all"}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: \"heads\" must be a list, not \"all\"");
  CHECK(error_with({{"compile", json::array()}}) ==
        "m.safetensors:header:2:243: error: raspc.metadata: \"compile\" must be an object, not []");
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["__metadata__"]["raspc.bos_id"] = "0";
          f.header["__metadata__"]["raspc.input_ids"] = "[1]";
          f.header["__metadata__"]["raspc.metadata"] = json{{"output", {{"token_ids", {1, 0}}}}}.dump();
        })) == "m.safetensors:header:2:243: error: raspc.metadata: output.token_ids lists the BOS token's id 0, which "
               "is never an output");
  CHECK(error_with({{"mode", "causal"}, {"program", "x;"}, {"heads", json::array()}, {"compile", json::object()}}).empty());
}

TEST_CASE("a key twice in the header or in its metadata is refused, at the second one") {
  CHECK(first_line(error_after_text_edit("\"transformer.wpe.weight\":", "\"transformer.wte.weight\":")) ==
        "m.safetensors:header:8:1: error: the JSON header is malformed: the key \"transformer.wte.weight\" appears "
        "twice in one object");
  CHECK(first_line(error_after([](SplitFile& f) {
          f.header["__metadata__"]["raspc.config"] = "{\"n_layer\":1,\"n_layer\":2}";
        })) == "m.safetensors:header:2:51: error: the __metadata__ entry \"raspc.config\" is not valid JSON text: "
               "the key \"n_layer\" appears twice in one object");
  CHECK(first_line(error_after([](SplitFile& f) { f.header["__metadata__"]["raspc.vocab"] = "[\"a\",\"a\"]"; })) ==
        "m.safetensors:header:2:307: error: raspc.vocab lists the token \"a\" twice, so an input could not say which "
        "one it means");
}

TEST_CASE("a model file is checked by its size and header before its data is read") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("raspc_safetensors_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "sparse.safetensors").string();
  save_model(tiny_model(), path);
  const uint64_t size = std::filesystem::file_size(path);
  // 6 GB, sparse: reading it whole would need 6 GB of memory; checking its size needs none. The
  // address space is capped below that, so a reader that reads the file whole fails here.
  std::filesystem::resize_file(path, 6ull << 30);
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reserves terabytes of address space itself
  struct rlimit old_limit;
  REQUIRE(::getrlimit(RLIMIT_AS, &old_limit) == 0);
  struct rlimit capped = old_limit;
  capped.rlim_cur = 4ull << 30;
  REQUIRE(::setrlimit(RLIMIT_AS, &capped) == 0);
#endif
  std::string error;
  try {
    load_model(path);
  } catch (const UserError& e) {
    error = e.what();
  } catch (const std::bad_alloc&) {
    error = "bad_alloc";
  }
#if !defined(__SANITIZE_ADDRESS__)
  ::setrlimit(RLIMIT_AS, &old_limit);
#endif
  CHECK(error == path + ": error: the file has " + std::to_string((6ull << 30) - size) +
                     " bytes after the last tensor; the data section must hold exactly the tensors\n");
  std::filesystem::remove_all(dir);
}
