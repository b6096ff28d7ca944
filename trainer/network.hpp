// The training forward and backward of a raspc GPT-2: the runtime's forward, keeping every
// activation, and the backward pass through it (llm.c style: parameters, gradients, activations
// and their gradients each in one allocation, fixed at construction, no per-step allocation).
//
// Templated on the scalar type: float for training, double for the gradient check.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "runtime/model.hpp"

namespace raspc {

// ParameterViews over a buffer of scalar T (same layout as make_views: parameter_specs order).
template <class T>
struct LayerTensors {
  T *ln_1_w = nullptr, *ln_1_b = nullptr, *attn_w = nullptr, *attn_b = nullptr;
  T *attn_proj_w = nullptr, *attn_proj_b = nullptr, *ln_2_w = nullptr, *ln_2_b = nullptr;
  T *fc_w = nullptr, *fc_b = nullptr, *fc_proj_w = nullptr, *fc_proj_b = nullptr;
};
template <class T>
struct Tensors {
  T* wte = nullptr;  // (V,C)
  T* wpe = nullptr;  // (P,C)
  std::vector<LayerTensors<T>> layers;
  T *ln_f_w = nullptr, *ln_f_b = nullptr;  // (C)
};
// The views make_views() gives over `model.storage`, moved onto `base` (a buffer of the same
// number of elements).
template <class T>
Tensors<T> tensors_like(const Model& model, T* base);

template <class T>
class Network {
 public:
  // Copies the model's parameters; buffers are sized for up to max_batch sequences of
  // n_positions tokens. With threads > 1, forward and backward split the batch into that many
  // chunks of whole sequences, one a thread, each with its own parameter gradients, added in
  // chunk order afterwards: the result is the same whatever the timing, and differs from one
  // thread's by float rounding only (the gradients' sums in another grouping).
  Network(const Model& model, int max_batch, int threads = 1);

  // tokens (B,Tn) padded with any valid id; lengths (B) with 1 <= lengths[b] <= Tn; targets (B,Tn)
  // with -1 where the position does not count (padding, BOS, undefined), may be null (no loss).
  // Returns the mean cross-entropy over counted positions.
  T forward(const int* tokens, const int* lengths, const int* targets, int B, int Tn);
  // Gradients of the last forward's loss, into `grads` (zeroed first).
  void backward();

  // Argmax over `candidates` (token ids) at every position of the last forward: (B,Tn).
  void predict(int* out, const std::vector<int>& candidates) const;
  const T* logits() const { return acts_.logits; }  // (B,Tn,V) of the last forward
  // Attention weights of layer l, (B,H,Tn,Tn) [query][key], of the last forward.
  const T* attention(int layer) const { return acts_.layers[layer].att; }
  int last_batch() const { return B_; }
  int last_time() const { return T_; }

  // Writes the parameters back into a model of the same config (as float).
  void store(Model& model) const;

  // Buffers start on Eigen's alignment: its reductions peel unaligned leading elements, so a buffer's
  // address would otherwise change the summation order, and two runs with the same seed would differ.
  using Buffer = std::vector<T, Eigen::aligned_allocator<T>>;

  const ModelConfig config;
  Buffer params;  // parameter_specs() order
  Buffer grads;   // same layout
  Tensors<T> p, g;        // views into params, grads

 private:
  struct LayerActs {
    T *ln1, *ln1_mean, *ln1_rstd;  // (B,T,C), (B,T), (B,T)
    T* qkv;                        // (B,T,3C)
    T* att;                        // (B,H,T,T)
    T* atty;                       // (B,T,C) heads concatenated
    T* attproj;                    // (B,T,C)
    T* residual2;                  // (B,T,C) after attention
    T *ln2, *ln2_mean, *ln2_rstd;  // (B,T,C), (B,T), (B,T)
    T* fch;                        // (B,T,I) pre-activation
    T* fch_act;                    // (B,T,I)
    T* fch_tanh;                   // (B,T,I) GELU's tanh, kept for the backward
    T* fcproj;                     // (B,T,C)
    T* residual3;                  // (B,T,C) after the MLP
  };
  struct Acts {
    T* encoded;  // (B,T,C)
    std::vector<LayerActs> layers;
    T *lnf, *lnf_mean, *lnf_rstd;  // (B,T,C), (B,T), (B,T)
    T* logits;                     // (B,T,V)
    T* probs;                      // (B,T,V)
  };
  Acts layout(T* base, size_t* total) const;
  int chunk_count(int B) const { return std::max(1, std::min(threads_, B)); }
  // Runs work(chunk, first sequence, end) for every chunk of the batch of B, one a thread.
  template <class Work>
  void for_each_chunk(int B, const Work& work);
  // The forward and backward of sequences [first, first + B) of the last batch; the forward
  // returns their mean loss. `counted` is the whole batch's positions with a target; `g` takes
  // the chunk's parameter gradients; scratch (T*T) is the chunk's own.
  T forward_rows(int first, int B);
  void backward_rows(int first, int B, int counted, Tensors<T>& g, T* scratch);
  // One layer's LayerNorm, or the identity when the config has none.
  void norm_forward(T* out, T* mean, T* rstd, const T* inp, const T* w, const T* b, int N) const;
  void norm_backward(T* dinp, T* dw, T* db, const T* dout, const T* inp, const T* w, const T* mean,
                     const T* rstd, int N) const;

  int max_batch_;
  Buffer act_storage_, dact_storage_;
  Acts acts_, dacts_;
  int threads_ = 1;
  std::vector<std::vector<T>> datt_;  // (T,T) scratch of every chunk
  std::vector<Buffer> chunk_grads_;   // parameter gradients of chunks 1.. (chunk 0 uses grads)
  std::vector<Tensors<T>> chunk_g_;   // views into chunk_grads_
  std::vector<int> tokens_, lengths_, targets_;
  int B_ = 0, T_ = 0;
  bool has_targets_ = false;
};

extern template class Network<float>;
extern template class Network<double>;

// GPT-2's initialisation: weights N(0, 0.02), the projections into the residual stream scaled by
// 1/sqrt(2 n_layer), biases 0, LayerNorm gains 1. Deterministic in `seed`.
void initialise_parameters(Model& model, unsigned long long seed);

}  // namespace raspc
