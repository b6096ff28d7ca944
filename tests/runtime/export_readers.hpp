// Readers for the export formats, written from the formats' specifications rather than from the
// writers, so a round trip checks the layout and not only that the writer agrees with itself.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace raspc::testing {

struct Tensor {
  std::vector<uint64_t> shape;  // as the format states it (GGUF: fastest-varying first)
  std::vector<float> values;
};

// Any safetensors file: its header and its F32 tensors by name.
struct SafetensorsFile {
  nlohmann::json metadata;
  std::map<std::string, Tensor> tensors;
};
inline SafetensorsFile read_safetensors(const std::string& bytes) {
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
  const char* data = bytes.data() + 8 + n;
  SafetensorsFile file;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      file.metadata = entry;
      continue;
    }
    if (entry["dtype"] != "F32") throw std::runtime_error(name + " is not F32");
    Tensor t;
    t.shape = entry["shape"].get<std::vector<uint64_t>>();
    uint64_t begin = entry["data_offsets"][0], end = entry["data_offsets"][1];
    t.values.resize((end - begin) / 4);
    std::memcpy(t.values.data(), data + begin, end - begin);
    file.tensors[name] = std::move(t);
  }
  return file;
}

// GGUF v3: key-values (numbers as doubles, strings, arrays as JSON) and F32 tensors.
struct GgufFile {
  uint32_t version = 0;
  nlohmann::json kv = nlohmann::json::object();
  std::map<std::string, Tensor> tensors;
  std::vector<std::string> tensor_order;
};
inline GgufFile read_gguf(const std::string& bytes) {
  size_t at = 0;
  auto take = [&](size_t n) {
    if (at + n > bytes.size()) throw std::runtime_error("GGUF truncated");
    const char* p = bytes.data() + at;
    at += n;
    return p;
  };
  auto u32 = [&] { uint32_t v; std::memcpy(&v, take(4), 4); return v; };
  auto u64 = [&] { uint64_t v; std::memcpy(&v, take(8), 8); return v; };
  auto str = [&] { uint64_t n = u64(); return std::string(take(n), n); };
  std::function<nlohmann::json(uint32_t)> value = [&](uint32_t type) -> nlohmann::json {
    switch (type) {
      case 0: return uint8_t(*take(1));
      case 1: return int8_t(*take(1));
      case 4: return u32();
      case 5: { int32_t v; std::memcpy(&v, take(4), 4); return v; }
      case 6: { float v; std::memcpy(&v, take(4), 4); return v; }
      case 7: return *take(1) != 0;
      case 8: return str();
      case 9: {
        uint32_t element = u32();
        uint64_t n = u64();
        nlohmann::json a = nlohmann::json::array();
        for (uint64_t i = 0; i < n; ++i) a.push_back(value(element));
        return a;
      }
      case 10: return u64();
      default: throw std::runtime_error("GGUF value type " + std::to_string(type) + " not read by this test");
    }
  };
  GgufFile file;
  if (u32() != 0x46554747) throw std::runtime_error("not GGUF");
  file.version = u32();
  uint64_t tensor_count = u64(), kv_count = u64();
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key = str();
    file.kv[key] = value(u32());
  }
  struct Info {
    std::string name;
    std::vector<uint64_t> dims;
    uint64_t offset;
  };
  std::vector<Info> infos;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    Info info;
    info.name = str();
    uint32_t n_dims = u32();
    for (uint32_t d = 0; d < n_dims; ++d) info.dims.push_back(u64());
    if (u32() != 0) throw std::runtime_error(info.name + " is not F32");
    info.offset = u64();
    infos.push_back(info);
  }
  uint64_t alignment = file.kv.value("general.alignment", 32);
  size_t data_start = (at + alignment - 1) / alignment * alignment;
  for (const Info& info : infos) {
    if (info.offset % alignment) throw std::runtime_error(info.name + " is not aligned");
    Tensor t;
    t.shape = info.dims;
    uint64_t n = 1;
    for (uint64_t d : info.dims) n *= d;
    t.values.resize(n);
    if (data_start + info.offset + n * 4 > bytes.size()) throw std::runtime_error(info.name + " past the end");
    std::memcpy(t.values.data(), bytes.data() + data_start + info.offset, n * 4);
    file.tensors[info.name] = std::move(t);
    file.tensor_order.push_back(info.name);
  }
  return file;
}

// llm.c's version-3 checkpoint: the header and the 16 tensors in train_gpt2.c's order.
struct LlmcFile {
  std::vector<int32_t> header;  // 256
  std::map<std::string, Tensor> tensors;
  size_t trailing_bytes = 0;
};
inline LlmcFile read_llmc(const std::string& bytes) {
  LlmcFile file;
  file.header.resize(256);
  std::memcpy(file.header.data(), bytes.data(), 1024);
  const uint64_t maxT = file.header[2], L = file.header[4], C = file.header[6], Vp = file.header[7];
  const std::vector<std::pair<std::string, std::vector<uint64_t>>> shapes = {
      {"wte", {Vp, C}},          {"wpe", {maxT, C}},       {"ln1w", {L, C}},        {"ln1b", {L, C}},
      {"qkvw", {L, 3 * C, C}},   {"qkvb", {L, 3 * C}},     {"attprojw", {L, C, C}}, {"attprojb", {L, C}},
      {"ln2w", {L, C}},          {"ln2b", {L, C}},         {"fcw", {L, 4 * C, C}},  {"fcb", {L, 4 * C}},
      {"fcprojw", {L, C, 4 * C}}, {"fcprojb", {L, C}},     {"lnfw", {C}},           {"lnfb", {C}}};
  size_t at = 1024;
  for (const auto& [name, shape] : shapes) {
    Tensor t;
    t.shape = shape;
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    t.values.resize(n);
    if (at + n * 4 > bytes.size()) throw std::runtime_error("llm.c file truncated at " + name);
    std::memcpy(t.values.data(), bytes.data() + at, n * 4);
    at += n * 4;
    file.tensors[name] = std::move(t);
  }
  file.trailing_bytes = bytes.size() - at;
  return file;
}

}  // namespace raspc::testing
