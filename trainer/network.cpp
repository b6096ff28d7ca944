#include "trainer/network.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "support/parallel.hpp"
#include "trainer/ops.hpp"

namespace raspc {

template <class T>
Tensors<T> tensors_like(const Model& model, T* base) {
  const float* origin = model.storage.data();
  auto move = [&](const float* p) -> T* { return p ? base + (p - origin) : nullptr; };
  Tensors<T> t;
  t.wte = move(model.w.wte);
  t.wpe = move(model.w.wpe);
  t.ln_f_w = move(model.w.ln_f_w);
  t.ln_f_b = move(model.w.ln_f_b);
  for (const LayerWeights& L : model.w.layers) {
    LayerTensors<T> l;
    l.ln_1_w = move(L.ln_1_w);
    l.ln_1_b = move(L.ln_1_b);
    l.attn_w = move(L.attn_w);
    l.attn_b = move(L.attn_b);
    l.attn_proj_w = move(L.attn_proj_w);
    l.attn_proj_b = move(L.attn_proj_b);
    l.ln_2_w = move(L.ln_2_w);
    l.ln_2_b = move(L.ln_2_b);
    l.fc_w = move(L.fc_w);
    l.fc_b = move(L.fc_b);
    l.fc_proj_w = move(L.fc_proj_w);
    l.fc_proj_b = move(L.fc_proj_b);
    t.layers.push_back(l);
  }
  return t;
}

template <class T>
Network<T>::Network(const Model& model, int max_batch, int threads)
    : config(model.config), max_batch_(max_batch), threads_(std::max(1, std::min(threads, max_batch))) {
  params.assign(model.storage.begin(), model.storage.end());
  grads.assign(params.size(), T(0));
  p = tensors_like(model, params.data());
  g = tensors_like(model, grads.data());
  size_t total = 0;
  layout(nullptr, &total);
  act_storage_.assign(total, T(0));
  dact_storage_.assign(total, T(0));
  acts_ = layout(act_storage_.data(), nullptr);
  dacts_ = layout(dact_storage_.data(), nullptr);
  for (int k = 0; k < threads_; ++k) datt_.emplace_back(size_t(config.n_positions) * config.n_positions, T(0));
  for (int k = 1; k < threads_; ++k) {
    chunk_grads_.emplace_back(params.size(), T(0));
    chunk_g_.push_back(tensors_like(model, chunk_grads_.back().data()));
  }
  const size_t BT = size_t(max_batch) * config.n_positions;
  tokens_.assign(BT, 0);
  targets_.assign(BT, -1);
  lengths_.assign(max_batch, 0);
}

template <class T>
typename Network<T>::Acts Network<T>::layout(T* base, size_t* total) const {
  const size_t BT = size_t(max_batch_) * config.n_positions, C = config.n_embd, I = config.n_inner,
               V = config.vocab_size, H = config.n_head, Tn = config.n_positions;
  size_t offset = 0;
  auto take = [&](size_t n) -> T* {
    T* at = base ? base + offset : nullptr;
    offset += n;
    return at;
  };
  Acts a;
  a.encoded = take(BT * C);
  for (int l = 0; l < config.n_layer; ++l) {
    LayerActs L;
    L.ln1 = take(BT * C);
    L.ln1_mean = take(BT);
    L.ln1_rstd = take(BT);
    L.qkv = take(BT * 3 * C);
    L.att = take(size_t(max_batch_) * H * Tn * Tn);
    L.atty = take(BT * C);
    L.attproj = take(BT * C);
    L.residual2 = take(BT * C);
    L.ln2 = take(BT * C);
    L.ln2_mean = take(BT);
    L.ln2_rstd = take(BT);
    L.fch = take(BT * I);
    L.fch_act = take(BT * I);
    L.fch_tanh = take(config.activation == Activation::Gelu ? BT * I : 0);
    L.fcproj = take(BT * C);
    L.residual3 = take(BT * C);
    a.layers.push_back(L);
  }
  a.lnf = take(BT * C);
  a.lnf_mean = take(BT);
  a.lnf_rstd = take(BT);
  a.logits = take(BT * V);
  a.probs = take(BT * V);
  if (total) *total = offset;
  return a;
}

template <class T>
void Network<T>::norm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, int N) const {
  if (config.layer_norm)
    ops::layernorm_forward(out, mean, rstd, inp, w, b, N, config.n_embd);
  else
    std::copy(inp, inp + size_t(N) * config.n_embd, out);
}

template <class T>
void Network<T>::norm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const T* mean,
                               const T* rstd, int N) const {
  if (config.layer_norm)
    ops::layernorm_backward(dinp, dw, db, dout, inp, w, mean, rstd, N, config.n_embd);
  else
    for (size_t i = 0; i < size_t(N) * config.n_embd; ++i) dinp[i] += dout[i];
}

template <class T>
template <class Work>
void Network<T>::for_each_chunk(int B, const Work& work) {
  raspc::for_each_chunk(B, chunk_count(B), work);
}

template <class T>
T Network<T>::forward(const int* tokens, const int* lengths, const int* targets, int B, int Tn) {
  const int N = B * Tn;
  B_ = B;
  T_ = Tn;
  std::copy(tokens, tokens + N, tokens_.begin());
  std::copy(lengths, lengths + B, lengths_.begin());
  has_targets_ = targets != nullptr;
  if (targets)
    std::copy(targets, targets + N, targets_.begin());
  else
    std::fill(targets_.begin(), targets_.begin() + N, -1);
  std::vector<T> mean_loss(size_t(threads_), T(0));
  std::vector<int> counted(size_t(threads_), 0);
  for_each_chunk(B, [&](int k, int first, int end) {
    mean_loss[size_t(k)] = forward_rows(first, end - first);
    counted[size_t(k)] = ops::counted_targets(targets_.data() + size_t(first) * Tn, (end - first) * Tn);
  });
  const int chunks = chunk_count(B);
  if (chunks == 1) return mean_loss[0];
  T total = 0;
  int all = 0;
  for (int k = 0; k < chunks; ++k) {
    total += mean_loss[size_t(k)] * T(counted[size_t(k)]);
    all += counted[size_t(k)];
  }
  return all ? total / T(all) : T(0);
}

template <class T>
T Network<T>::forward_rows(int first, int B) {
  const int C = config.n_embd, I = config.n_inner, V = config.vocab_size, H = config.n_head;
  const int Tn = T_, N = B * Tn;
  const size_t row = size_t(first) * Tn;  // the chunk's first row
  const size_t heads = size_t(first) * H * Tn * Tn;
  const int* tokens = tokens_.data() + row;
  const int* lengths = lengths_.data() + first;
  ops::encoder_forward(acts_.encoded + row * C, tokens, p.wte, p.wpe, B, Tn, C);
  const T* x = acts_.encoded + row * C;  // (B,T,C) the residual stream
  for (int l = 0; l < config.n_layer; ++l) {
    const LayerTensors<T>& w = p.layers[l];
    const LayerActs& a = acts_.layers[l];
    T *ln1 = a.ln1 + row * C, *qkv = a.qkv + row * 3 * C, *atty = a.atty + row * C, *attproj = a.attproj + row * C;
    T *residual2 = a.residual2 + row * C, *residual3 = a.residual3 + row * C;
    norm_forward(ln1, a.ln1_mean + row, a.ln1_rstd + row, x, w.ln_1_w, w.ln_1_b, N);
    ops::matmul_forward(qkv, ln1, w.attn_w, w.attn_b, N, C, 3 * C);
    ops::attention_forward(atty, a.att + heads, qkv, lengths, config.causal, B, Tn, C, H);
    ops::matmul_forward(attproj, atty, w.attn_proj_w, w.attn_proj_b, N, C, C);
    ops::residual_forward(residual2, x, attproj, size_t(N) * C);
    if (I > 0) {
      T *ln2 = a.ln2 + row * C, *fch = a.fch + row * I, *fch_act = a.fch_act + row * I, *fcproj = a.fcproj + row * C;
      norm_forward(ln2, a.ln2_mean + row, a.ln2_rstd + row, residual2, w.ln_2_w, w.ln_2_b, N);
      ops::matmul_forward(fch, ln2, w.fc_w, w.fc_b, N, C, I);
      if (config.activation == Activation::Gelu)
        ops::gelu_forward(fch_act, a.fch_tanh + row * I, fch, size_t(N) * I);
      else
        ops::relu_forward(fch_act, fch, size_t(N) * I);
      ops::matmul_forward(fcproj, fch_act, w.fc_proj_w, w.fc_proj_b, N, I, C);
      ops::residual_forward(residual3, residual2, fcproj, size_t(N) * C);
    } else {
      std::copy(residual2, residual2 + size_t(N) * C, residual3);
    }
    x = residual3;
  }
  T* lnf = acts_.lnf + row * C;
  norm_forward(lnf, acts_.lnf_mean + row, acts_.lnf_rstd + row, x, p.ln_f_w, p.ln_f_b, N);
  ops::unembed_forward(acts_.logits + row * V, lnf, p.wte, N, C, V);
  return ops::crossentropy_forward(acts_.probs + row * V, acts_.logits + row * V, targets_.data() + row, N, V);
}

template <class T>
void Network<T>::backward() {
  const int B = B_;
  std::fill(grads.begin(), grads.end(), T(0));
  for (Buffer& extra : chunk_grads_) std::fill(extra.begin(), extra.end(), T(0));
  const int counted = ops::counted_targets(targets_.data(), B * T_);
  for_each_chunk(B, [&](int k, int first, int end) {
    backward_rows(first, end - first, counted, k ? chunk_g_[size_t(k - 1)] : g, datt_[size_t(k)].data());
  });
  const int chunks = chunk_count(B);
  // The chunks' parameter gradients, added in chunk order (the same sum whatever the timing).
  for (int k = 1; k < chunks; ++k) {
    const Buffer& extra = chunk_grads_[size_t(k - 1)];
    for (size_t i = 0; i < grads.size(); ++i) grads[i] += extra[i];
  }
}

template <class T>
void Network<T>::backward_rows(int first, int B, int counted, Tensors<T>& g, T* scratch) {
  const int C = config.n_embd, I = config.n_inner, V = config.vocab_size, H = config.n_head;
  const int Tn = T_, N = B * Tn;
  const size_t row = size_t(first) * Tn;
  const size_t heads = size_t(first) * H * Tn * Tn;
  const int* lengths = lengths_.data() + first;
  T* dlogits = dacts_.logits + row * V;
  T *lnf = acts_.lnf + row * C, *dlnf = dacts_.lnf + row * C;
  ops::crossentropy_backward(dlogits, acts_.probs + row * V, targets_.data() + row, N, V, counted);
  ops::unembed_backward(dlnf, g.wte, dlogits, lnf, p.wte, N, C, V);
  const T* last = (config.n_layer ? acts_.layers.back().residual3 : acts_.encoded) + row * C;
  T* dlast = (config.n_layer ? dacts_.layers.back().residual3 : dacts_.encoded) + row * C;
  std::fill_n(dlast, size_t(N) * C, T(0));  // ln_f's backward accumulates into it
  norm_backward(dlast, g.ln_f_w, g.ln_f_b, dlnf, last, p.ln_f_w, acts_.lnf_mean + row, acts_.lnf_rstd + row, N);

  for (int l = config.n_layer - 1; l >= 0; --l) {
    const LayerTensors<T>& w = p.layers[l];
    LayerTensors<T>& dw = g.layers[l];
    const LayerActs& a = acts_.layers[l];
    const LayerActs& d = dacts_.layers[l];
    const T* x = (l ? acts_.layers[l - 1].residual3 : acts_.encoded) + row * C;
    T* dx = (l ? dacts_.layers[l - 1].residual3 : dacts_.encoded) + row * C;
    T *dresidual2 = d.residual2 + row * C, *dresidual3 = d.residual3 + row * C;
    // residual3 = residual2 + fcproj: both receive dresidual3 (the MLP's LayerNorm adds to the first).
    std::copy(dresidual3, dresidual3 + size_t(N) * C, dresidual2);
    if (I > 0) {
      const T* dfcproj = dresidual3;
      T *dfch_act = d.fch_act + row * I, *dfch = d.fch + row * I, *dln2 = d.ln2 + row * C;
      ops::matmul_backward(dfch_act, dw.fc_proj_w, dw.fc_proj_b, dfcproj, a.fch_act + row * I, w.fc_proj_w, N, I, C);
      if (config.activation == Activation::Gelu)
        ops::gelu_backward(dfch, a.fch + row * I, a.fch_tanh + row * I, dfch_act, size_t(N) * I);
      else
        ops::relu_backward(dfch, a.fch + row * I, dfch_act, size_t(N) * I);
      ops::matmul_backward(dln2, dw.fc_w, dw.fc_b, dfch, a.ln2 + row * C, w.fc_w, N, C, I);
      norm_backward(dresidual2, dw.ln_2_w, dw.ln_2_b, dln2, a.residual2 + row * C, w.ln_2_w, a.ln2_mean + row,
                    a.ln2_rstd + row, N);
    }
    // residual2 = x + attproj: both receive dresidual2 (the attention's LayerNorm adds to the first).
    const T* dattproj = dresidual2;
    T *datty = d.atty + row * C, *dqkv = d.qkv + row * 3 * C, *dln1 = d.ln1 + row * C;
    std::copy(dresidual2, dresidual2 + size_t(N) * C, dx);
    ops::matmul_backward(datty, dw.attn_proj_w, dw.attn_proj_b, dattproj, a.atty + row * C, w.attn_proj_w, N, C, C);
    ops::attention_backward(dqkv, scratch, datty, a.qkv + row * 3 * C, a.att + heads, lengths, config.causal, B, Tn,
                            C, H);
    ops::matmul_backward(dln1, dw.attn_w, dw.attn_b, dqkv, a.ln1 + row * C, w.attn_w, N, C, 3 * C);
    norm_backward(dx, dw.ln_1_w, dw.ln_1_b, dln1, x, w.ln_1_w, a.ln1_mean + row, a.ln1_rstd + row, N);
  }
  ops::encoder_backward(g.wte, g.wpe, dacts_.encoded + row * C, tokens_.data() + row, B, Tn, C);
}

template <class T>
void Network<T>::predict(int* out, const std::vector<int>& candidates) const {
  const int V = config.vocab_size;
  for (int i = 0; i < B_ * T_; ++i) {
    const T* l = acts_.logits + size_t(i) * V;
    int best = candidates.empty() ? 0 : candidates[0];
    for (int c : candidates)
      if (l[c] > l[best]) best = c;
    out[i] = best;
  }
}

template <class T>
void Network<T>::store(Model& model) const {
  std::copy(params.begin(), params.end(), model.storage.begin());
}

template Tensors<float> tensors_like(const Model&, float*);
template Tensors<double> tensors_like(const Model&, double*);
template class Network<float>;
template class Network<double>;

void initialise_parameters(Model& model, unsigned long long seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  const float residual_scale = 1.0f / std::sqrt(2.0f * std::max(1, model.config.n_layer));
  for (const ParameterSpec& spec : parameter_specs(model.config)) {
    float* t = model.storage.data() + spec.offset;
    const std::string& n = spec.name;
    auto ends_with = [&](const std::string& s) { return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0; };
    const bool norm = n.find("ln_") != std::string::npos;
    if (norm) {
      std::fill(t, t + spec.size(), ends_with(".weight") ? 1.0f : 0.0f);
    } else if (ends_with(".bias")) {
      std::fill(t, t + spec.size(), 0.0f);
    } else {
      const bool into_residual = ends_with("attn.c_proj.weight") || ends_with("mlp.c_proj.weight");
      for (size_t i = 0; i < spec.size(); ++i) t[i] = normal(rng) * (into_residual ? residual_scale : 1.0f);
    }
  }
}

}  // namespace raspc
