// test_cuda's own main: without a GPU (or in a build without CUDA) it exits 77, which CTest counts
// as skipped rather than passed; with one it runs the Catch2 tests.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"
#ifdef RASPC_WITH_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#endif

namespace {
constexpr int kSkipped = 77;
}

int main(int argc, char** argv) {
#ifdef RASPC_WITH_CUDA
  if (raspc::cuda_device_count() > 0) return Catch::Session().run(argc, argv);
  // What can be checked without a GPU: asking for one is a UserError that says it is missing.
  raspc::Model model;
  model.allocate();
  std::string reason;
  try {
    raspc::make_backend(model, raspc::Device::Cuda);
    std::fprintf(stderr, "FAILED: make_backend(Device::Cuda) succeeded on a machine without a GPU\n");
    return 1;
  } catch (const raspc::UserError& error) {
    const std::string expected = "error: no CUDA GPU is available on this machine (";
    if (std::string(error.what()).rfind(expected, 0) != 0) {
      std::fprintf(stderr, "FAILED: expected a message starting \"%s\", got: %s", expected.c_str(), error.what());
      return 1;
    }
    reason = error.what();
  }
  std::printf("skipped: make_backend(Device::Cuda) says, as it should:\n%s", reason.c_str());
#else
  std::printf("skipped: raspc was built without CUDA\n");
#endif
  (void)argc;
  (void)argv;
  return kSkipped;
}
