// The CUDA backend and its KV-cached decoder: runtime/cpu_backend.cpp's forward, op for op, on
// the device. Weights are uploaded once per backend; a forward's activations live in one device
// allocation with named views (grown when a larger batch comes, never per call otherwise); a
// decoder allocates everything at construction.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/cuda/check.cuh"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/cuda/kernels.cuh"
#include "runtime/cuda_loader.hpp"
#include "support/diagnostics.hpp"

namespace raspc {
namespace {

using cuda::CublasHandle;
using cuda::DeviceBuffer;
using cuda::PinnedBuffer;
using cuda::Stream;

// Offsets of named views in one allocation; each view starts on a 256-byte boundary (what
// cudaMalloc guarantees for the base, and what coalesced loads like).
class Layout {
 public:
  template <typename T>
  size_t add(size_t count) {
    size_t offset = bytes_;
    bytes_ += (count * sizeof(T) + 255) / 256 * 256;
    return offset;
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

template <typename T>
T* view(const DeviceBuffer& buffer, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(buffer.data()) + offset);
}

// The weights on the device, and the stream and cuBLAS handle every op runs on. Shared by a
// backend and its decoders, so a decoder may outlive its backend. Members are destroyed in
// reverse order: the weights are freed before the handle, the handle before its stream.
struct DeviceModel {
  const Model& model;
  Stream stream;
  CublasHandle cublas;
  DeviceBuffer weights;
  ParameterViews w;  // device pointers into weights, laid out as parameter_specs()

  explicit DeviceModel(const Model& m) : model(m), cublas(stream.get()) {
    const size_t count = parameter_count(m.config);
    if (m.storage.size() != count)
      throw std::logic_error("Model::storage holds " + std::to_string(m.storage.size()) + " floats, its config needs " +
                             std::to_string(count));
    weights.resize(count * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(weights.data(), m.storage.data(), count * sizeof(float), cudaMemcpyHostToDevice,
                               stream.get()));
    stream.synchronize();
    w = make_views(m.config, static_cast<float*>(weights.data()));
  }
};

class CudaDecoder : public Decoder {
 public:
  explicit CudaDecoder(std::shared_ptr<DeviceModel> device);
  void reset() override { position_ = 0; }
  const float* step(int token) override;
  int position() const override { return position_; }

 private:
  std::shared_ptr<DeviceModel> device_;
  int position_ = 0;
  DeviceBuffer buffer_;           // the one allocation; the views below point into it
  float* x_ = nullptr;            // (C) residual stream of the current token
  float* ln_ = nullptr;           // (C)
  float* qkv_ = nullptr;          // (3C) the current token's query | key | value
  float* att_out_ = nullptr;      // (C)
  float* delta_ = nullptr;        // (C) a sub-layer's output before the residual add
  float* fc_ = nullptr;           // (I)
  float* scores_ = nullptr;       // (NH,P) the current query's attention
  float* logits_ = nullptr;       // (V)
  int* one_ = nullptr;            // (1) = 1: the lengths of a batch of one token
  std::vector<float*> k_cache_;   // per layer (P,C): every fed token's key
  std::vector<float*> v_cache_;   // per layer (P,C): every fed token's value
  PinnedBuffer host_logits_;      // (V) what step() returns
};

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(const Model& model) : device_(std::make_shared<DeviceModel>(model)) {}
  ForwardResult forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options = {}) override;
  std::unique_ptr<Decoder> decoder() override;
  std::string name() const override { return "cuda"; }

 private:
  std::shared_ptr<DeviceModel> device_;
  DeviceBuffer activations_;  // grown to the largest batch seen; views laid out per call
};

ForwardResult CudaBackend::forward(const std::vector<std::vector<int>>& batch, const ForwardOptions& options) {
  const ModelConfig& cfg = device_->model.config;
  const ParameterViews& w = device_->w;
  const int B = int(batch.size()), C = cfg.n_embd, NH = cfg.n_head, I = cfg.n_inner, V = cfg.vocab_size;
  const int L = cfg.n_layer, stages = 2 * L + 1;
  cudaStream_t stream = device_->stream.get();
  cublasHandle_t cublas = device_->cublas.get();

  if (options.capture_scores)
    fail_file("--device", "the attention scores before the softmax are captured on the CPU only (device \"cpu\")");
  if (options.capture_outputs || (options.interventions && !options.interventions->empty()))
    fail_file("--device", "interventions and the heads' and MLPs' own outputs run on the CPU only (device \"cpu\")");
  ForwardResult result = begin_forward(cfg, batch);
  const int T = result.time;
  if (B == 0 || T == 0) return result;
  const size_t N = size_t(B) * T;

  Layout layout;
  const size_t tokens_at = layout.add<int>(N);                     // (B,T), 0 where padded
  const size_t lengths_at = layout.add<int>(B);                    // (B)
  const size_t x_at = layout.add<float>(N * C);                    // (B,T,C) the residual stream
  const size_t ln_at = layout.add<float>(N * C);                   // (B,T,C) LayerNorm output
  const size_t qkv_at = layout.add<float>(N * 3 * C);              // (B,T,3C)
  const size_t q_at = layout.add<float>(N * C);                    // (B,NH,T,d), then the heads' outputs
  const size_t k_at = layout.add<float>(N * C);                    // (B,NH,T,d)
  const size_t v_at = layout.add<float>(N * C);                    // (B,NH,T,d)
  const size_t att_out_at = layout.add<float>(N * C);              // (B,T,C)
  const size_t delta_at = layout.add<float>(N * C);                // (B,T,C) a sub-layer's output
  const size_t fc_at = layout.add<float>(N * I);                   // (B,T,I)
  const size_t pattern_at = layout.add<float>(size_t(B) * NH * T * T);  // (B,NH,T,T)
  const size_t logits_at = layout.add<float>(N * V);               // (B,T,V)
  const size_t residual_size = options.capture_residual ? size_t(B) * stages * T * C : 0;
  const size_t attention_size = options.capture_attention ? size_t(B) * L * NH * T * T : 0;
  const size_t residual_at = layout.add<float>(residual_size);     // (B,2L+1,T,C)
  const size_t attention_at = layout.add<float>(attention_size);   // (B,L,NH,T,T)
  if (activations_.bytes() < layout.bytes()) {
    activations_.release();  // before allocating the larger block: both may not fit at once
    activations_.resize(layout.bytes());
  }
  int* tokens = view<int>(activations_, tokens_at);
  int* lengths = view<int>(activations_, lengths_at);
  float* x = view<float>(activations_, x_at);
  float* ln = view<float>(activations_, ln_at);
  float* qkv = view<float>(activations_, qkv_at);
  float* q = view<float>(activations_, q_at);
  float* k = view<float>(activations_, k_at);
  float* v = view<float>(activations_, v_at);
  float* att_out = view<float>(activations_, att_out_at);
  float* delta = view<float>(activations_, delta_at);
  float* fc = view<float>(activations_, fc_at);
  float* pattern = view<float>(activations_, pattern_at);
  float* logits = view<float>(activations_, logits_at);
  float* residual = view<float>(activations_, residual_at);
  float* attention = view<float>(activations_, attention_at);

  std::vector<int> host_tokens(N, 0);
  for (int b = 0; b < B; ++b) std::copy(batch[b].begin(), batch[b].end(), host_tokens.begin() + size_t(b) * T);
  CUDA_CHECK(cudaMemcpyAsync(tokens, host_tokens.data(), N * sizeof(int), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(lengths, result.lengths.data(), B * sizeof(int), cudaMemcpyHostToDevice, stream));

  // The stream is zero on padded rows throughout (embed and residual_add keep it so), which is
  // what the CPU's captures hold there.
  auto capture_residual = [&](int stage) {
    if (!options.capture_residual) return;
    const size_t row = size_t(T) * C * sizeof(float);
    CUDA_CHECK(cudaMemcpy2DAsync(residual + size_t(stage) * T * C, stages * row, x, row, row, B,
                                 cudaMemcpyDeviceToDevice, stream));
  };

  cuda::embed(x, tokens, lengths, w.wte, w.wpe, B, T, C, stream);
  capture_residual(0);
  for (int l = 0; l < L; ++l) {
    const LayerWeights& lw = w.layers[l];
    const float* in = x;
    if (cfg.layer_norm) {
      cuda::layernorm(ln, x, lw.ln_1_w, lw.ln_1_b, int(N), C, stream);
      in = ln;
    }
    cuda::matmul(cublas, qkv, in, lw.attn_w, lw.attn_b, int(N), C, 3 * C, stream);
    cuda::attention(cublas, att_out, pattern, q, k, v, qkv, lengths, B, T, C, NH, cfg.causal, stream);
    cuda::matmul(cublas, delta, att_out, lw.attn_proj_w, lw.attn_proj_b, int(N), C, C, stream);
    cuda::residual_add(x, delta, lengths, B, T, C, stream);
    capture_residual(2 * l + 1);
    if (options.capture_attention) {
      const size_t heads = size_t(NH) * T * T * sizeof(float);
      CUDA_CHECK(cudaMemcpy2DAsync(attention + size_t(l) * NH * T * T, L * heads, pattern, heads, heads, B,
                                   cudaMemcpyDeviceToDevice, stream));
    }
    if (I > 0) {
      in = x;
      if (cfg.layer_norm) {
        cuda::layernorm(ln, x, lw.ln_2_w, lw.ln_2_b, int(N), C, stream);
        in = ln;
      }
      cuda::matmul(cublas, fc, in, lw.fc_w, lw.fc_b, int(N), C, I, stream);
      cuda::activation(fc, N * I, cfg.activation, stream);
      cuda::matmul(cublas, delta, fc, lw.fc_proj_w, lw.fc_proj_b, int(N), I, C, stream);
      cuda::residual_add(x, delta, lengths, B, T, C, stream);
    }
    capture_residual(2 * l + 2);
  }
  const float* final_stream = x;
  if (cfg.layer_norm) {
    cuda::layernorm(ln, x, w.ln_f_w, w.ln_f_b, int(N), C, stream);
    final_stream = ln;
  }
  cuda::unembed(cublas, logits, final_stream, w.wte, int(N), C, V);
  cuda::zero_padded_rows(logits, lengths, B, T, V, stream);

  result.logits.resize(N * V);
  result.residual.resize(residual_size);
  result.attention.resize(attention_size);
  if (options.capture_last_resid) {
    result.last_resid.resize(N * C);
    CUDA_CHECK(cudaMemcpyAsync(result.last_resid.data(), x, N * C * sizeof(float), cudaMemcpyDeviceToHost, stream));
  }
  if (options.capture_final) {
    result.final.resize(N * C);
    CUDA_CHECK(cudaMemcpyAsync(result.final.data(), final_stream, N * C * sizeof(float), cudaMemcpyDeviceToHost,
                               stream));
  }
  CUDA_CHECK(cudaMemcpyAsync(result.logits.data(), logits, N * V * sizeof(float), cudaMemcpyDeviceToHost, stream));
  if (residual_size)
    CUDA_CHECK(cudaMemcpyAsync(result.residual.data(), residual, residual_size * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
  if (attention_size)
    CUDA_CHECK(cudaMemcpyAsync(result.attention.data(), attention, attention_size * sizeof(float),
                               cudaMemcpyDeviceToHost, stream));
  device_->stream.synchronize();
  return result;
}

std::unique_ptr<Decoder> CudaBackend::decoder() {
  if (!device_->model.config.causal)
    fail_at(Span{}, "this model is bidirectional, so it cannot decode token by token with a KV cache (every "
                    "position sees later ones); run it with `raspc run` instead");
  return std::make_unique<CudaDecoder>(device_);
}

CudaDecoder::CudaDecoder(std::shared_ptr<DeviceModel> device)
    : device_(std::move(device)), host_logits_(size_t(device_->model.config.vocab_size) * sizeof(float)) {
  const ModelConfig& cfg = device_->model.config;
  const size_t C = cfg.n_embd, I = cfg.n_inner, P = cfg.n_positions, V = cfg.vocab_size, NH = cfg.n_head;
  Layout layout;
  const size_t x_at = layout.add<float>(C), ln_at = layout.add<float>(C), qkv_at = layout.add<float>(3 * C);
  const size_t att_out_at = layout.add<float>(C), delta_at = layout.add<float>(C), fc_at = layout.add<float>(I);
  const size_t scores_at = layout.add<float>(NH * P), logits_at = layout.add<float>(V);
  const size_t one_at = layout.add<int>(1);
  std::vector<size_t> k_at, v_at;
  for (int l = 0; l < cfg.n_layer; ++l) {
    k_at.push_back(layout.add<float>(P * C));
    v_at.push_back(layout.add<float>(P * C));
  }
  buffer_.resize(layout.bytes());
  x_ = view<float>(buffer_, x_at);
  ln_ = view<float>(buffer_, ln_at);
  qkv_ = view<float>(buffer_, qkv_at);
  att_out_ = view<float>(buffer_, att_out_at);
  delta_ = view<float>(buffer_, delta_at);
  fc_ = view<float>(buffer_, fc_at);
  scores_ = view<float>(buffer_, scores_at);
  logits_ = view<float>(buffer_, logits_at);
  one_ = view<int>(buffer_, one_at);
  for (int l = 0; l < cfg.n_layer; ++l) {
    k_cache_.push_back(view<float>(buffer_, k_at[l]));
    v_cache_.push_back(view<float>(buffer_, v_at[l]));
  }
  const int one = 1;
  CUDA_CHECK(cudaMemcpyAsync(one_, &one, sizeof(int), cudaMemcpyHostToDevice, device_->stream.get()));
  device_->stream.synchronize();
}

const float* CudaDecoder::step(int token) {
  const ModelConfig& cfg = device_->model.config;
  const ParameterViews& w = device_->w;
  const int C = cfg.n_embd, NH = cfg.n_head, I = cfg.n_inner, V = cfg.vocab_size, P = cfg.n_positions;
  cudaStream_t stream = device_->stream.get();
  cublasHandle_t cublas = device_->cublas.get();
  if (position_ >= P)
    fail_at(Span{}, "the decoder already holds " + std::to_string(P) +
                        " tokens, the model's maximum; reset it or keep a shorter window");
  check_token(cfg, token);
  const int t = position_;
  cuda::embed_token(x_, token, t, w.wte, w.wpe, C, stream);
  for (int l = 0; l < cfg.n_layer; ++l) {
    const LayerWeights& lw = w.layers[l];
    const float* in = x_;
    if (cfg.layer_norm) {
      cuda::layernorm(ln_, x_, lw.ln_1_w, lw.ln_1_b, 1, C, stream);
      in = ln_;
    }
    cuda::matmul(cublas, qkv_, in, lw.attn_w, lw.attn_b, 1, C, 3 * C, stream);
    float* k_row = k_cache_[l] + size_t(t) * C;
    float* v_row = v_cache_[l] + size_t(t) * C;
    CUDA_CHECK(cudaMemcpyAsync(k_row, qkv_ + C, C * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(v_row, qkv_ + 2 * C, C * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    cuda::attention_one_query(att_out_, scores_, qkv_, k_cache_[l], v_cache_[l], t + 1, P, C, NH, stream);
    cuda::matmul(cublas, delta_, att_out_, lw.attn_proj_w, lw.attn_proj_b, 1, C, C, stream);
    cuda::residual_add(x_, delta_, one_, 1, 1, C, stream);
    if (I > 0) {
      in = x_;
      if (cfg.layer_norm) {
        cuda::layernorm(ln_, x_, lw.ln_2_w, lw.ln_2_b, 1, C, stream);
        in = ln_;
      }
      cuda::matmul(cublas, fc_, in, lw.fc_w, lw.fc_b, 1, C, I, stream);
      cuda::activation(fc_, I, cfg.activation, stream);
      cuda::matmul(cublas, delta_, fc_, lw.fc_proj_w, lw.fc_proj_b, 1, I, C, stream);
      cuda::residual_add(x_, delta_, one_, 1, 1, C, stream);
    }
  }
  const float* final_stream = x_;
  if (cfg.layer_norm) {
    cuda::layernorm(ln_, x_, w.ln_f_w, w.ln_f_b, 1, C, stream);
    final_stream = ln_;
  }
  cuda::unembed(cublas, logits_, final_stream, w.wte, 1, C, V);
  float* host_logits = static_cast<float*>(host_logits_.data());
  CUDA_CHECK(cudaMemcpyAsync(host_logits, logits_, V * sizeof(float), cudaMemcpyDeviceToHost, stream));
  device_->stream.synchronize();
  ++position_;
  return host_logits;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const Model& model) {
  cuda::require_device();
  return std::make_unique<CudaBackend>(model);
}

namespace {
// Loading this file (linked in, or as libraspc_cuda.so) makes it the backend of Device::Cuda.
[[maybe_unused]] const bool kRegistered = (cuda_backend_factory() = &make_cuda_backend, true);
}  // namespace

}  // namespace raspc
