// Training throughput for the reference configuration: n_embd 64, 2 layers, 4 heads, MLP 256,
// batch 32, length 16 (plus BOS), bidirectional, LayerNorm and GELU.
//
//   train_bench [steps]
//
// Prints steps per second for (1) forward + backward + AdamW on a fixed batch, (2) the full
// training step of histogram (fresh inputs labelled by the interpreter, all of length 16), both by
// wall clock and by this process's CPU time (the CPU figure is the one to compare on a shared machine),
// one thread; and (1) again on every core (Network's threads, `raspc train --threads 0`).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "trainer/network.hpp"
#include "trainer/optimizer.hpp"
#include "trainer/program_task.hpp"
#include "trainer/task.hpp"
#include "trainer/train.hpp"

using namespace raspc;

namespace {

struct Timer {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  double wall_seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(); }
  double cpu_seconds() const { return double(std::clock() - cpu) / CLOCKS_PER_SEC; }
};

void report(const char* what, int steps, const Timer& timer, double flops_per_step) {
  const double wall = timer.wall_seconds(), cpu = timer.cpu_seconds();
  std::printf("%-46s %8.1f steps/s wall  %8.1f steps/s CPU  %6.2f GFLOP/s (CPU)\n", what, steps / wall, steps / cpu,
              flops_per_step * steps / cpu / 1e9);
}

// programs/ beside bench/, found from this source file's own path.
std::string programs_folder() {
  std::string here = __FILE__;
  return here.substr(0, here.rfind('/')) + "/../programs";
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const int B = 32, T = 17;
  TrainSettings settings;
  settings.layers = 2;
  settings.heads = 4;
  settings.d_model = 64;
  settings.batch = B;
  settings.steps = steps;

  Model model;
  model.config = {2, 4, 64, 256, T, 16, false, true, Activation::Gelu};
  model.allocate();
  initialise_parameters(model, 1);
  // Training FLOPs ~ 3x the forward's matmuls: 2 * parameters-in-matmuls per token, times 3.
  const double C = 64, I = 256, V = 16;
  const double matmul_params = 2 * (3 * C * C + C * C + 2 * C * I) + V * C;
  const double flops_per_step = 3 * 2 * matmul_params * B * T;

  auto fixed_batch = [&](int threads) {
    Network<float> net(model, B, threads);
    AdamW optimizer(model.config, OptimizerSettings{});
    std::mt19937 rng(1);
    std::vector<int> tokens(B * T), targets(B * T), lengths(B, T);
    for (int i = 0; i < B * T; ++i) {
      tokens[i] = i % T == 0 ? 0 : int(rng() % 16);
      targets[i] = i % T == 0 ? -1 : int(rng() % 16);
    }
    for (int s = 0; s < 10; ++s) net.forward(tokens.data(), lengths.data(), targets.data(), B, T);  // warm up
    Timer timer;
    for (int s = 0; s < steps; ++s) {
      net.forward(tokens.data(), lengths.data(), targets.data(), B, T);
      net.backward();
      optimizer.update(net.params.data(), net.grads.data(), s);
    }
    return timer;
  };
  report("forward + backward + AdamW (fixed batch)", steps, fixed_batch(1), flops_per_step);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  if (cores > 1) {
    // Wall clock is the figure here (CPU time adds up over the threads).
    Timer timer = fixed_batch(cores);
    std::printf("%-46s %8.1f steps/s wall  (%d threads, --threads 0)\n", "the same, every core", steps / timer.wall_seconds(),
                cores);
  }
  {
    LoadedProgram program = load_program(programs_folder() + "/hist.rasp");
    TaskOptions options;
    options.input_vocab = parse_vocabulary("abcd");
    options.max_len = 16;
    options.train_min = options.train_max = 16;
    Task task(program.labeller(Mode::Bidirectional), options);
    settings.eval_every = steps + 1;  // no held-out evaluation inside the timing
    Timer timer;
    train_model(task, settings);
    report("full training step, histogram (interpreter)", steps, timer, flops_per_step);
  }
  return 0;
}
