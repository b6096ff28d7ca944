#include "runtime/model.hpp"

namespace raspc {

ModelConfig make_config(int n_layer, int n_head, int n_embd, int n_inner, int n_positions, int vocab_size,
                        bool causal, bool layer_norm, Activation activation) {
  ModelConfig c;
  c.n_layer = n_layer;
  c.n_head = n_head;
  c.n_embd = n_embd;
  c.n_inner = n_inner;
  c.n_positions = n_positions;
  c.vocab_size = vocab_size;
  c.causal = causal;
  c.layer_norm = layer_norm;
  c.activation = activation;
  return c;
}

size_t ParameterSpec::size() const {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  return n;
}

std::vector<ParameterSpec> parameter_specs(const ModelConfig& config) {
  const size_t C = config.n_embd, I = config.n_inner, V = config.vocab_size, P = config.n_positions;
  std::vector<ParameterSpec> specs;
  size_t offset = 0;
  auto add = [&](std::string name, std::vector<size_t> shape) {
    ParameterSpec spec{std::move(name), std::move(shape), offset};
    offset += spec.size();
    specs.push_back(std::move(spec));
  };
  add("transformer.wte.weight", {V, C});
  add("transformer.wpe.weight", {P, C});
  for (int l = 0; l < config.n_layer; ++l) {
    std::string h = "transformer.h." + std::to_string(l) + ".";
    if (config.layer_norm) {
      add(h + "ln_1.weight", {C});
      add(h + "ln_1.bias", {C});
    }
    add(h + "attn.c_attn.weight", {C, 3 * C});
    add(h + "attn.c_attn.bias", {3 * C});
    add(h + "attn.c_proj.weight", {C, C});
    add(h + "attn.c_proj.bias", {C});
    if (config.layer_norm) {
      add(h + "ln_2.weight", {C});
      add(h + "ln_2.bias", {C});
    }
    if (I > 0) {
      add(h + "mlp.c_fc.weight", {C, I});
      add(h + "mlp.c_fc.bias", {I});
      add(h + "mlp.c_proj.weight", {I, C});
      add(h + "mlp.c_proj.bias", {C});
    }
  }
  if (config.layer_norm) {
    add("transformer.ln_f.weight", {C});
    add("transformer.ln_f.bias", {C});
  }
  return specs;
}

size_t parameter_count(const ModelConfig& config) {
  auto specs = parameter_specs(config);
  return specs.empty() ? 0 : specs.back().offset + specs.back().size();
}

ParameterViews make_views(const ModelConfig& config, float* base) {
  ParameterViews v;
  v.layers.resize(config.n_layer);
  for (const ParameterSpec& spec : parameter_specs(config)) {
    float* p = base + spec.offset;
    const std::string& n = spec.name;
    if (n == "transformer.wte.weight") { v.wte = p; continue; }
    if (n == "transformer.wpe.weight") { v.wpe = p; continue; }
    if (n == "transformer.ln_f.weight") { v.ln_f_w = p; continue; }
    if (n == "transformer.ln_f.bias") { v.ln_f_b = p; continue; }
    // "transformer.h.<l>.<rest>"
    size_t dot = n.find('.', 14);
    int l = std::stoi(n.substr(14, dot - 14));
    std::string rest = n.substr(dot + 1);
    LayerWeights& L = v.layers[l];
    if (rest == "ln_1.weight") L.ln_1_w = p;
    else if (rest == "ln_1.bias") L.ln_1_b = p;
    else if (rest == "attn.c_attn.weight") L.attn_w = p;
    else if (rest == "attn.c_attn.bias") L.attn_b = p;
    else if (rest == "attn.c_proj.weight") L.attn_proj_w = p;
    else if (rest == "attn.c_proj.bias") L.attn_proj_b = p;
    else if (rest == "ln_2.weight") L.ln_2_w = p;
    else if (rest == "ln_2.bias") L.ln_2_b = p;
    else if (rest == "mlp.c_fc.weight") L.fc_w = p;
    else if (rest == "mlp.c_fc.bias") L.fc_b = p;
    else if (rest == "mlp.c_proj.weight") L.fc_proj_w = p;
    else if (rest == "mlp.c_proj.bias") L.fc_proj_b = p;
  }
  return v;
}

void Model::allocate() {
  storage.assign(parameter_count(config), 0.0f);
  w = make_views(config, storage.data());
}

int Model::token_id(const std::string& token) const {
  for (size_t i = 0; i < vocab.size(); ++i)
    if (vocab[i] == token) return int(i);
  return -1;
}

}  // namespace raspc
