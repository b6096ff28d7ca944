// Reporting failed CUDA and cuBLAS calls, and the device queries of cuda_backend.hpp.
#include <cstdio>
#include <string>

#include "runtime/cuda/check.cuh"
#include "runtime/cuda/cuda_backend.hpp"
#include "support/diagnostics.hpp"

namespace raspc::cuda {
namespace {

// Names the file from the project root ("runtime/cuda/check.cuh"), not as the build saw it.
std::string describe_call(const char* call, const char* file, int line) {
  std::string path = file;
  size_t project_relative = path.rfind("runtime/cuda/");
  if (project_relative != std::string::npos) path.erase(0, project_relative);
  return std::string("CUDA: ") + call + " failed at " + path + ":" + std::to_string(line) + ": ";
}

}  // namespace

void fail_cuda(cudaError_t code, const char* call, const char* file, int line) {
  // A kernel fault leaves the error sticky; clear what can be cleared so a caller that catches
  // the UserError is not handed the same failure by an unrelated later call.
  cudaGetLastError();
  throw UserError(format_error(Span{}, describe_call(call, file, line) + cudaGetErrorString(code) + " (" +
                                           cudaGetErrorName(code) + ")"));
}

void fail_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  throw UserError(format_error(Span{}, describe_call(call, file, line) + cublasGetStatusString(status) + " (" +
                                           cublasGetStatusName(status) + ")"));
}

void warn_cuda(cudaError_t code, const char* call, const char* file, int line) {
  std::fprintf(stderr, "warning: %s%s (%s)\n", describe_call(call, file, line).c_str(), cudaGetErrorString(code),
               cudaGetErrorName(code));
}

CublasHandle::CublasHandle(cudaStream_t stream) {
  CUBLAS_CHECK(cublasCreate(&handle_));
  // From here on the destructor must run if a later call fails.
  try {
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
    // Pure float32 products: TF32 tensor cores would break parity with the CPU (1e-5).
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

CublasHandle::~CublasHandle() {
  cublasStatus_t status = cublasDestroy(handle_);
  if (status != CUBLAS_STATUS_SUCCESS)
    std::fprintf(stderr, "warning: CUDA: cublasDestroy failed: %s\n", cublasGetStatusString(status));
}

void require_device() {
  int count = 0;
  cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess || count == 0) {
    cudaGetLastError();
    std::string reason = code != cudaSuccess ? std::string(cudaGetErrorString(code)) : "no device found";
    throw UserError(format_error(Span{}, "no CUDA GPU is available on this machine (" + reason +
                                             "); run with --device cpu instead"));
  }
}

}  // namespace raspc::cuda

namespace raspc {

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

CudaMemoryInfo cuda_memory_info() {
  cuda::require_device();
  CudaMemoryInfo info;
  CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
  return info;
}

std::string cuda_device_name() {
  cuda::require_device();
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

}  // namespace raspc
