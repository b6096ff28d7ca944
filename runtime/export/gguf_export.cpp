// One GGUF v3 file that llama.cpp runs as architecture `gpt2`: the hyperparameters its gpt2 graph
// requires, `gpt2.attention.causal` (false runs a bidirectional model exactly), F32 tensors, and the
// vocabulary as a token list with `tokenizer.ggml.model = "none"` (raspc's vocabulary is not BPE:
// callers feed token ids). raspc's metadata is one JSON string under `raspc.metadata`.
//
// Layout (little-endian): "GGUF", version 3, tensor count, key-value count, the key-values, the
// tensor infos (name, dims with the fastest-varying first, type, offset), padding to 32 bytes, the
// tensor data, each tensor aligned to 32. GGUF keeps PyTorch Linear's (out, in) layout, so the
// Conv1D weights (in, out) are transposed, as llama.cpp's own converter does.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/export/export.hpp"
#include "support/atomic_file.hpp"

namespace raspc {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF"
constexpr uint64_t kAlignment = 32;
enum GgufType : uint32_t { kUint32 = 4, kInt32 = 5, kFloat32 = 6, kBool = 7, kString = 8, kArray = 9 };

struct GgufWriter {
  std::string kv;
  uint64_t kv_count = 0;
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;  // fastest-varying first
    std::vector<float> values;
  };
  std::vector<Tensor> tensors;

  template <typename T>
  static void put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  static void put_string(std::string& out, const std::string& s) {
    put<uint64_t>(out, s.size());
    out += s;
  }
  void key(const std::string& name, GgufType type) {
    put_string(kv, name);
    put<uint32_t>(kv, type);
    ++kv_count;
  }
  void add_u32(const std::string& name, uint32_t v) { key(name, kUint32); put(kv, v); }
  void add_f32(const std::string& name, float v) { key(name, kFloat32); put(kv, v); }
  void add_bool(const std::string& name, bool v) { key(name, kBool); put<uint8_t>(kv, v ? 1 : 0); }
  void add_string(const std::string& name, const std::string& v) { key(name, kString); put_string(kv, v); }
  void add_strings(const std::string& name, const std::vector<std::string>& v) {
    key(name, kArray);
    put<uint32_t>(kv, kString);
    put<uint64_t>(kv, v.size());
    for (const std::string& s : v) put_string(kv, s);
  }
  void add_i32s(const std::string& name, const std::vector<int32_t>& v) {
    key(name, kArray);
    put<uint32_t>(kv, kInt32);
    put<uint64_t>(kv, v.size());
    for (int32_t x : v) put(kv, x);
  }
  // A row-major (rows, cols) matrix, or a vector when rows == 0.
  void add_tensor(const std::string& name, size_t rows, size_t cols, std::vector<float> values) {
    std::vector<uint64_t> dims = rows == 0 ? std::vector<uint64_t>{cols} : std::vector<uint64_t>{cols, rows};
    tensors.push_back({name, std::move(dims), std::move(values)});
  }
  void add_vector(const std::string& name, const float* v, size_t n) {
    add_tensor(name, 0, n, std::vector<float>(v, v + n));
  }

  std::string bytes() const {
    std::string out;
    put<uint32_t>(out, kGgufMagic);
    put<uint32_t>(out, 3);
    put<uint64_t>(out, tensors.size());
    put<uint64_t>(out, kv_count);
    out += kv;
    uint64_t offset = 0;
    for (const Tensor& t : tensors) {
      put_string(out, t.name);
      put<uint32_t>(out, uint32_t(t.dims.size()));
      for (uint64_t d : t.dims) put<uint64_t>(out, d);
      put<uint32_t>(out, 0);  // GGML_TYPE_F32
      put<uint64_t>(out, offset);
      offset += (t.values.size() * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
    }
    out.append((kAlignment - out.size() % kAlignment) % kAlignment, '\0');
    for (const Tensor& t : tensors) {
      out.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
      out.append((kAlignment - out.size() % kAlignment) % kAlignment, '\0');
    }
    return out;
  }
};

}  // namespace

void write_gguf_export(const Model& input, const std::string& file) {
  const Model model = input.config.n_inner == 0 ? with_mlp_width(input, 1) : input;  // gpt2's graph needs an MLP
  const ModelConfig& c = model.config;
  const size_t C = c.n_embd, I = c.n_inner, V = c.vocab_size, P = c.n_positions;
  GgufWriter g;
  g.add_string("general.architecture", "gpt2");
  g.add_string("general.name", "raspc");
  g.add_u32("general.alignment", uint32_t(kAlignment));
  g.add_u32("general.file_type", 0);  // all F32
  g.add_u32("gpt2.context_length", uint32_t(P));
  g.add_u32("gpt2.embedding_length", uint32_t(C));
  g.add_u32("gpt2.feed_forward_length", uint32_t(I));
  g.add_u32("gpt2.block_count", uint32_t(c.n_layer));
  g.add_u32("gpt2.attention.head_count", uint32_t(c.n_head));
  g.add_f32("gpt2.attention.layer_norm_epsilon", 1e-5f);
  g.add_bool("gpt2.attention.causal", c.causal);
  g.add_u32("gpt2.vocab_size", uint32_t(V));
  g.add_string("tokenizer.ggml.model", "none");
  g.add_strings("tokenizer.ggml.tokens", model.vocab);
  std::vector<int32_t> token_types(V, 1);  // 1: normal, 3: control
  if (model.bos_id >= 0) {
    token_types[size_t(model.bos_id)] = 3;
    g.add_u32("tokenizer.ggml.bos_token_id", uint32_t(model.bos_id));
  }
  g.add_i32s("tokenizer.ggml.token_type", token_types);
  g.add_string("raspc.metadata", export_metadata(model).dump());

  g.add_tensor("token_embd.weight", V, C, std::vector<float>(model.w.wte, model.w.wte + V * C));
  g.add_tensor("position_embd.weight", P, C, std::vector<float>(model.w.wpe, model.w.wpe + P * C));
  for (int l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = model.w.layers[size_t(l)];
    const std::string b = "blk." + std::to_string(l) + ".";
    g.add_vector(b + "attn_norm.weight", L.ln_1_w, C);
    g.add_vector(b + "attn_norm.bias", L.ln_1_b, C);
    g.add_tensor(b + "attn_qkv.weight", 3 * C, C, transposed(L.attn_w, C, 3 * C));
    g.add_vector(b + "attn_qkv.bias", L.attn_b, 3 * C);
    g.add_tensor(b + "attn_output.weight", C, C, transposed(L.attn_proj_w, C, C));
    g.add_vector(b + "attn_output.bias", L.attn_proj_b, C);
    g.add_vector(b + "ffn_norm.weight", L.ln_2_w, C);
    g.add_vector(b + "ffn_norm.bias", L.ln_2_b, C);
    g.add_tensor(b + "ffn_up.weight", I, C, transposed(L.fc_w, C, I));
    g.add_vector(b + "ffn_up.bias", L.fc_b, I);
    g.add_tensor(b + "ffn_down.weight", C, I, transposed(L.fc_proj_w, I, C));
    g.add_vector(b + "ffn_down.bias", L.fc_proj_b, C);
  }
  g.add_vector("output_norm.weight", model.w.ln_f_w, C);
  g.add_vector("output_norm.bias", model.w.ln_f_b, C);
  // Tied: llama.cpp's converter writes the unembedding as a copy of the embedding.
  g.add_tensor("output.weight", V, C, std::vector<float>(model.w.wte, model.w.wte + V * C));
  write_file_atomically(file, g.bytes());
}

}  // namespace raspc
