// Device memory comes back, failures are reported with the call and the reason, and the CUDA
// backend refuses what the CPU backend refuses, in the same words.
#ifdef RASPC_WITH_CUDA
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"
#include "tests/cuda/parity.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;

namespace {

std::string user_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UserError& error) {
    return error.what();
  }
  return "(no error)";
}

// One backend's whole life: weights, a captured forward, a decoder's steps.
void use_a_backend(const Model& model, std::mt19937& rng) {
  auto cuda = make_backend(model, Device::Cuda);
  ForwardOptions capture;
  capture.capture_residual = capture.capture_attention = true;
  const int P = model.config.n_positions;
  cuda->forward({testing::random_tokens(model, P, rng), testing::random_tokens(model, P / 3, rng),
                 testing::random_tokens(model, P, rng), testing::random_tokens(model, 1, rng)},
                capture);
  auto decoder = cuda->decoder();
  for (int token : testing::random_tokens(model, 10, rng)) decoder->step(token);
}

}  // namespace

TEST_CASE("cuda: creating and destroying backends many times returns all device memory") {
  // About 56 MB of weights and over 150 MB of activations per backend, so one leaked buffer per
  // cycle would lose far more than the slack below.
  Model model = testing::make_random_model(make_config(4, 8, 512, 2048, 512, 2048, true, true, Activation::Gelu), 29);
  std::mt19937 rng(31);
  // The first cycle loads cuBLAS and this binary's kernels into the context, which stays.
  use_a_backend(model, rng);
  const size_t start = cuda_memory_info().free_bytes;
  for (int cycle = 0; cycle < 10; ++cycle) use_a_backend(model, rng);
  const size_t end = cuda_memory_info().free_bytes;
  INFO("free device memory before " << start << " bytes, after " << end);
  // 16 MiB of slack: the driver and cuBLAS may settle internal pools (a kernel first loaded late, a
  // workspace kept by the memory pool) by a few pages. The smallest buffer a cycle allocates, the
  // decoder's, is 8 MB, so leaking any buffer in each of the 10 cycles loses 80 MB or more.
  CHECK(end + (size_t(16) << 20) >= start);
}

TEST_CASE("cuda: a failed allocation is a UserError naming the call and the reason, and the backend recovers") {
  // (4096 sequences, 16 heads, 1024 x 1024 scores) is 256 GiB of attention scores: more than any
  // GPU holds.
  Model model = testing::make_random_model(make_config(1, 16, 16, 0, 1024, 2, false, false, Activation::Relu), 37);
  auto cuda = make_backend(model, Device::Cuda);
  const std::vector<std::vector<int>> huge(4096, std::vector<int>(1024, 1));
  const std::string message = user_error_of([&] { cuda->forward(huge); });
  CHECK(message.rfind("error: CUDA: cudaMalloc(&data_, bytes) failed at runtime/cuda/check.cuh:", 0) == 0);
  CHECK(message.find("(cudaErrorMemoryAllocation)") != std::string::npos);
  // Out of memory is not a sticky error: the same backend runs the next batch.
  const ForwardResult small = cuda->forward({{1, 0, 1}});
  CHECK(small.logits.size() == 3 * 2);
}

TEST_CASE("cuda: the backend refuses what the CPU backend refuses, in the same words") {
  Model causal = testing::make_random_model(make_config(1, 2, 8, 16, 4, 3, true, true, Activation::Gelu), 41);
  Model bidirectional = testing::make_random_model(make_config(1, 2, 8, 16, 4, 3, false, true, Activation::Gelu), 43);
  for (const Model* model : {&causal, &bidirectional}) {
    auto cpu = make_backend(*model, Device::Cpu);
    auto cuda = make_backend(*model, Device::Cuda);
    for (const std::vector<std::vector<int>>& batch :
         {std::vector<std::vector<int>>{{0, 1, 2, 0, 1}}, std::vector<std::vector<int>>{{0, 3}},
          std::vector<std::vector<int>>{{1}, {-1}}}) {
      const std::string expected = user_error_of([&] { cpu->forward(batch); });
      CHECK(expected != "(no error)");
      CHECK(user_error_of([&] { cuda->forward(batch); }) == expected);
    }
  }
  CHECK(user_error_of([&] { make_backend(bidirectional, Device::Cuda)->decoder(); }) ==
        user_error_of([&] { make_backend(bidirectional, Device::Cpu)->decoder(); }));
  auto cpu_decoder = make_backend(causal, Device::Cpu)->decoder();
  auto cuda_decoder = make_backend(causal, Device::Cuda)->decoder();
  CHECK(user_error_of([&] { cuda_decoder->step(3); }) == user_error_of([&] { cpu_decoder->step(3); }));
  for (int token : {0, 1, 2, 1}) {
    cpu_decoder->step(token);
    cuda_decoder->step(token);
  }
  const std::string full = user_error_of([&] { cpu_decoder->step(0); });
  CHECK(full.find("already holds 4 tokens") != std::string::npos);
  CHECK(user_error_of([&] { cuda_decoder->step(0); }) == full);
}

TEST_CASE("cuda: the device is named") {
  CHECK_FALSE(cuda_device_name().empty());
  CHECK(cuda_device_count() >= 1);
}

#endif  // RASPC_WITH_CUDA
