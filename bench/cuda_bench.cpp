// CUDA throughput: batch-1 decode with the KV cache and batch-256 prefill, for the d=64 2-layer
// model of the runtime bench and a GPT-2-small-sized random model. Prints a table last.
//
//   cuda_bench            the full measurement (bench/cuda_check.sh runs it)
//   cuda_bench --quick    the small model only
//
// Times are wall-clock through the Backend interface, so a forward includes uploading the tokens
// and copying every logit back to the host, as `raspc run` pays them. GFLOP/s counts the forward's
// useful operations (runtime/flops.hpp: a causal token attends to the keys before it only).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/flops.hpp"
#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/random_model.hpp"
#ifdef RASPC_WITH_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#endif

using namespace raspc;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct Row {
  std::string model, workload;
  double tokens_per_second = 0, milliseconds_per_call = 0, gflops_per_second = 0;
};

// Feeds a whole context token by token, `rounds` times after one warm-up round.
Row bench_decode(Backend& backend, const Model& model, const std::string& name, int rounds) {
  std::mt19937 rng(1);
  const std::vector<int> tokens = testing::random_tokens(model, model.config.n_positions, rng);
  auto decoder = backend.decoder();
  auto run_context = [&] {
    decoder->reset();
    for (int token : tokens) decoder->step(token);
  };
  run_context();
  const Clock::time_point start = Clock::now();
  for (int r = 0; r < rounds; ++r) run_context();
  const double elapsed = seconds_since(start);
  const double steps = double(rounds) * tokens.size();
  double flops = 0;
  for (size_t t = 0; t < tokens.size(); ++t) flops += flops_per_token(model.config, int(t) + 1);
  return {name, backend.name() + " decode, batch 1, " + std::to_string(tokens.size()) + " tokens", steps / elapsed,
          1e3 * elapsed / steps, 1e-9 * flops * rounds / elapsed};
}

// One forward of `batch` full-length sequences, `rounds` times after one warm-up call.
Row bench_prefill(Backend& backend, const Model& model, const std::string& name, int batch, int rounds) {
  std::mt19937 rng(2);
  std::vector<std::vector<int>> sequences;
  for (int b = 0; b < batch; ++b) sequences.push_back(testing::random_tokens(model, model.config.n_positions, rng));
  backend.forward(sequences);
  const Clock::time_point start = Clock::now();
  for (int r = 0; r < rounds; ++r) backend.forward(sequences);
  const double elapsed = seconds_since(start);
  const double tokens = double(rounds) * batch * model.config.n_positions;
  const double flops = double(rounds) * batch * forward_flops(model.config, model.config.n_positions);
  return {name,
          backend.name() + " prefill, batch " + std::to_string(batch) + " x " + std::to_string(model.config.n_positions),
          tokens / elapsed, 1e3 * elapsed / rounds, 1e-9 * flops / elapsed};
}

void print_table(const std::vector<Row>& rows) {
  std::printf("\n%-54s %-34s %12s %10s %10s\n", "model", "workload", "tokens/s", "ms/call", "GFLOP/s");
  for (const Row& row : rows)
    std::printf("%-54s %-34s %12.0f %10.3f %10.1f\n", row.model.c_str(), row.workload.c_str(), row.tokens_per_second,
                row.milliseconds_per_call, row.gflops_per_second);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
#ifdef RASPC_WITH_CUDA
    const std::string device = cuda_device_name();
#else
    const std::string device;
    make_backend(Model{}, Device::Cuda);  // says that raspc was built without CUDA
#endif
    std::printf("cuda_bench on %s\n", device.c_str());
    std::vector<Row> rows;

    // The runtime bench's model (issue 3): n_embd 64, 2 layers, 4 heads, MLP 256, context 16.
    const Model small = testing::make_random_model(make_config(2, 4, 64, 256, 16, 16), 7);
    const std::string small_name = "d64: C 64, L 2, H 4, I 256, P 16, V 16";
    {
      auto cuda = make_backend(small, Device::Cuda);
      auto cpu = make_backend(small, Device::Cpu);
      rows.push_back(bench_decode(*cuda, small, small_name, 200));
      rows.push_back(bench_decode(*cpu, small, small_name, 200));
      rows.push_back(bench_prefill(*cuda, small, small_name, 256, 50));
      rows.push_back(bench_prefill(*cpu, small, small_name, 256, 5));
      std::printf("d64 done\n");
    }
    if (!quick) {
      // GPT-2 small's shape with GPT-2's initial weight scale. The vocabulary is 512, not 50257:
      // compiled models have small vocabularies, and (256, 1024, 50257) logits would be 52 GB.
      const Model gpt2 = testing::make_random_model(make_config(12, 12, 768, 3072, 1024, 512), 11, 0.02f);
      const std::string gpt2_name = "GPT-2 small: C 768, L 12, H 12, I 3072, P 1024, V 512";
      auto cuda = make_backend(gpt2, Device::Cuda);
      rows.push_back(bench_decode(*cuda, gpt2, gpt2_name, 2));
      std::printf("GPT-2 small decode done\n");
      rows.push_back(bench_prefill(*cuda, gpt2, gpt2_name, 256, 3));
    }
    print_table(rows);
  } catch (const UserError& error) {
    std::fputs(error.what(), stderr);
    return 1;
  }
  return 0;
}
