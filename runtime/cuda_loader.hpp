// How the CUDA backend reaches the dispatch point (make_backend) without every program loading
// the CUDA libraries at start-up (0.2 s and 220 MB, for --help too).
//
// runtime/cuda/cuda_backend.cu registers its constructor here when it is loaded. Programs that
// link it in (the tests, the benchmarks, the Python module) have it from the start; the raspc
// command leaves it in the module libraspc_cuda.so beside its executable, which make_backend
// opens on the first --device cuda.
#pragma once

#include <memory>

#include "runtime/forward.hpp"

namespace raspc {

using CudaBackendFactory = std::unique_ptr<Backend> (*)(const Model& model);

// The registered constructor; nullptr until the CUDA backend is in the process.
CudaBackendFactory& cuda_backend_factory();

}  // namespace raspc
