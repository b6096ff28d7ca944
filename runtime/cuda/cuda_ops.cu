// The op-by-op entry points of cuda_ops.hpp: each wraps one launcher of kernels.cuh.
#include <vector>

#include "runtime/cuda/check.cuh"
#include "runtime/cuda/cuda_ops.hpp"
#include "runtime/cuda/kernels.cuh"

namespace raspc::cuda_ops {
namespace {

using cuda::DeviceBuffer;

struct DeviceRequired {
  DeviceRequired() { cuda::require_device(); }
};

// A stream and cuBLAS handle for one op; the ops are synchronous, so each gets its own. Every
// copy goes through the stream: the legacy default stream does not order against it.
struct OpContext {
  DeviceRequired device;
  cuda::Stream stream;
  cuda::CublasHandle cublas{stream.get()};

  template <typename T>
  DeviceBuffer upload(const std::vector<T>& host) const {
    DeviceBuffer buffer(host.size() * sizeof(T));
    if (!host.empty())
      CUDA_CHECK(cudaMemcpyAsync(buffer.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice,
                                 stream.get()));
    return buffer;
  }
  std::vector<float> download(const DeviceBuffer& buffer, size_t count) const {
    std::vector<float> host(count);
    if (count)
      CUDA_CHECK(cudaMemcpyAsync(host.data(), buffer.data(), count * sizeof(float), cudaMemcpyDeviceToHost,
                                 stream.get()));
    stream.synchronize();
    return host;
  }
};

float* floats(const DeviceBuffer& buffer) { return static_cast<float*>(buffer.data()); }
int* ints(const DeviceBuffer& buffer) { return static_cast<int*>(buffer.data()); }

}  // namespace

std::vector<float> embed(const std::vector<int>& tokens, const std::vector<int>& lengths, int T,
                         const std::vector<float>& wte, const std::vector<float>& wpe, int C) {
  OpContext context;
  const int B = int(lengths.size());
  DeviceBuffer d_tokens = context.upload(tokens), d_lengths = context.upload(lengths);
  DeviceBuffer d_wte = context.upload(wte), d_wpe = context.upload(wpe);
  DeviceBuffer out(size_t(B) * T * C * sizeof(float));
  cuda::embed(floats(out), ints(d_tokens), ints(d_lengths), floats(d_wte), floats(d_wpe), B, T, C,
              context.stream.get());
  return context.download(out, size_t(B) * T * C);
}

std::vector<float> layernorm(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                             int C) {
  OpContext context;
  const int N = int(x.size() / C);
  DeviceBuffer d_x = context.upload(x), d_w = context.upload(w);
  DeviceBuffer d_b = context.upload(b), out(x.size() * sizeof(float));
  cuda::layernorm(floats(out), floats(d_x), floats(d_w), floats(d_b), N, C, context.stream.get());
  return context.download(out, x.size());
}

std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                          int M, int K, int N) {
  OpContext context;
  DeviceBuffer d_x = context.upload(x), d_w = context.upload(w);
  DeviceBuffer d_bias = context.upload(bias), out(size_t(M) * N * sizeof(float));
  cuda::matmul(context.cublas.get(), floats(out), floats(d_x), floats(d_w), bias.empty() ? nullptr : floats(d_bias),
               M, K, N, context.stream.get());
  return context.download(out, size_t(M) * N);
}

std::vector<float> unembed(const std::vector<float>& x, const std::vector<float>& wte, int C, int V) {
  OpContext context;
  const int M = int(x.size() / C);
  DeviceBuffer d_x = context.upload(x), d_wte = context.upload(wte), out(size_t(M) * V * sizeof(float));
  cuda::unembed(context.cublas.get(), floats(out), floats(d_x), floats(d_wte), M, C, V);
  return context.download(out, size_t(M) * V);
}

std::vector<float> activation(const std::vector<float>& x, Activation act) {
  OpContext context;
  DeviceBuffer d_x = context.upload(x);
  cuda::activation(floats(d_x), x.size(), act, context.stream.get());
  return context.download(d_x, x.size());
}

std::vector<float> residual_add(const std::vector<float>& x, const std::vector<float>& delta,
                                const std::vector<int>& lengths, int T, int C) {
  OpContext context;
  const int B = int(lengths.size());
  DeviceBuffer d_x = context.upload(x), d_delta = context.upload(delta), d_lengths = context.upload(lengths);
  cuda::residual_add(floats(d_x), floats(d_delta), ints(d_lengths), B, T, C, context.stream.get());
  return context.download(d_x, x.size());
}

AttentionResult attention(const std::vector<float>& qkv, const std::vector<int>& lengths, int T, int C, int NH,
                          bool causal) {
  OpContext context;
  const int B = int(lengths.size());
  const size_t N = size_t(B) * T;
  DeviceBuffer d_qkv = context.upload(qkv), d_lengths = context.upload(lengths);
  DeviceBuffer out(N * C * sizeof(float)), pattern(size_t(B) * NH * T * T * sizeof(float));
  DeviceBuffer q(N * C * sizeof(float)), k(N * C * sizeof(float)), v(N * C * sizeof(float));
  cuda::attention(context.cublas.get(), floats(out), floats(pattern), floats(q), floats(k), floats(v), floats(d_qkv),
                  ints(d_lengths), B, T, C, NH, causal, context.stream.get());
  AttentionResult result;
  result.out = context.download(out, N * C);
  result.pattern = context.download(pattern, size_t(B) * NH * T * T);
  return result;
}

AttentionResult attention_one_query(const std::vector<float>& q, const std::vector<float>& k,
                                    const std::vector<float>& v, int C, int NH) {
  OpContext context;
  const int n_keys = int(k.size() / C);
  DeviceBuffer d_q = context.upload(q), d_k = context.upload(k), d_v = context.upload(v);
  DeviceBuffer out(size_t(C) * sizeof(float)), scores(size_t(NH) * n_keys * sizeof(float));
  cuda::attention_one_query(floats(out), floats(scores), floats(d_q), floats(d_k), floats(d_v), n_keys, n_keys, C,
                            NH, context.stream.get());
  AttentionResult result;
  result.out = context.download(out, C);
  result.pattern = context.download(scores, size_t(NH) * n_keys);
  return result;
}

}  // namespace raspc::cuda_ops
