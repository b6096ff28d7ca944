// Checked CUDA and cuBLAS calls, and RAII owners of device resources.
//
// Every call's return code is checked; a failure becomes a UserError naming the call, where it was
// made and the library's reason ("cudaMalloc(&p, bytes) failed at runtime/cuda/x.cu:12: out of
// memory (cudaErrorMemoryAllocation)"), which main() prints before exiting 1. Destructors cannot
// throw, so a failed release is printed to stderr instead.
#pragma once

#include <cstddef>
#include <utility>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace raspc::cuda {

[[noreturn]] void fail_cuda(cudaError_t code, const char* call, const char* file, int line);
[[noreturn]] void fail_cublas(cublasStatus_t status, const char* call, const char* file, int line);
void warn_cuda(cudaError_t code, const char* call, const char* file, int line);

}  // namespace raspc::cuda

#define CUDA_CHECK(call)                                                                \
  do {                                                                                  \
    cudaError_t cuda_check_code_ = (call);                                              \
    if (cuda_check_code_ != cudaSuccess) ::raspc::cuda::fail_cuda(cuda_check_code_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                              \
  do {                                                                                  \
    cublasStatus_t cublas_check_status_ = (call);                                       \
    if (cublas_check_status_ != CUBLAS_STATUS_SUCCESS)                                  \
      ::raspc::cuda::fail_cublas(cublas_check_status_, #call, __FILE__, __LINE__);      \
  } while (0)

// A kernel launch reports a bad configuration through cudaGetLastError; faults inside the kernel
// surface at the next synchronising call, which is checked too.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// For destructors: report, never throw.
#define CUDA_WARN(call)                                                                 \
  do {                                                                                  \
    cudaError_t cuda_warn_code_ = (call);                                               \
    if (cuda_warn_code_ != cudaSuccess) ::raspc::cuda::warn_cuda(cuda_warn_code_, #call, __FILE__, __LINE__); \
  } while (0)

namespace raspc::cuda {

// One cudaMalloc'd block, freed when the owner goes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { resize(bytes); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }

  // Discards the contents; a no-op when the size is unchanged.
  void resize(size_t bytes) {
    if (bytes == bytes_) return;
    release();
    if (bytes == 0) return;
    CUDA_CHECK(cudaMalloc(&data_, bytes));
    bytes_ = bytes;
  }
  void release() {
    if (data_) CUDA_WARN(cudaFree(data_));
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory, so copies from the device can be asynchronous on a stream.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes) {
    if (bytes) CUDA_CHECK(cudaMallocHost(&data_, bytes));
  }
  ~PinnedBuffer() {
    if (data_) CUDA_WARN(cudaFreeHost(data_));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { CUDA_WARN(cudaStreamDestroy(stream_)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// Fails with a UserError unless a CUDA device is usable.
void require_device();

}  // namespace raspc::cuda
