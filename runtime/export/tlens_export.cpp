// The TransformerLens folder: tlens_config.json (HookedTransformerConfig's fields), weights in TL's
// names and shapes (model.safetensors), and load_tlens.py, which builds the model in TL 4.x
// (TransformerBridge.boot_native) or TL 2.x (HookedTransformer) and loads the weights unprocessed:
// TL's default weight processing (fold_ln, centering) changes what the residual stream holds.
//
// TL splits GPT-2's fused matrices by head:
//   W_Q, W_K, W_V (NH, C, dh) from c_attn's column blocks; b_Q, b_K, b_V (NH, dh)
//   W_O (NH, dh, C) from c_proj's rows; W_U (C, V) = wte^T with b_U = 0 (tied, no output bias)
// Every model raspc runs is expressible: attention_dir covers bidirectional models,
// normalization_type null no-LayerNorm ones, act_fn relu ReLU ones, attn_only MLP-less ones.
#include <string>
#include <vector>

#include "runtime/export/export.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"

namespace raspc {

extern const char* const kTlensLoaderSource;  // runtime/export/load_tlens.py, compiled in

namespace {

using nlohmann::json;

struct TensorWriter {
  json header = json::object();
  std::string data;
  void add(const std::string& name, std::vector<size_t> shape, const std::vector<float>& values) {
    size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    header[name] = json{{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, data.size()}}};
  }
  void add(const std::string& name, std::vector<size_t> shape, const float* values, size_t n) {
    add(name, std::move(shape), std::vector<float>(values, values + n));
  }
};

json tlens_config(const Model& model) {
  const ModelConfig& c = model.config;
  return json{{"model_name", "raspc"},
              {"n_layers", c.n_layer},
              {"d_model", c.n_embd},
              {"n_ctx", c.n_positions},
              {"d_head", c.d_head()},
              {"n_heads", c.n_head},
              {"d_mlp", c.n_inner > 0 ? json(c.n_inner) : json(nullptr)},
              {"d_vocab", c.vocab_size},
              {"d_vocab_out", c.vocab_size},
              {"act_fn", c.activation == Activation::Gelu ? "gelu_new" : "relu"},
              {"normalization_type", c.layer_norm ? json("LN") : json(nullptr)},
              {"attention_dir", c.causal ? "causal" : "bidirectional"},
              {"attn_only", c.n_inner == 0},
              {"positional_embedding_type", "standard"},
              {"eps", 1e-5},
              {"use_attn_scale", true},
              {"original_architecture", "GPT2LMHeadModel"},
              {"default_prepend_bos", false},
              {"tokenizer_name", nullptr}};
}

}  // namespace

void write_tlens_export(const Model& model, const std::string& folder) {
  const ModelConfig& c = model.config;
  const size_t C = c.n_embd, NH = c.n_head, dh = c.d_head(), I = c.n_inner, V = c.vocab_size;
  TensorWriter out;
  out.add("embed.W_E", {V, C}, model.w.wte, V * C);
  out.add("pos_embed.W_pos", {size_t(c.n_positions), C}, model.w.wpe, size_t(c.n_positions) * C);
  for (int l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = model.w.layers[size_t(l)];
    const std::string b = "blocks." + std::to_string(l) + ".";
    if (c.layer_norm) {
      out.add(b + "ln1.w", {C}, L.ln_1_w, C);
      out.add(b + "ln1.b", {C}, L.ln_1_b, C);
    }
    const char* names[3] = {"Q", "K", "V"};
    for (size_t part = 0; part < 3; ++part) {
      std::vector<float> w(NH * C * dh), bias(NH * dh);
      for (size_t h = 0; h < NH; ++h)
        for (size_t j = 0; j < dh; ++j) {
          const size_t column = part * C + h * dh + j;  // c_attn (C, 3C)
          for (size_t r = 0; r < C; ++r) w[(h * C + r) * dh + j] = L.attn_w[r * 3 * C + column];
          bias[h * dh + j] = L.attn_b[column];
        }
      out.add(b + "attn.W_" + names[part], {NH, C, dh}, w);
      out.add(b + "attn.b_" + names[part], {NH, dh}, bias);
    }
    out.add(b + "attn.W_O", {NH, dh, C}, L.attn_proj_w, C * C);  // c_proj (C, C) rows are (head, j)
    out.add(b + "attn.b_O", {C}, L.attn_proj_b, C);
    if (c.layer_norm) {
      out.add(b + "ln2.w", {C}, L.ln_2_w, C);
      out.add(b + "ln2.b", {C}, L.ln_2_b, C);
    }
    if (I > 0) {
      out.add(b + "mlp.W_in", {C, I}, L.fc_w, C * I);
      out.add(b + "mlp.b_in", {I}, L.fc_b, I);
      out.add(b + "mlp.W_out", {I, C}, L.fc_proj_w, I * C);
      out.add(b + "mlp.b_out", {C}, L.fc_proj_b, C);
    }
  }
  if (c.layer_norm) {
    out.add("ln_final.w", {C}, model.w.ln_f_w, C);
    out.add("ln_final.b", {C}, model.w.ln_f_b, C);
  }
  out.add("unembed.W_U", {C, V}, transposed(model.w.wte, V, C));
  out.add("unembed.b_U", {V}, std::vector<float>(V, 0.0f));
  const json meta = export_metadata(model);
  out.header["__metadata__"] = json{{"format", "pt"}, {"raspc", meta.dump()}};
  json file = {{"config", tlens_config(model)}, {"raspc", meta}};
  write_file_atomically(join_path(folder, "model.safetensors"), safetensors_bytes(out.header, out.data));
  write_file_atomically(join_path(folder, "tlens_config.json"), file.dump(2) + "\n");
  write_file_atomically(join_path(folder, "load_tlens.py"), kTlensLoaderSource);
  write_file_atomically(join_path(folder, "tokenizer.json"), tokenizer_json(model).dump(2) + "\n");
  write_file_atomically(join_path(folder, "tokenizer_config.json"), tokenizer_config_json(model).dump(2) + "\n");
}

}  // namespace raspc
