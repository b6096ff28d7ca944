#include "runtime/safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "runtime/model_output.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

namespace raspc {

namespace {

using nlohmann::json;

constexpr size_t kHeaderLengthBytes = 8;

// The largest header we accept: Hugging Face's own limit (100 MB) keeps a corrupt length field
// from becoming a huge allocation.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

std::string dump_compact(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// A JSON text that cannot be read as one meaning: where (a byte offset in the text) and why.
struct JsonProblem {
  size_t offset;
  std::string message;
};

struct DuplicateKey {
  std::string key;
};

// json::parse, refusing what nlohmann would take silently or throw as something other than a
// parse_error: a key twice in one object (nlohmann keeps the last, so a file could say two
// things), and a number out of range (1e999999).
json parse_json_strictly(const std::string& text) {
  std::vector<std::vector<std::string>> keys_of_open_objects;
  auto note_key = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys_of_open_objects.emplace_back();
    if (event == json::parse_event_t::object_end && !keys_of_open_objects.empty()) keys_of_open_objects.pop_back();
    if (event == json::parse_event_t::key && !keys_of_open_objects.empty()) {
      std::vector<std::string>& keys = keys_of_open_objects.back();
      const std::string& key = parsed.get_ref<const std::string&>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) throw DuplicateKey{key};
      keys.push_back(key);
    }
    return true;
  };
  try {
    return json::parse(text, note_key);
  } catch (const DuplicateKey& d) {
    // The second "key": the one that would silently have won.
    const std::string quoted = json(d.key).dump();
    size_t first = text.find(quoted);
    size_t second = first == std::string::npos ? std::string::npos : text.find(quoted, first + 1);
    throw JsonProblem{second == std::string::npos ? 0 : second, "the key " + quoted + " appears twice in one object"};
  } catch (const json::parse_error& e) {
    // e.byte is 1-based and points one past the last character read.
    std::string what = e.what();
    size_t colon = what.find(": ");
    throw JsonProblem{e.byte == 0 ? 0 : e.byte - 1, colon == std::string::npos ? what : what.substr(colon + 2)};
  } catch (const json::out_of_range& e) {
    // "number overflow parsing '1e999999'": point at the number.
    std::string what = e.what();
    size_t open = what.find('\''), close = what.rfind('\'');
    std::string number = open < close ? what.substr(open + 1, close - open - 1) : "";
    size_t at = number.empty() ? std::string::npos : text.find(number);
    throw JsonProblem{at == std::string::npos ? 0 : at,
                      "the number " + (number.empty() ? std::string("here") : number) + " is out of range"};
  } catch (const json::exception& e) {
    throw JsonProblem{0, e.what()};
  }
}

// A JSON integer in [minimum, maximum], which nlohmann may hold as signed or unsigned.
bool integer_in(const json& j, int64_t minimum, int64_t maximum, int64_t& value) {
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > uint64_t(maximum)) return false;
    value = int64_t(j.get<uint64_t>());
  } else if (j.is_number_integer()) {
    value = j.get<int64_t>();
  } else {
    return false;
  }
  return value >= minimum && value <= maximum;
}

}  // namespace

json config_to_json(const ModelConfig& c) {
  return json{{"n_layer", c.n_layer},       {"n_head", c.n_head},
              {"n_embd", c.n_embd},         {"n_inner", c.n_inner},
              {"n_positions", c.n_positions}, {"vocab_size", c.vocab_size},
              {"causal", c.causal},         {"layer_norm", c.layer_norm},
              {"activation", c.activation == Activation::Gelu ? "gelu" : "relu"}};
}

ModelConfig config_from_json(const json& j, const std::string& origin) {
  auto fail = [&](const std::string& message) { fail_file(origin, message); };
  if (!j.is_object()) fail("the model config is not a JSON object");
  auto integer = [&](const char* key, int minimum) {
    if (!j.contains(key) || !j[key].is_number_integer())
      fail(std::string("the model config has no integer \"") + key + "\"");
    int64_t v = 0;
    if (!integer_in(j[key], minimum, 1'000'000'000, v))
      fail(std::string("the model config's \"") + key + "\" is " + j[key].dump() + ", outside [" +
           std::to_string(minimum) + ", 1e9]");
    return int(v);
  };
  auto boolean = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_boolean())
      fail(std::string("the model config has no boolean \"") + key + "\"");
    return j[key].get<bool>();
  };
  ModelConfig c;
  c.n_layer = integer("n_layer", 0);
  c.n_head = integer("n_head", 1);
  c.n_embd = integer("n_embd", 1);
  c.n_inner = integer("n_inner", 0);
  c.n_positions = integer("n_positions", 1);
  c.vocab_size = integer("vocab_size", 1);
  c.causal = boolean("causal");
  c.layer_norm = boolean("layer_norm");
  if (!j.contains("activation") || !j["activation"].is_string())
    fail("the model config has no string \"activation\"");
  std::string activation = j["activation"].get<std::string>();
  if (activation == "gelu") c.activation = Activation::Gelu;
  else if (activation == "relu") c.activation = Activation::Relu;
  else fail("the model config's \"activation\" is \"" + activation + "\"; it must be \"gelu\" or \"relu\"");
  if (c.n_embd % c.n_head != 0)
    fail("the model config's n_embd (" + std::to_string(c.n_embd) + ") is not a multiple of n_head (" +
         std::to_string(c.n_head) + ")");
  return c;
}

std::string safetensors_bytes(const json& header, std::string_view data) {
  std::string text = "{";
  bool first = true;
  auto add = [&](const std::string& key, const json& value) {
    text += first ? "\n" : ",\n";
    first = false;
    text += json(key).dump() + ":" + dump_compact(value);
  };
  if (header.contains("__metadata__")) add("__metadata__", header["__metadata__"]);
  for (const auto& [key, value] : header.items())
    if (key != "__metadata__") add(key, value);
  text += "\n}";
  text.append((8 - text.size() % 8) % 8, ' ');

  std::string bytes(kHeaderLengthBytes, '\0');
  uint64_t n = text.size();
  for (size_t i = 0; i < 8; ++i) bytes[i] = char((n >> (8 * i)) & 0xff);
  bytes += text;
  bytes += data;
  return bytes;
}

std::string serialize_model(const Model& model) {
  const std::vector<ParameterSpec> specs = parameter_specs(model.config);
  json header = json::object();
  header["__metadata__"] = json{
      {"format", "pt"},
      {"raspc.config", dump_compact(config_to_json(model.config))},
      {"raspc.vocab", dump_compact(json(model.vocab))},
      {"raspc.bos_id", std::to_string(model.bos_id)},
      {"raspc.input_ids", dump_compact(json(model.input_ids))},
      {"raspc.residual_labels", dump_compact(json(model.residual_labels))},
      {"raspc.metadata", dump_compact(model.metadata)},
  };
  for (const ParameterSpec& spec : specs) {
    size_t begin = spec.offset * sizeof(float);
    header[spec.name] = json{{"dtype", "F32"}, {"shape", spec.shape},
                             {"data_offsets", {begin, begin + spec.size() * sizeof(float)}}};
  }
  std::string data(model.storage.size() * sizeof(float), '\0');
  if (!data.empty()) std::memcpy(data.data(), model.storage.data(), data.size());
  return safetensors_bytes(header, data);
}

void save_model(const Model& model, const std::string& path) { write_file_atomically(path, serialize_model(model)); }

namespace {

// Parsing state: the file name, the header as a SourceFile for caret errors.
struct HeaderReader {
  std::string file_name;
  std::shared_ptr<SourceFile> header;

  // The span of `"key"` in the header text (the first occurrence), so errors about one tensor or
  // metadata entry point at it; the whole header when the key cannot be found.
  Span span_of_key(const std::string& key) const {
    std::string quoted = json(key).dump();
    size_t at = header->text.find("\n" + quoted + ":");  // a top-level entry, as raspc writes them
    at = at == std::string::npos ? header->text.find(quoted) : at + 1;
    if (at == std::string::npos) return Span{header, 0, uint32_t(std::min<size_t>(header->text.size(), 1))};
    return Span{header, uint32_t(at), uint32_t(at + quoted.size())};
  }
  [[noreturn]] void fail_key(const std::string& key, const std::string& message) const {
    fail_at(span_of_key(key), message);
  }
};

// What is wrong with raspc.metadata's other fields, in one sentence ("" when nothing): every reader
// (export, view, inspect, run) takes them to have these types, so a file that breaks one is
// refused here instead of failing inside a command.
std::string metadata_fields_problem(const json& metadata, int bos_id) {
  if (metadata.contains("mode")) {
    const json& mode = metadata["mode"];
    if (!mode.is_string() || (mode != "causal" && mode != "bidirectional"))
      return "\"mode\" must be \"causal\" or \"bidirectional\", not " + mode.dump();
  }
  for (const char* key : {"program", "source"})
    if (metadata.contains(key) && !metadata[key].is_string())
      return std::string("\"") + key + "\" must be a string (the program's source), not " +
             metadata[key].type_name() + " " + metadata[key].dump().substr(0, 40);
  for (const char* key : {"mlp_units", "heads"})
    if (metadata.contains(key) && !metadata[key].is_array())
      return std::string("\"") + key + "\" must be a list, not " + metadata[key].dump().substr(0, 40);
  for (const char* key : {"compile", "trainer"})
    if (metadata.contains(key) && !metadata[key].is_object())
      return std::string("\"") + key + "\" must be an object, not " + metadata[key].dump().substr(0, 40);
  if (bos_id >= 0 && metadata.contains("output") && metadata["output"].contains("token_ids"))
    for (const json& id : metadata["output"]["token_ids"])
      if (id == bos_id)
        return "output.token_ids lists the BOS token's id " + std::to_string(bos_id) + ", which is never an output";
  return "";
}

json parse_metadata_json(const HeaderReader& reader, const json& metadata, const std::string& key) {
  if (!metadata.contains(key))
    reader.fail_key("__metadata__", "__metadata__ has no \"" + key + "\" entry; this is not a raspc model file");
  try {
    return parse_json_strictly(metadata[key].get<std::string>());
  } catch (const JsonProblem& problem) {
    reader.fail_key(key, "the __metadata__ entry \"" + key + "\" is not valid JSON text: " + problem.message);
  }
}

uint64_t header_length_of(std::string_view bytes) {
  uint64_t n = 0;
  for (size_t i = 0; i < kHeaderLengthBytes; ++i) n |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  return n;
}

// Copies `count` bytes of the data section, from `offset` (relative to its start), to `destination`.
using DataReader = std::function<void(uint64_t offset, char* destination, uint64_t count)>;

// Everything parse_model checks, from the file's first 8 + header-length bytes (fewer when the
// file is shorter) and its size: the weights are read last, through read_data, once the header
// has described them and the file's size matches, so a corrupt file is never read whole.
Model parse_model_parts(std::string_view prefix, uint64_t file_size, const std::string& name,
                        const DataReader& read_data);

}  // namespace

Model parse_model(std::string_view bytes, const std::string& name) {
  // The length field and the header it describes; just the field when the length is past the end
  // (8 + a length near 2^64 would wrap around).
  uint64_t prefix = std::min<uint64_t>(bytes.size(), kHeaderLengthBytes);
  if (prefix == kHeaderLengthBytes && header_length_of(bytes) <= bytes.size() - kHeaderLengthBytes)
    prefix += header_length_of(bytes);
  return parse_model_parts(bytes.substr(0, prefix), bytes.size(), name,
                           [&](uint64_t offset, char* destination, uint64_t count) {
                             std::memcpy(destination, bytes.data() + prefix + offset, count);
                           });
}

namespace {

Model parse_model_parts(std::string_view prefix, uint64_t file_size, const std::string& name,
                        const DataReader& read_data) {
  if (file_size < kHeaderLengthBytes)
    fail_file(name, "the file is truncated: it has " + std::to_string(file_size) +
                        " bytes, fewer than the 8-byte header length of a safetensors file");
  const uint64_t header_length = header_length_of(prefix);
  if (header_length > kMaxHeaderBytes && header_length <= file_size - kHeaderLengthBytes)
    fail_file(name, "the header length field says " + std::to_string(header_length) +
                        " bytes, more than the 100 MB safetensors allows; this is not a safetensors file");
  if (header_length > file_size - kHeaderLengthBytes)
    fail_file(name, "the header length field says " + std::to_string(header_length) +
                        " bytes, past the end of the file (" + std::to_string(file_size) +
                        " bytes); the file is truncated or not a safetensors file");

  HeaderReader reader;
  reader.file_name = name;
  reader.header = std::make_shared<SourceFile>();
  reader.header->name = name + ":header";
  reader.header->text = std::string(prefix.substr(kHeaderLengthBytes, header_length));
  const uint64_t data_size = file_size - kHeaderLengthBytes - header_length;

  json header;
  try {
    header = parse_json_strictly(reader.header->text);
  } catch (const JsonProblem& problem) {
    uint32_t at = uint32_t(std::min<size_t>(problem.offset, reader.header->text.size()));
    fail_at(Span{reader.header, at, at + 1}, "the JSON header is malformed: " + problem.message);
  }
  if (!header.is_object()) fail_at(Span{reader.header, 0, 1}, "the JSON header is not an object");

  if (!header.contains("__metadata__") || !header["__metadata__"].is_object())
    fail_at(Span{reader.header, 0, 1}, "the header has no __metadata__ object; this is not a raspc model file");
  const json& metadata = header["__metadata__"];
  for (const auto& [key, value] : metadata.items())
    if (!value.is_string())
      reader.fail_key(key, "the __metadata__ entry \"" + key +
                               "\" is not a string (safetensors metadata maps strings to strings)");

  Model model;
  model.config = config_from_json(parse_metadata_json(reader, metadata, "raspc.config"), name);
  const ModelConfig& config = model.config;

  json vocab = parse_metadata_json(reader, metadata, "raspc.vocab");
  if (!vocab.is_array() || !std::all_of(vocab.begin(), vocab.end(), [](const json& t) { return t.is_string(); }))
    reader.fail_key("raspc.vocab", "raspc.vocab must be a JSON list of token strings");
  model.vocab = vocab.get<std::vector<std::string>>();
  for (size_t i = 0; i < model.vocab.size(); ++i)
    if (std::find(model.vocab.begin(), model.vocab.begin() + i, model.vocab[i]) != model.vocab.begin() + i)
      reader.fail_key("raspc.vocab", "raspc.vocab lists the token " + json(model.vocab[i]).dump() +
                                         " twice, so an input could not say which one it means");
  if (int(model.vocab.size()) != config.vocab_size)
    reader.fail_key("raspc.vocab", "raspc.vocab has " + std::to_string(model.vocab.size()) +
                                       " tokens but the config says vocab_size " + std::to_string(config.vocab_size));

  json bos = parse_metadata_json(reader, metadata, "raspc.bos_id");
  int64_t bos_id = 0;
  if (!integer_in(bos, -1, config.vocab_size - 1, bos_id))
    reader.fail_key("raspc.bos_id", "raspc.bos_id must be -1 or a token id below vocab_size");
  model.bos_id = int(bos_id);

  json input_ids = parse_metadata_json(reader, metadata, "raspc.input_ids");
  if (!input_ids.is_array())
    reader.fail_key("raspc.input_ids", "raspc.input_ids must be a JSON list of token ids");
  for (const json& id : input_ids) {
    int64_t value = 0;
    if (!integer_in(id, 0, config.vocab_size - 1, value) || value == model.bos_id)
      reader.fail_key("raspc.input_ids", "raspc.input_ids must list non-BOS token ids below vocab_size");
    model.input_ids.push_back(int(value));
  }

  json labels = parse_metadata_json(reader, metadata, "raspc.residual_labels");
  if (!labels.is_array() || !std::all_of(labels.begin(), labels.end(), [](const json& t) { return t.is_string(); }))
    reader.fail_key("raspc.residual_labels", "raspc.residual_labels must be a JSON list of strings");
  model.residual_labels = labels.get<std::vector<std::string>>();
  if (!model.residual_labels.empty() && int(model.residual_labels.size()) != config.n_embd)
    reader.fail_key("raspc.residual_labels",
                    "raspc.residual_labels has " + std::to_string(model.residual_labels.size()) +
                        " labels but the config says n_embd " + std::to_string(config.n_embd));

  if (metadata.contains("raspc.metadata")) {
    model.metadata = parse_metadata_json(reader, metadata, "raspc.metadata");
    if (!model.metadata.is_object()) reader.fail_key("raspc.metadata", "raspc.metadata must be a JSON object");
    std::string problem = output_metadata_problem(model.metadata, config);
    if (problem.empty()) problem = metadata_fields_problem(model.metadata, model.bos_id);
    if (!problem.empty()) reader.fail_key("raspc.metadata", "raspc.metadata: " + problem);
  }

  // A config whose weights cannot be in the file is refused before anything is allocated for it.
  {
    const long double C = config.n_embd, I = config.n_inner, LN = config.layer_norm ? 1 : 0;
    const long double per_layer = 4 * LN * C + 3 * C * C + 3 * C + C * C + C + (I > 0 ? 2 * C * I + I + C : 0);
    const long double floats = (long double)config.vocab_size * C + (long double)config.n_positions * C +
                               config.n_layer * per_layer + 2 * LN * C;
    if (floats * sizeof(float) > (long double)data_size)
      fail_file(name, "the config needs " + std::to_string((unsigned long long)(floats * sizeof(float))) +
                          " bytes of weights but the file holds only " + std::to_string(data_size) +
                          " after its header; the file is truncated");
  }

  // Tensors: every expected one present with dtype F32 and the config's shape; nothing else.
  model.allocate();
  const std::vector<ParameterSpec> specs = parameter_specs(config);
  std::map<std::string, const ParameterSpec*> expected;
  for (const ParameterSpec& spec : specs) expected[spec.name] = &spec;
  struct Placed {
    const ParameterSpec* spec;
    uint64_t begin, end;
  };
  std::vector<Placed> placed;
  for (const auto& [key, entry] : header.items()) {
    if (key == "__metadata__") continue;
    auto it = expected.find(key);
    if (it == expected.end())
      reader.fail_key(key, "unknown tensor \"" + key + "\": a GPT-2 with this config (n_layer " +
                               std::to_string(config.n_layer) + ", layer_norm " + (config.layer_norm ? "on" : "off") +
                               ", n_inner " + std::to_string(config.n_inner) + ") has no such parameter");
    const ParameterSpec& spec = *it->second;
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      reader.fail_key(key, "tensor \"" + key + "\" needs \"dtype\", \"shape\" and \"data_offsets\"");
    if (!entry["dtype"].is_string() || entry["dtype"].get<std::string>() != "F32")
      reader.fail_key(key, "tensor \"" + key + "\" has dtype " + entry["dtype"].dump() +
                               "; raspc models store every tensor as F32");
    const json& shape = entry["shape"];
    bool shape_ok = shape.is_array() && shape.size() == spec.shape.size();
    for (size_t d = 0; shape_ok && d < spec.shape.size(); ++d)
      shape_ok = shape[d].is_number_unsigned() && shape[d].get<uint64_t>() == spec.shape[d];
    if (!shape_ok)
      reader.fail_key(key, "tensor \"" + key + "\" has shape " + shape.dump() + " but the config needs " +
                               json(spec.shape).dump());
    const json& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned() || offsets[0].get<uint64_t>() > offsets[1].get<uint64_t>())
      reader.fail_key(key, "tensor \"" + key + "\" needs data_offsets [begin, end] with begin <= end");
    uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (end - begin != spec.size() * sizeof(float))
      reader.fail_key(key, "tensor \"" + key + "\" has data_offsets spanning " + std::to_string(end - begin) +
                               " bytes but its shape needs " + std::to_string(spec.size() * sizeof(float)));
    if (end > data_size)
      reader.fail_key(key, "tensor \"" + key + "\" has data_offsets " + offsets.dump() +
                               " pointing past the end of the data (" + std::to_string(data_size) +
                               " bytes); the file is truncated");
    placed.push_back({&spec, begin, end});
    expected.erase(it);
  }
  if (!expected.empty()) {
    // Report the first missing tensor in storage order.
    for (const ParameterSpec& spec : specs)
      if (expected.count(spec.name))
        fail_at(Span{reader.header, 0, 1}, "tensor \"" + spec.name + "\" is missing; the config needs it");
  }

  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
  uint64_t cursor = 0;
  for (const Placed& p : placed) {
    const std::string where =
        " (starts at byte " + std::to_string(p.begin) + ", the previous one ends at " + std::to_string(cursor) + ")";
    if (p.begin < cursor)
      reader.fail_key(p.spec->name, "tensor \"" + p.spec->name + "\" overlaps the tensor before it in the data" + where);
    if (p.begin > cursor)
      reader.fail_key(p.spec->name, "tensor \"" + p.spec->name + "\" leaves a gap in the data" + where);
    cursor = p.end;
  }
  if (cursor != data_size)
    fail_file(name, "the file has " + std::to_string(data_size - cursor) +
                        " bytes after the last tensor; the data section must hold exactly the tensors");

  for (const Placed& p : placed) {
    float* dst = model.storage.data() + p.spec->offset;
    read_data(p.begin, reinterpret_cast<char*>(dst), p.end - p.begin);
    for (size_t i = 0; i < p.spec->size(); ++i)
      if (!std::isfinite(dst[i]))
        reader.fail_key(p.spec->name, "tensor \"" + p.spec->name + "\" has " +
                                          (std::isnan(dst[i]) ? "a NaN" : "an infinite") +
                                          " value at flat index " + std::to_string(i) + "; weights must be finite");
  }
  return model;
}

}  // namespace

Model load_model(const std::string& path) {
  InputFile file(path);
  // The length field, then the header it describes, then (in parse_model_parts) the data: a
  // wrong length is refused before anything more is read.
  std::string prefix(size_t(std::min<uint64_t>(file.size(), kHeaderLengthBytes)), '\0');
  file.read_at(0, prefix.data(), prefix.size());
  if (prefix.size() == kHeaderLengthBytes) {
    const uint64_t header_length = header_length_of(prefix);
    if (header_length <= kMaxHeaderBytes && header_length <= file.size() - kHeaderLengthBytes) {
      prefix.resize(size_t(kHeaderLengthBytes + header_length));
      file.read_at(kHeaderLengthBytes, prefix.data() + kHeaderLengthBytes, header_length);
    }
  }
  return parse_model_parts(prefix, file.size(), path, [&](uint64_t offset, char* destination, uint64_t count) {
    file.read_at(prefix.size() + offset, destination, count);
  });
}

}  // namespace raspc
