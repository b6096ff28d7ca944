// The decoder allocates at construction only: no heap allocation per token.
//
// Every allocation in raspc (operator new, std::vector, Eigen's aligned_malloc) ends in malloc, so
// this test binary interposes malloc (forwarding to glibc's __libc_malloc) and counts the calls.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>

#include "runtime/cpu_backend.hpp"
#include "tests/runtime/random_model.hpp"

// AddressSanitizer replaces malloc itself (an interposed one crashes its start-up), and counting
// its allocations would say nothing about the real build's: the sanitizer build leaves this out.
#if !defined(__SANITIZE_ADDRESS__)

extern "C" void* __libc_malloc(size_t size);

namespace {
std::atomic<long> malloc_calls{0};
}  // namespace

extern "C" void* malloc(size_t size) {
  malloc_calls.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}

using namespace raspc;

TEST_CASE("the decoder makes no heap allocation per token") {
  const ModelConfig config = make_config(2, 4, 64, 256, 16, 16);  // the d64 reference model
  Model model = testing::make_random_model(config, 1);
  CpuBackend backend(model);
  std::unique_ptr<Decoder> decoder = backend.decoder();
  long before = malloc_calls.load();
  for (int round = 0; round < 3; ++round) {
    decoder->reset();
    for (int t = 0; t < config.n_positions; ++t) decoder->step(t % config.vocab_size);
  }
  CHECK(malloc_calls.load() == before);
  // The count is live: the batched forward allocates its activations once per call.
  backend.forward({{1, 2, 3}});
  CHECK(malloc_calls.load() > before);
}

#endif  // !__SANITIZE_ADDRESS__
