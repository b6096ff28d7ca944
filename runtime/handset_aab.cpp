#include "runtime/handset_aab.hpp"

#include <algorithm>

namespace raspc {

namespace {
constexpr float kLarge = 1024.0f;  // the post's "Lg": makes the softmax and the logits decisive
constexpr int kPositions = 5, kEmbd = 8, kA = 5, kB = 6, kScratch = 7;
}  // namespace

Model make_handset_aab() {
  Model model;
  ModelConfig& c = model.config;
  c.n_layer = 1;
  c.n_head = 1;
  c.n_embd = kEmbd;
  c.n_inner = 0;
  c.n_positions = kPositions;
  c.vocab_size = 2;
  c.causal = true;
  c.layer_norm = false;
  c.activation = Activation::Gelu;
  model.vocab = {"a", "b"};
  model.bos_id = -1;
  model.residual_labels = {"pos:0", "pos:1", "pos:2", "pos:3", "pos:4", "tokens:a", "tokens:b", "scratch"};
  model.metadata = {{"mode", "causal"},
                    {"output", {{"encoding", "categorical"}}},
                    {"source", "hand-set (aab)* model of \"I made a transformer by hand (no training!)\""}};
  model.allocate();
  const ParameterViews& w = model.w;
  const int C = kEmbd;

  w.wte[0 * C + kA] = 1.0f;  // a
  w.wte[1 * C + kB] = 1.0f;  // b
  for (int p = 0; p < kPositions; ++p) w.wpe[p * C + p] = 1.0f;

  const LayerWeights& layer = w.layers[0];
  float* attn = layer.attn_w;  // (C,3C): row = input dimension, columns q | k | v
  auto set = [&](int row, int column, float value) { attn[row * 3 * C + column] = value; };
  for (int p = 0; p < kPositions; ++p) {
    set(p, p, kLarge);                       // q: the current position ...
    if (p > 0) set(p, p - 1, kLarge);        // ... and the previous one
    set(p, C + p, 1.0f);                     // k: the position itself
  }
  set(kA, 2 * C + kScratch, 1.0f);           // v: a -> +1
  set(kB, 2 * C + kScratch, -1.0f);          //    b -> -1

  float* proj = layer.attn_proj_w;  // (C,C)
  proj[kScratch * C + kA] = -kLarge;
  proj[kScratch * C + kB] = kLarge;
  layer.attn_proj_b[kA] = kLarge;
  return model;
}

AabScore score_handset_aab(Backend& backend, const Model& model) {
  const std::string text = [] {
    std::string s;
    for (int i = 0; i < 10; ++i) s += "aab";
    return s;
  }();
  AabScore score;
  for (int i = 2; i < int(text.size()) - 1; ++i) {
    int first = std::max(0, i - model.config.n_positions);
    std::vector<int> context;
    for (int j = first; j < i; ++j) context.push_back(text[j] == 'a' ? 0 : 1);
    ForwardResult result = backend.forward({context});
    const float* logits = result.logits_at(0, int(context.size()) - 1);
    int predicted = logits[1] > logits[0] ? 1 : 0;
    score.correct += predicted == (text[i] == 'a' ? 0 : 1);
    ++score.total;
  }
  return score;
}

}  // namespace raspc
