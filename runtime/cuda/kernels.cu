// The forward's kernels. Rows are handled one warp each (LayerNorm, softmax) so that every
// reduction is a fixed shuffle tree; elementwise kernels use grid-stride loops over size_t
// indices (a GPT-2-small batch has more than 2^31 attention scores).
//
// Arithmetic follows the CPU backend op for op (runtime/cpu_backend.cpp): no fast-math, and the
// products that the CPU rounds before adding are rounded here too (__fmul_rn keeps nvcc from
// contracting them into an FMA), so the two differ only by summation order.
#include <cmath>

#include "runtime/cuda/check.cuh"
#include "runtime/cuda/kernels.cuh"

namespace raspc::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr float kLayerNormEpsilon = 1e-5f;

int blocks_for(size_t n) {
  // Grid-stride loops cover the rest; 65535 * 256 threads keep an H200 busy.
  size_t blocks = (n + kThreads - 1) / kThreads;
  return int(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}
int blocks_for_rows(size_t rows) { return int((rows + kWarpsPerBlock - 1) / kWarpsPerBlock); }

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reductions over a whole block (blockDim.x a multiple of 32, at most 1024). `shared` holds 32
// floats; the trailing __syncthreads lets the caller reuse it at once.
__device__ float block_sum(float v, float* shared) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : 0.0f;
  v = warp_sum(v);
  __syncthreads();
  return v;
}
__device__ float block_max(float v, float* shared) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_max(v);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : -INFINITY;
  v = warp_max(v);
  __syncthreads();
  return v;
}

__global__ void embed_kernel(float* x, const int* tokens, const int* lengths, const float* wte,
                             const float* wpe, int B, int T, int C) {
  size_t n = size_t(B) * T * C;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    size_t row = i / C;
    int c = int(i % C), t = int(row % T), b = int(row / T);
    x[i] = t < lengths[b] ? wte[size_t(tokens[row]) * C + c] + wpe[size_t(t) * C + c] : 0.0f;
  }
}

__global__ void embed_token_kernel(float* x, int token, int position, const float* wte, const float* wpe, int C) {
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x)
    x[c] = wte[size_t(token) * C + c] + wpe[size_t(position) * C + c];
}

// One warp per row of x (N,C). Two passes (mean, then the mean square deviation), as the CPU.
__global__ void layernorm_kernel(float* out, const float* x, const float* w, const float* b, int N, int C) {
  int row = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= N) return;
  const float* xr = x + size_t(row) * C;
  float* outr = out + size_t(row) * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += xr[c];
  float mean = warp_sum(sum) / C;
  float square_sum = 0.0f;
  for (int c = lane; c < C; c += 32) {
    float deviation = xr[c] - mean;
    square_sum += __fmul_rn(deviation, deviation);
  }
  float variance = warp_sum(square_sum) / C;
  float rstd = 1.0f / sqrtf(variance + kLayerNormEpsilon);
  for (int c = lane; c < C; c += 32) outr[c] = __fmul_rn(__fmul_rn(xr[c] - mean, rstd), w[c]) + b[c];
}

// bias (N) added to every row of out (M,N).
__global__ void add_bias_kernel(float* out, const float* bias, int M, int N) {
  size_t n = size_t(M) * N;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] += bias[i % N];
}

// GPT-2's approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). sqrt(2/pi) comes from
// the host, computed in float exactly as the CPU backend does.
__device__ float gelu_tanh(float x, float sqrt_2_over_pi) {
  float cube = __fmul_rn(__fmul_rn(__fmul_rn(0.044715f, x), x), x);
  return __fmul_rn(__fmul_rn(0.5f, x), 1.0f + tanhf(__fmul_rn(sqrt_2_over_pi, x + cube)));
}

__global__ void gelu_kernel(float* x, size_t n, float sqrt_2_over_pi) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = gelu_tanh(x[i], sqrt_2_over_pi);
}
__global__ void relu_kernel(float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = fmaxf(x[i], 0.0f);
}

__global__ void residual_add_kernel(float* x, const float* y, const int* lengths, int B, int T, int C) {
  size_t n = size_t(B) * T * C;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    size_t row = i / C;
    int t = int(row % T), b = int(row / T);
    x[i] = t < lengths[b] ? x[i] + y[i] : 0.0f;
  }
}

__global__ void zero_padded_rows_kernel(float* x, const int* lengths, int B, int T, int W) {
  size_t n = size_t(B) * T * W;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    size_t row = i / W;
    int t = int(row % T), b = int(row / T);
    if (t >= lengths[b]) x[i] = 0.0f;
  }
}

// qkv (B,T,3C) -> q, k, v (B,H,T,d), so each (b,h) is one contiguous (T,d) matrix for cuBLAS.
__global__ void split_heads_kernel(float* q, float* k, float* v, const float* qkv, int B, int T, int C, int H) {
  int d = C / H;
  size_t n = size_t(B) * T * C;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int e = int(i % d);
    size_t r = i / d;
    int t = int(r % T);
    r /= T;
    int h = int(r % H), b = int(r / H);
    size_t source = (size_t(b) * T + t) * 3 * C + size_t(h) * d + e;
    q[i] = qkv[source];
    k[i] = qkv[source + C];
    v[i] = qkv[source + 2 * size_t(C)];
  }
}

// y (B,H,T,d) -> out (B,T,C).
__global__ void merge_heads_kernel(float* out, const float* y, int B, int T, int C, int H) {
  int d = C / H;
  size_t n = size_t(B) * T * C;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int c = int(i % C);
    size_t row = i / C;
    int t = int(row % T), b = int(row / T);
    int h = c / d, e = c % d;
    out[i] = y[((size_t(b) * H + h) * T + t) * d + e];
  }
}

// One warp per row (b,h,query t) of att (B,H,T,T), which holds the raw dot products q.k. A query
// sees keys s < lengths[b], and s <= t when causal; a padded query sees none and its row is 0.
__global__ void masked_softmax_kernel(float* att, const int* lengths, int B, int H, int T, bool causal, float scale) {
  size_t row = size_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= size_t(B) * H * T) return;
  int t = int(row % T), b = int(row / (size_t(H) * T));
  int length = lengths[b];
  int n_keys = t < length ? (causal ? t + 1 : length) : 0;
  float* p = att + row * T;
  float max_score = -INFINITY;
  for (int s = lane; s < n_keys; s += 32) {
    p[s] = __fmul_rn(p[s], scale);
    max_score = fmaxf(max_score, p[s]);
  }
  max_score = warp_max(max_score);
  float sum = 0.0f;
  for (int s = lane; s < n_keys; s += 32) {
    float e = expf(p[s] - max_score);
    p[s] = e;
    sum += e;
  }
  float inv_sum = 1.0f / warp_sum(sum);
  for (int s = lane; s < T; s += 32) p[s] = s < n_keys ? __fmul_rn(p[s], inv_sum) : 0.0f;
}

// One block of kThreads per head: scores over the cached keys, softmax, the weighted sum of
// cached values.
__global__ void attention_one_query_kernel(float* out, float* scores, const float* q, const float* k_cache,
                                           const float* v_cache, int n_keys, int P, int C, int H, float scale) {
  __shared__ float reduce_scratch[32];
  int h = blockIdx.x, d = C / H;
  const float* qh = q + size_t(h) * d;
  float* score = scores + size_t(h) * P;
  float max_score = -INFINITY;
  for (int s = threadIdx.x; s < n_keys; s += blockDim.x) {
    const float* ks = k_cache + size_t(s) * C + size_t(h) * d;
    float dot = 0.0f;
    for (int e = 0; e < d; ++e) dot += __fmul_rn(qh[e], ks[e]);
    score[s] = __fmul_rn(dot, scale);
    max_score = fmaxf(max_score, score[s]);
  }
  max_score = block_max(max_score, reduce_scratch);
  float sum = 0.0f;
  for (int s = threadIdx.x; s < n_keys; s += blockDim.x) {
    float e = expf(score[s] - max_score);
    score[s] = e;
    sum += e;
  }
  float inv_sum = 1.0f / block_sum(sum, reduce_scratch);
  for (int s = threadIdx.x; s < n_keys; s += blockDim.x) score[s] = __fmul_rn(score[s], inv_sum);
  __syncthreads();  // every probability is read by every thread below
  // The weighted sum of values, 32 dimensions at a time: each warp sums every kWarpsPerBlock-th
  // key (so a long context is read by all warps at once, each read coalesced along the head's
  // dimensions), then warp 0 adds the warps' partial sums.
  __shared__ float partial[kWarpsPerBlock][32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int e0 = 0; e0 < d; e0 += 32) {
    int e = e0 + lane;
    float acc = 0.0f;
    if (e < d) {
      const float* vs = v_cache + size_t(h) * d + e;
      for (int s = warp; s < n_keys; s += kWarpsPerBlock) acc += __fmul_rn(score[s], vs[size_t(s) * C]);
    }
    partial[warp][lane] = acc;
    __syncthreads();
    if (warp == 0 && e < d) {
      float total = 0.0f;
      for (int w = 0; w < kWarpsPerBlock; ++w) total += partial[w][lane];
      out[size_t(h) * d + e] = total;
    }
    __syncthreads();  // partial is rewritten by the next 32 dimensions
  }
}

}  // namespace

void embed(float* x, const int* tokens, const int* lengths, const float* wte, const float* wpe, int B, int T, int C,
           cudaStream_t stream) {
  embed_kernel<<<blocks_for(size_t(B) * T * C), kThreads, 0, stream>>>(x, tokens, lengths, wte, wpe, B, T, C);
  CUDA_CHECK_LAUNCH();
}

void embed_token(float* x, int token, int position, const float* wte, const float* wpe, int C, cudaStream_t stream) {
  embed_token_kernel<<<blocks_for(C), kThreads, 0, stream>>>(x, token, position, wte, wpe, C);
  CUDA_CHECK_LAUNCH();
}

void layernorm(float* out, const float* x, const float* w, const float* b, int N, int C, cudaStream_t stream) {
  if (N == 0) return;
  layernorm_kernel<<<blocks_for_rows(N), kThreads, 0, stream>>>(out, x, w, b, N, C);
  CUDA_CHECK_LAUNCH();
}

void matmul(cublasHandle_t handle, float* out, const float* x, const float* w, const float* bias, int M, int K, int N,
            cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  // cuBLAS is column-major: the row-major (M,N) result is the column-major (N,M) matrix
  // w^T x^T, where row-major w (K,N) and x (M,K) read as column-major are w^T and x^T already.
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, w, N, x, K, &zero, out, N));
  if (bias) {
    add_bias_kernel<<<blocks_for(size_t(M) * N), kThreads, 0, stream>>>(out, bias, M, N);
    CUDA_CHECK_LAUNCH();
  }
}

void unembed(cublasHandle_t handle, float* logits, const float* x, const float* wte, int M, int C, int V) {
  if (M == 0) return;
  // Column-major (V,M) = wte (V,C) . x^T: row-major wte read as column-major is wte^T (C,V), so
  // it is transposed back (OP_T).
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, V, M, C, &one, wte, C, x, C, &zero, logits, V));
}

void activation(float* x, size_t n, Activation act, cudaStream_t stream) {
  if (n == 0) return;
  if (act == Activation::Gelu)
    gelu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n, std::sqrt(2.0f / float(M_PI)));
  else relu_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, n);
  CUDA_CHECK_LAUNCH();
}

void residual_add(float* x, const float* y, const int* lengths, int B, int T, int C, cudaStream_t stream) {
  if (size_t(B) * T * C == 0) return;
  residual_add_kernel<<<blocks_for(size_t(B) * T * C), kThreads, 0, stream>>>(x, y, lengths, B, T, C);
  CUDA_CHECK_LAUNCH();
}

void zero_padded_rows(float* x, const int* lengths, int B, int T, int W, cudaStream_t stream) {
  if (size_t(B) * T * W == 0) return;
  zero_padded_rows_kernel<<<blocks_for(size_t(B) * T * W), kThreads, 0, stream>>>(x, lengths, B, T, W);
  CUDA_CHECK_LAUNCH();
}

void attention(cublasHandle_t handle, float* out, float* pattern, float* q, float* k, float* v, const float* qkv,
               const int* lengths, int B, int T, int C, int H, bool causal, cudaStream_t stream) {
  size_t n = size_t(B) * T * C;
  if (n == 0) return;
  const int d = C / H;
  split_heads_kernel<<<blocks_for(n), kThreads, 0, stream>>>(q, k, v, qkv, B, T, C, H);
  CUDA_CHECK_LAUNCH();

  // pattern (B,H,T,T) = q . k^T per (b,h). Column-major, each (b,h) computes the (T_key, T_query)
  // matrix k q^T (k read as column-major (d,T) and transposed), which is row-major [query][key].
  const float one = 1.0f, zero = 0.0f;
  const long long head_stride = (long long)T * d, pattern_stride = (long long)T * T;
  CUBLAS_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, T, T, d, &one, k, d, head_stride, q, d,
                                         head_stride, &zero, pattern, T, pattern_stride, B * H));
  const float scale = 1.0f / sqrtf(float(d));
  masked_softmax_kernel<<<blocks_for_rows(size_t(B) * H * T), kThreads, 0, stream>>>(pattern, lengths, B, H, T,
                                                                                     causal, scale);
  CUDA_CHECK_LAUNCH();

  // y (B,H,T,d) = pattern . v per (b,h); q is free again and holds y. Column-major (d, T_query) =
  // v^T (d,T_key) . pattern^T, both already in that form.
  float* y = q;
  CUBLAS_CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, T, T, &one, v, d, head_stride, pattern,
                                         T, pattern_stride, &zero, y, d, head_stride, B * H));
  merge_heads_kernel<<<blocks_for(n), kThreads, 0, stream>>>(out, y, B, T, C, H);
  CUDA_CHECK_LAUNCH();
}

void attention_one_query(float* out, float* scores, const float* q, const float* k_cache, const float* v_cache,
                         int n_keys, int P, int C, int H, cudaStream_t stream) {
  const float scale = 1.0f / sqrtf(float(C / H));
  // kThreads: the value sum splits the keys over exactly kWarpsPerBlock warps.
  attention_one_query_kernel<<<H, kThreads, 0, stream>>>(out, scores, q, k_cache, v_cache, n_keys, P, C, H, scale);
  CUDA_CHECK_LAUNCH();
}

}  // namespace raspc::cuda
