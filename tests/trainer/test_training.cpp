// The training forward against the runtime, the data pipeline, determinism, and learning.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <tuple>

#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "runtime/forward.hpp"
#include "tests/runtime/each_kernel.hpp"
#include "tests/runtime/random_model.hpp"
#include "trainer/program_task.hpp"
#include "trainer/train.hpp"

using namespace raspc;

namespace {

std::string program_path(const std::string& name) { return std::string(RASPC_SOURCE_DIR) + "/programs/" + name; }

TaskOptions task_options(const std::string& vocab, int max_len, int train_min, int train_max) {
  TaskOptions o;
  o.input_vocab = parse_vocabulary(vocab);
  o.max_len = max_len;
  o.train_min = train_min;
  o.train_max = train_max;
  return o;
}

// Trains with `s` and this seed, stopping at the first evaluation with every held-out position
// right, and checks that one came.
TrainResult check_learns_to_100(Task& task, TrainSettings s, uint64_t seed) {
  s.eval_every = 50;
  s.seed = seed;
  s.stop_when_perfect = true;
  TrainResult r = train_model(task, s);
  INFO("seed " << seed << ": steps run " << r.steps_run << ", held-out token accuracy " << r.held_out.token_accuracy());
  CHECK(r.steps_to_100 > 0);
  CHECK(r.held_out.correct_positions == r.held_out.positions);
  return r;
}

}  // namespace

TEST_CASE("the training forward gives the runtime backend's logits") {
  struct Shape {
    bool causal, layer_norm;
    Activation activation;
    int inner;
  };
  for (Shape shape : {Shape{false, true, Activation::Gelu, 32}, Shape{true, true, Activation::Relu, 16},
                      Shape{true, false, Activation::Gelu, 0}}) {
    Model model;
    model.config = {2, 2, 16, shape.inner, 9, 11, shape.causal, shape.layer_norm, shape.activation};
    model.vocab.resize(11);
    for (int i = 0; i < 11; ++i) model.vocab[i] = "t" + std::to_string(i);
    model.allocate();
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 0.3f);
    for (float& x : model.storage) x = normal(rng);

    // Three sequences of lengths 9, 5 and 2, padded to 9.
    const std::vector<int> lengths = {9, 5, 2};
    std::vector<std::vector<int>> batch;
    std::vector<int> tokens(3 * 9, 0);
    for (int b = 0; b < 3; ++b) {
      batch.emplace_back();
      for (int t = 0; t < lengths[b]; ++t) batch[b].push_back(tokens[b * 9 + t] = int(rng() % 11));
    }
    ForwardResult expected = make_backend(model)->forward(batch);
    Network<float> network(model, 3);
    network.forward(tokens.data(), lengths.data(), nullptr, 3, 9);
    for (int b = 0; b < 3; ++b)
      for (int t = 0; t < lengths[b]; ++t)
        for (int v = 0; v < 11; ++v) {
          const float want = expected.logits_at(b, t)[v], got = network.logits()[(b * 9 + t) * 11 + v];
          // Both are float32 GPT-2 forwards with different summation orders (Eigen blocking,
          // fused vs separate ops): logits of size ~1 agree to a few ulps times the depth.
          CHECK(std::abs(got - want) <= 1e-4f * (1 + std::abs(want)));
        }
  }
}

// The runtime's float forward against the trainer's double-precision one (Eigen, none of the
// runtime's kernels), on every instruction set's kernels, at widths that end a row every way for 4,
// 8 and 16 lanes (15, 31, 61: four vectors left after blocks of four), with a residual dimension
// of +-400 as compiled models have: a LayerNorm that left out a row's last vector shifted such a
// model's logits by 9.8 (the interop run caught it; bench/RESULTS.md, "Interop").
TEST_CASE("the CPU forward gives the double-precision forward's logits on every kernel and width") {
  for (int C : {15, 31, 61}) {
    Model model = testing::make_random_model({2, C == 15 ? 3 : 1, C, 24, 9, 11, true, true, Activation::Gelu}, 7);
    std::mt19937 rng(7);
    for (int v = 0; v < 11; ++v) model.w.wte[size_t(v) * C + C - 1] = v % 2 ? 400.0f : -400.0f;  // the last lane
    const std::vector<int> lengths = {9, 4};
    std::vector<std::vector<int>> batch(2);
    std::vector<int> tokens(2 * 9, 0);
    for (int b = 0; b < 2; ++b)
      for (int t = 0; t < lengths[b]; ++t) batch[b].push_back(tokens[b * 9 + t] = int(rng() % 11));
    Network<double> reference(model, 2);
    reference.forward(tokens.data(), lengths.data(), nullptr, 2, 9);
    testing::for_each_kernel([&] {
      ForwardResult got = make_backend(model, Device::Cpu, 1)->forward(batch);
      for (int b = 0; b < 2; ++b)
        for (int t = 0; t < lengths[b]; ++t)
          for (int v = 0; v < 11; ++v) {
            const double want = reference.logits()[(b * 9 + t) * 11 + v];
            INFO("n_embd " << C << ", sequence " << b << ", position " << t << ", token " << v);
            // float32 against double over two layers: a few units of float rounding of the
            // largest terms (the +-400 dimension normalised, times weights ~0.3).
            CHECK(std::abs(got.logits_at(b, t)[v] - want) <= 1e-4 * (1 + std::abs(want)));
          }
    });
  }
}

TEST_CASE("the task's vocabulary is BOS, the input symbols, then the output values") {
  LoadedProgram hist = load_program(program_path("hist.rasp"));
  Task task(hist.labeller(Mode::Bidirectional), task_options("ab", 3, 1, 3));
  CHECK(task.vocab() == std::vector<std::string>{"BOS", "a", "b", "1", "2", "3"});
  CHECK(task.input_ids() == std::vector<int>{1, 2});
  CHECK(task.output_ids() == std::vector<int>{3, 4, 5});
  std::vector<int> targets;
  CHECK(task.label({0, 0, 1}, targets));  // "aab" -> 2 2 1
  CHECK(targets == std::vector<int>{-1, 4, 4, 3});
}

TEST_CASE("positions where the program is undefined are masked out") {
  // A mean over strings is undefined wherever two equal tokens select each other.
  LoadedProgram program = program_from_text("test.rasp", "aggregate(select(tokens, tokens, ==), tokens);");
  Task task(program.labeller(Mode::Bidirectional), task_options("ab", 3, 1, 3));
  std::vector<int> targets;
  CHECK(task.label({0, 1}, targets));  // "ab" -> a b
  CHECK(targets == std::vector<int>{-1, 1, 2});
  CHECK_FALSE(task.label({0, 0, 1}, targets));  // "aab": undefined
  CHECK(targets == std::vector<int>{-1, -1, -1, -1});
}

TEST_CASE("training inputs never come from the held-out set") {
  LoadedProgram hist = load_program(program_path("hist.rasp"));
  Task task(hist.labeller(Mode::Bidirectional), task_options("abc", 6, 2, 4));
  std::set<std::vector<int>> held_out;
  for (const HeldOutSet& set : task.held_out()) {
    // At a training length at most a quarter of the 3^L inputs are held out; beyond, up to 256.
    const size_t space = size_t(std::pow(3, set.length));
    const bool trained = set.length >= 2 && set.length <= 4;
    CHECK(set.tokens.size() == std::min<size_t>(256, trained ? space / 4 : space));
    for (const auto& tokens : set.tokens) held_out.insert(tokens);
  }
  CHECK(held_out.size() == 3 + 2 + 6 + 20 + 243 + 256);  // all distinct, lengths 1..6
  Batch batch;
  batch.tokens.assign(64 * 7, 0);
  batch.targets.assign(64 * 7, 0);
  batch.lengths.assign(64, 0);
  std::mt19937_64 rng(1);
  long drawn = 0;
  for (int step = 0; step < 50; ++step) {
    task.fill_batch(batch, 64, rng);
    for (int b = 0; b < 64; ++b) {
      CHECK(batch.lengths[b] >= 3);
      CHECK(batch.lengths[b] <= 5);
      std::vector<int> tokens(batch.tokens.begin() + b * batch.T, batch.tokens.begin() + b * batch.T + batch.lengths[b]);
      CHECK(held_out.count(tokens) == 0);
      ++drawn;
    }
  }
  CHECK(drawn == 3200);
}

TEST_CASE("the same seed gives the same model") {
  LoadedProgram hist = load_program(program_path("hist.rasp"));
  TrainSettings s;
  s.layers = 1;
  s.heads = 2;
  s.d_model = 8;
  s.steps = 30;
  s.batch = 8;
  s.eval_every = 10;
  auto run = [&](uint64_t seed) {
    Task task(hist.labeller(Mode::Bidirectional), task_options("abc", 5, 1, 5));
    s.seed = seed;
    return train_model(task, s);
  };
  TrainResult first = run(3), second = run(3), other = run(4);
  CHECK(first.model.storage == second.model.storage);
  CHECK(first.final_loss == second.final_loss);
  CHECK(first.model.metadata == second.model.metadata);
  CHECK(first.model.storage != other.model.storage);
}

TEST_CASE("the held-out set leaves every output of every symbol at every training length to training") {
  // Histogram over abcd at lengths 1-4: "dddd" is the only input where d counts 4 at length 4,
  // "bb" the only one where b counts 2 at length 2. None of these sole witnesses may be held out.
  LoadedProgram hist = load_program(program_path("hist.rasp"));
  Task task(hist.labeller(Mode::Bidirectional), task_options("abcd", 4, 1, 4));
  std::set<std::tuple<int, int, int>> trained, held;
  std::vector<int> symbols, targets;
  for (int L = 1; L <= 4; ++L)
    for (int i = 0; i < (1 << (2 * L)); ++i) {
      symbols.assign(L, 0);
      for (int p = 0, rest = i; p < L; ++p, rest /= 4) symbols[p] = rest % 4;
      REQUIRE(task.label(symbols, targets));
      for (int p = 0; p < L; ++p) (task.is_held_out(symbols) ? held : trained).insert({L, symbols[p], targets[p + 1]});
    }
  CHECK(trained.size() == 4 * (1 + 2 + 3 + 4));  // every symbol with every count 1..L at each L
  for (const auto& triple : held) CHECK(trained.count(triple) == 1);
  CHECK_FALSE(task.is_held_out({3, 3, 3, 3}));
  CHECK_FALSE(task.is_held_out({1, 1}));
  long held_out = 0;
  for (const HeldOutSet& set : task.held_out()) held_out += long(set.tokens.size());
  // A quarter of 4^L at each length, but none at length 1: each of its inputs is the only one
  // where its symbol counts 1 at length 1.
  CHECK(task.held_out()[0].tokens.empty());
  CHECK(held_out == 0 + 4 + 16 + 64);
}

// Both runs below are deterministic (fixed seeds) and take about a second each. Histogram needs
// strong weight decay (1.0) to generalise from the few hundred inputs of lengths 1-4, and a
// learning rate low enough that it settles: at 1e-2 the loss spiked throughout and whether an
// evaluation caught 100% was the seed's luck. With these settings every seed 1-16 reached 100% by
// step 1200 of 3000 and stayed there (bench/RESULTS.md, Trainer), so two seeds are checked.
TEST_CASE("a trained model learns histogram to 100% held-out accuracy") {
  LoadedProgram hist = load_program(program_path("hist.rasp"));
  for (uint64_t seed : {1, 2}) {
    Task task(hist.labeller(Mode::Bidirectional), task_options("abcd", 4, 1, 4));
    TrainSettings s;
    s.layers = 1;
    s.heads = 4;
    s.d_model = 32;
    s.batch = 64;
    s.learning_rate = 2e-3f;
    s.weight_decay = 1.0f;
    s.steps = 3000;
    TrainResult r = check_learns_to_100(task, s, seed);
    INFO("seed " << seed);
    CHECK(r.held_out.correct_sequences == r.held_out.sequences);
    CHECK(r.held_out.sequences == 0 + 4 + 16 + 64);  // as in the test of the held-out set above
  }
}

// aab reached 100% by step 200 of 1000 for every seed 1-8.
TEST_CASE("a trained model learns aab to 100% held-out accuracy") {
  LoadedProgram aab = load_program(program_path("aab.rasp"));
  for (uint64_t seed : {1, 2}) {
    Task task(aab.labeller(Mode::Causal), task_options("ab", 8, 1, 8));
    TrainSettings s;
    s.layers = 1;
    s.heads = 1;
    s.d_model = 16;
    s.causal = true;
    s.batch = 32;
    s.learning_rate = 1e-2f;
    s.steps = 1000;
    check_learns_to_100(task, s, seed);
  }
}
