// The loss curve of a fixed seed, against the one the trainer gave before its forward, backward
// and optimizer were rewritten for speed (Eigen's attention products, vectorised GELU and AdamW,
// the batch split over threads): the same arithmetic up to float rounding.
#include <catch2/catch.hpp>

#include <cmath>

#include "language/input.hpp"
#include "trainer/program_task.hpp"
#include "trainer/train.hpp"

using namespace raspc;

namespace {

// Histogram over abc at lengths 1-6 (padding in every batch), 2 layers, 2 heads, d_model 16,
// batch 16, seed 5: the losses of steps 0..39 as the trainer of commit 85ba487 printed them.
const std::vector<double> kLossesBefore = {
    2.33960748, 2.2458241,  2.14926386, 2.15503573, 2.19466567, 2.05560708, 2.01179838, 2.06244254,
    1.99134254, 2.00598359, 1.87951398, 1.87377095, 1.79937959, 1.81142843, 1.79304445, 1.79979181,
    1.62722468, 1.80262077, 1.74553406, 1.55179477, 1.53718626, 1.59702432, 1.66834271, 1.60743034,
    1.73333263, 1.60659492, 1.58334529, 1.42969716, 1.65262163, 1.64454174, 1.76175165, 1.53359103,
    1.36941075, 1.68046308, 1.46994579, 1.46784329, 1.46774936, 1.43115234, 1.71506608, 1.61473095};

std::vector<double> loss_curve(int threads) {
  LoadedProgram hist = load_program(std::string(RASPC_SOURCE_DIR) + "/programs/hist.rasp");
  TaskOptions o;
  o.input_vocab = parse_vocabulary("abc");
  o.max_len = 6;
  o.train_min = 1;
  o.train_max = 6;
  Task task(hist.labeller(Mode::Bidirectional), o);
  TrainSettings s;
  s.layers = 2;
  s.heads = 2;
  s.d_model = 16;
  s.batch = 16;
  s.steps = int(kLossesBefore.size());
  s.eval_every = 1000;
  s.seed = 5;
  s.threads = threads;
  std::vector<double> losses;
  train_model(task, s, [&](const TrainProgress& p) { losses.push_back(p.loss); });
  return losses;
}

// Float rounding (sums in another order: Eigen's products in attention, the vectorised tanh, the
// threads' partial gradients) moved these 40 losses by at most 2e-7 (one thread) and 3e-7 (three)
// relative; a changed formula moves them by 1e-2 and more within a few steps.
constexpr double kTolerance = 1e-5;

}  // namespace

TEST_CASE("the loss curve of a fixed seed is the one before the speed-ups, on one thread and on three") {
  for (int threads : {1, 3}) {
    INFO(threads << " threads");
    std::vector<double> losses = loss_curve(threads);
    REQUIRE(losses.size() == kLossesBefore.size());
    for (size_t step = 0; step < losses.size(); ++step) {
      INFO("step " << step << ": " << losses[step] << " against " << kLossesBefore[step]);
      CHECK(std::fabs(losses[step] - kLossesBefore[step]) <= kTolerance * kLossesBefore[step]);
    }
  }
}

TEST_CASE("three threads give the same curve bit for bit on every run") {
  CHECK(loss_curve(3) == loss_curve(3));
}
