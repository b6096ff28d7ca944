// The CPU runtime's speed, one thread: the core's multiply-add peak and the GEMM kernel's rate,
// per-token decode latency with the KV cache, and batched forward throughput as a fraction of the
// GEMM rate measured in the same run; last, the batched forward on every core.
//   runtime_bench [SECONDS_PER_MEASUREMENT]
// Figures are recorded in bench/RESULTS.md, section "Runtime". Times are the thread's CPU time
// (the build machines are shared; wall time is printed beside it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <Eigen/Core>

#include "runtime/cpu_backend.hpp"
#include "runtime/flops.hpp"
#include "runtime/gemm.hpp"
#include "runtime/handset_aab.hpp"
#include "bench/core_peak.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;

namespace {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  double cpu = 0, wall = 0;
  long reps = 0;
};

// Repeats `work` until it has used `budget` seconds of CPU time (after one warm-up call).
template <class Work>
Timing measure(double budget, Work work) {
  work();
  Timing t;
  double cpu0 = bench::thread_cpu_seconds(), wall0 = wall_seconds();
  while (bench::thread_cpu_seconds() - cpu0 < budget) {
    work();
    ++t.reps;
  }
  t.cpu = bench::thread_cpu_seconds() - cpu0;
  t.wall = wall_seconds() - wall0;
  return t;
}

float sink = 0;  // keeps results alive

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 1.0;
  Eigen::setNbThreads(1);
  std::printf("runtime_bench: one thread, %.1f s of CPU time per measurement\n\n", budget);

  // The kernel's float GEMM rate (runtime/gemm.hpp, the instruction set it chose): the square 512
  // product, and the batched forward's four products below (1,024 rows: 64 sequences x 16).
  std::printf("GEMM kernel: %s\n", gemm_isa_name(gemm_isa()));
  const double peak = bench::madd_peak_gflops(gemm_isa(), std::min(budget, 0.5));
  if (peak > 0) std::printf("this core's multiply-add peak now (registers only): %.1f GFLOP/s\n", peak);
  auto of_peak = [&](double rate) {
    char text[48] = "";
    if (peak > 0) std::snprintf(text, sizeof text, " (%.0f%% of the peak)", 100 * rate * 1e-9 / peak);
    return std::string(text);
  };
  struct GemmShape {
    int N, K, M;
  };
  auto gemm_rate_of = [&](std::initializer_list<GemmShape> shapes) {
    std::mt19937 fill(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    auto random_matrix = [&](int rows, int cols) {
      std::vector<float> m(size_t(rows) * cols);
      for (float& x : m) x = u(fill);
      return m;
    };
    std::vector<std::vector<float>> a, b, c;
    double flops_per_round = 0;
    for (const GemmShape& s : shapes) {
      a.push_back(random_matrix(s.N, s.K));
      b.push_back(random_matrix(s.K, s.M));
      c.emplace_back(size_t(s.N) * s.M, 0.0f);
      flops_per_round += 2.0 * s.N * s.K * s.M;
    }
    Timing t = measure(budget, [&] {
      size_t i = 0;
      for (const GemmShape& s : shapes) {
        gemm_nn(c[i].data(), a[i].data(), b[i].data(), s.N, s.K, s.M, false);
        sink += c[i][0];
        ++i;
      }
    });
    return flops_per_round * t.reps / t.cpu;
  };
  const double gemm_rate = gemm_rate_of({{512, 512, 512}});
  std::printf("float GEMM 512x512x512: %.1f GFLOP/s%s\n", gemm_rate * 1e-9, of_peak(gemm_rate).c_str());
  const double forward_gemm_rate = gemm_rate_of({{1024, 64, 192}, {1024, 64, 64}, {1024, 64, 256}, {1024, 256, 64}});
  std::printf("float GEMM, the batched forward's products (1024x64x192, 1024x64x64, 1024x64x256, 1024x256x64): "
              "%.1f GFLOP/s%s\n\n", forward_gemm_rate * 1e-9, of_peak(forward_gemm_rate).c_str());

  // Decode latency: feed a whole context token by token, reset, repeat.
  Model aab = make_handset_aab();
  const ModelConfig config = make_config(2, 4, 64, 256, 16, 16);  // the d64 reference model
  Model random = testing::make_random_model(config, 1);
  std::printf("%-34s %10s %10s %12s %10s\n", "decode (KV cache)", "tokens", "us/token", "us/token wall", "GFLOP/s");
  for (const Model* model : {&aab, &random}) {
    CpuDecoder decoder(*model);
    const int P = model->config.n_positions;
    Timing t = measure(budget, [&] {
      decoder.reset();
      for (int i = 0; i < P; ++i) sink += decoder.step(i % model->config.vocab_size)[0];
    });
    double tokens = double(t.reps) * P;
    double flops = double(t.reps) * forward_flops(model->config, P);
    char name[64];
    std::snprintf(name, sizeof name, "%s (context %d)", model == &aab ? "(aab)* hand-set" : "d64 L2 H4 MLP256", P);
    std::printf("%-34s %10.0f %10.3f %12.3f %10.2f\n", name, tokens, 1e6 * t.cpu / tokens, 1e6 * t.wall / tokens,
                flops / t.cpu * 1e-9);
  }

  // Batched throughput: 64 sequences of 16 tokens in one forward.
  CpuBackend backend(random);
  std::mt19937 rng(3);
  std::vector<std::vector<int>> batch;
  for (int i = 0; i < 64; ++i) batch.push_back(testing::random_tokens(random, 16, rng));
  Timing t = measure(budget, [&] { sink += backend.forward(batch).logits[0]; });
  double flops = double(t.reps) * 64 * forward_flops(config, 16);
  double rate = flops / t.cpu;
  std::printf("\nbatched forward, batch 64 x context 16 (d64 model): %.2f GFLOP/s, %.0f tokens/s, "
              "%.0f%% of the GEMM rate (wall %.0f%% of CPU)\n",
              rate * 1e-9, t.reps * 64.0 * 16 / t.cpu, 100 * rate / gemm_rate, 100 * t.cpu / t.wall);

  // The same forward with its sequences split over every core (identical results, runtime/cpu_backend.hpp).
  const int cores = available_cores();
  CpuBackend every_core(random, cores);
  Timing all = measure(budget, [&] { sink += every_core.forward(batch).logits[0]; });
  std::printf("batched forward on %d threads: %.0f tokens/s wall (%.2fx one thread's wall rate)\n", cores,
              all.reps * 64.0 * 16 / all.wall, (all.reps / all.wall) / (t.reps / t.wall));
  return sink == 12345.0f ? 1 : 0;
}
