// The CUDA backend: the forward of runtime/cpu_backend on an NVIDIA GPU (cuBLAS for the matrix
// products, raspc's own kernels for everything else). Reached through make_backend(model,
// Device::Cuda). No CUDA types here, so the rest of raspc builds and links without the toolkit's
// headers.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "runtime/forward.hpp"

namespace raspc {

// Uploads the model's weights once. The model must outlive the backend; decoders made by the
// backend may outlive it (they share its device state). No GPU at run time is a UserError.
std::unique_ptr<Backend> make_cuda_backend(const Model& model);

// How many CUDA devices the process can use: 0 when there is no GPU or no (recent enough) driver.
// Never throws; the CUDA tests use it to decide whether to skip.
int cuda_device_count();

// Free and total memory of the current device, in bytes (cudaMemGetInfo). A failure is a UserError.
struct CudaMemoryInfo {
  size_t free_bytes = 0, total_bytes = 0;
};
CudaMemoryInfo cuda_memory_info();

// The name of the current device, e.g. "NVIDIA H200", for benchmark reports.
std::string cuda_device_name();

}  // namespace raspc
