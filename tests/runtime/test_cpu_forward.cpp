// The CPU forward: padding, masks, captures, the KV-cache decoder and the FLOP count.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "runtime/cpu_backend.hpp"
#include "runtime/flops.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/each_kernel.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;

namespace {

// The shapes every test runs on: LayerNorm on and off, GELU and ReLU, with and without an MLP,
// one and several heads.
std::vector<ModelConfig> test_configs(bool causal) {
  return {make_config(2, 4, 16, 24, 9, 7, causal, true, Activation::Gelu),
          make_config(1, 1, 8, 0, 6, 3, causal, false, Activation::Gelu),
          make_config(3, 2, 12, 16, 8, 5, causal, false, Activation::Relu),
          make_config(1, 3, 6, 10, 5, 4, causal, true, Activation::Relu),
          // No blocks: the embeddings and ln_f alone (a compiled embedded map's shape).
          make_config(0, 1, 6, 0, 5, 4, causal, true, Activation::Gelu)};
}

// Two float32 computations of the same logits that sum in different orders (Eigen's GEMM for a
// batch, GEMV for one row, different blockings for different row counts) differ by rounding:
// about 2^-24 per operation, accumulated over at most a few hundred terms and three layers. 1e-5
// of the largest logit is far above that and far below any real difference.
double max_relative_difference(const float* a, const float* b, int n) {
  double scale = 1.0, diff = 0.0;
  for (int i = 0; i < n; ++i) {
    scale = std::max(scale, double(std::fabs(a[i])));
    diff = std::max(diff, double(std::fabs(a[i] - b[i])));
  }
  return diff / scale;
}
constexpr double kTolerance = 1e-5;

}  // namespace

// Every step of the forward is a row's or a sequence's own, computed the same way wherever the row
// lies (runtime/gemm.hpp, runtime/vector_ops.hpp), so a sequence's logits are the same bits in any
// batch: what a researcher comparing a batched run with a single one expects.
TEST_CASE("a padded batch gives each sequence the bits it gets alone, and zeros past its end") {
  testing::for_each_kernel([] {
  for (bool causal : {true, false})
    for (const ModelConfig& config : test_configs(causal)) {
      Model model = testing::make_random_model(config, 3);
      CpuBackend backend(model);
      std::mt19937 rng(5);
      std::vector<std::vector<int>> batch = {testing::random_tokens(model, 3, rng),
                                             testing::random_tokens(model, config.n_positions, rng),
                                             testing::random_tokens(model, 1, rng)};
      ForwardResult together = backend.forward(batch);
      REQUIRE(together.time == config.n_positions);
      CHECK(together.lengths == std::vector<int>{3, config.n_positions, 1});
      for (int b = 0; b < 3; ++b) {
        ForwardResult alone = backend.forward({batch[b]});
        for (int t = 0; t < int(batch[b].size()); ++t)
          CHECK(std::equal(together.logits_at(b, t), together.logits_at(b, t) + config.vocab_size,
                           alone.logits_at(0, t)));
        for (int t = int(batch[b].size()); t < together.time; ++t)
          for (int v = 0; v < config.vocab_size; ++v) CHECK(together.logits_at(b, t)[v] == 0.0f);
      }
    }
  });
}

TEST_CASE("a causal model's earlier positions ignore later tokens, a bidirectional one's do not") {
  for (bool causal : {true, false}) {
    Model model = testing::make_random_model(test_configs(causal)[0], 9);
    CpuBackend backend(model);
    ForwardResult short_run = backend.forward({{1, 2, 3}});
    ForwardResult long_run = backend.forward({{1, 2, 3, 4, 5}});
    double difference = max_relative_difference(short_run.logits_at(0, 1), long_run.logits_at(0, 1), 7);
    if (causal) CHECK(difference < kTolerance);
    else CHECK(difference > 1e-3);
  }
}

TEST_CASE("the captured residual stream and attention patterns are consistent with the logits") {
  for (bool causal : {true, false})
    for (const ModelConfig& config : test_configs(causal)) {
      Model model = testing::make_random_model(config, 4);
      CpuBackend backend(model);
      std::mt19937 rng(8);
      std::vector<std::vector<int>> batch = {testing::random_tokens(model, config.n_positions, rng),
                                             testing::random_tokens(model, 2, rng)};
      ForwardOptions options;
      options.capture_residual = true;
      options.capture_attention = true;
      ForwardResult r = backend.forward(batch, options);
      const int L = config.n_layer, H = config.n_head, T = r.time, C = config.n_embd, V = config.vocab_size;
      REQUIRE(r.residual.size() == size_t(2) * (2 * L + 1) * T * C);
      REQUIRE(r.attention.size() == size_t(2) * L * H * T * T);
      for (int b = 0; b < 2; ++b) {
        const int length = r.lengths[b];
        for (int t = 0; t < T; ++t) {
          // Stage 0 is the embedding, exactly.
          for (int c = 0; c < C; ++c) {
            float expected = t < length ? model.w.wte[batch[b][t] * C + c] + model.w.wpe[t * C + c] : 0.0f;
            CHECK(r.residual_at(b, 0, t)[c] == expected);
          }
          // ln_f and the unembedding of the last stage give the logits.
          std::vector<float> final_stream(C), logits(V);
          const float* last = r.residual_at(b, 2 * L, t);
          if (config.layer_norm) layernorm_forward(final_stream.data(), nullptr, nullptr, last, model.w.ln_f_w,
                                                   model.w.ln_f_b, 1, C);
          else std::copy(last, last + C, final_stream.begin());
          unembed_forward(logits.data(), final_stream.data(), transposed_embedding(model).data(), 1, C, V);
          if (t < length) CHECK(max_relative_difference(logits.data(), r.logits_at(b, t), V) < kTolerance);
          // Attention rows are distributions over the visible keys; padded queries are zero rows.
          for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
              const float* row = r.attention.data() + ((((size_t(b) * L + l) * H + h) * T + t) * T);
              double sum = 0;
              for (int j = 0; j < T; ++j) {
                bool visible = t < length && j < length && (!causal || j <= t);
                if (!visible) CHECK(row[j] == 0.0f);
                sum += row[j];
              }
              // Probabilities are normalised in float32: 1 within a few ulps per term.
              CHECK(sum == Approx(t < length ? 1.0 : 0.0).margin(1e-5));
            }
        }
      }
      if (config.n_inner == 0 && L > 0)  // without an MLP the stage after a block's MLP repeats its attention stage
        CHECK(std::equal(r.residual_at(0, 1, 0), r.residual_at(0, 1, 0) + T * C, r.residual_at(0, 2, 0)));
    }
}

TEST_CASE("the captured scores are the patterns before the softmax, and the final stream gives the logits") {
  for (bool causal : {true, false})
    for (const ModelConfig& config : test_configs(causal)) {
      Model model = testing::make_random_model(config, 6);
      CpuBackend backend(model);
      std::mt19937 rng(11);
      std::vector<std::vector<int>> batch = {testing::random_tokens(model, config.n_positions, rng),
                                             testing::random_tokens(model, 2, rng)};
      ForwardOptions options;
      options.capture_attention = options.capture_scores = options.capture_final = true;
      ForwardResult r = backend.forward(batch, options);
      const int L = config.n_layer, H = config.n_head, T = r.time, C = config.n_embd, V = config.vocab_size;
      REQUIRE(r.scores.size() == size_t(2) * L * H * T * T);
      REQUIRE(r.final.size() == size_t(2) * T * C);
      for (int b = 0; b < 2; ++b) {
        const int length = r.lengths[b];
        for (int t = 0; t < T; ++t) {
          for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
              const size_t row_at = (((size_t(b) * L + l) * H + h) * T + t) * T;
              const float* scores = r.scores.data() + row_at;
              const float* pattern = r.attention.data() + row_at;
              // Masked keys (later ones when causal, padding, every key of a padded query) are
              // -infinity; the softmax of the rest is the captured pattern.
              double max_score = -INFINITY, total = 0;
              for (int j = 0; j < T; ++j) {
                const bool visible = t < length && j < length && (!causal || j <= t);
                if (!visible) CHECK(scores[j] == -INFINITY);
                else max_score = std::max(max_score, double(scores[j]));
              }
              if (t >= length) continue;
              for (int j = 0; j < T; ++j)
                if (scores[j] != -INFINITY) total += std::exp(double(scores[j]) - max_score);
              for (int j = 0; j < T; ++j) {
                const double p = scores[j] == -INFINITY ? 0.0 : std::exp(double(scores[j]) - max_score) / total;
                CHECK(pattern[j] == Approx(p).margin(1e-6));  // float32 exp and sum against double
              }
            }
          // The final stream is what the unembedding reads.
          std::vector<float> logits(V);
          unembed_forward(logits.data(), r.final.data() + (size_t(b) * T + t) * C, transposed_embedding(model).data(), 1,
                          C, V);
          if (t < length) CHECK(max_relative_difference(logits.data(), r.logits_at(b, t), V) < kTolerance);
        }
      }
    }
}

TEST_CASE("the KV-cache decoder gives the logits of full recomputation at every step") {
  for (const ModelConfig& config : test_configs(true)) {
    Model model = testing::make_random_model(config, 21);
    CpuBackend backend(model);
    std::unique_ptr<Decoder> decoder = backend.decoder();
    std::mt19937 rng(2);
    std::vector<int> tokens = testing::random_tokens(model, config.n_positions, rng);
    for (int round = 0; round < 2; ++round) {  // the second round checks that reset() forgets
      decoder->reset();
      for (int t = 0; t < config.n_positions; ++t) {
        const float* step_logits = decoder->step(tokens[t]);
        CHECK(decoder->position() == t + 1);
        ForwardResult full = backend.forward({std::vector<int>(tokens.begin(), tokens.begin() + t + 1)});
        CHECK(max_relative_difference(step_logits, full.logits_at(0, t), config.vocab_size) < kTolerance);
      }
      std::reverse(tokens.begin(), tokens.end());
    }
  }
}

TEST_CASE("the runtime refuses what the model cannot take") {
  Model model = testing::make_random_model(test_configs(true)[1], 1);  // 6 positions, 3 tokens
  CpuBackend backend(model);
  CHECK_THROWS_WITH(backend.forward({{0, 1, 2, 0, 1, 2, 0}}),
                    "error: a sequence of 7 tokens is longer than the model's 6 positions\n");
  CHECK_THROWS_WITH(backend.forward({{0, 3}}), "error: token id 3 is outside the model's vocabulary (0..2)\n");
  std::unique_ptr<Decoder> decoder = backend.decoder();
  for (int t = 0; t < 6; ++t) decoder->step(t % 3);
  CHECK_THROWS_WITH(decoder->step(0), "error: the decoder already holds 6 tokens, the model's maximum; reset it or "
                                      "keep a shorter window\n");
  Model bidirectional = testing::make_random_model(test_configs(false)[1], 1);
  CpuBackend bidirectional_backend(bidirectional);
  CHECK_THROWS_WITH(bidirectional_backend.decoder(),
                    "error: this model is bidirectional, so it cannot decode token by token with a KV cache (every "
                    "position sees later ones); run it with `raspc run` instead\n");
  CHECK(backend.forward({}).logits.empty());
}

TEST_CASE("the analytic FLOP count equals the operations the forward performs") {
  for (bool causal : {true, false})
    for (const ModelConfig& config : test_configs(causal)) {
      Model model = testing::make_random_model(config, 6);
      CpuBackend backend(model);
      std::mt19937 rng(1);
      ForwardOptions options;
      options.count_flops = true;
      for (int length : {1, 4, config.n_positions}) {
        std::vector<std::vector<int>> batch = {testing::random_tokens(model, length, rng),
                                               testing::random_tokens(model, length, rng)};
        CHECK(backend.forward(batch, options).flops == 2 * forward_flops(config, length));
      }
      CHECK(backend.forward({{1}}).flops == 0.0);  // counted only on request
      if (!causal) continue;
      CpuDecoder decoder(model);
      for (int t = 0; t < config.n_positions; ++t) {
        decoder.step(t % config.vocab_size);
        CHECK(decoder.last_step_flops() == flops_per_token(config, t + 1));
      }
    }
}

TEST_CASE("the FLOP formula for GPT-2 shapes") {
  // The (aab)* model: C = 8, one head, V = 2, no LayerNorm, no MLP, 5 keys.
  // embedding 8 + c_attn 2*8*24 + 24 + attention 4*8*5 + 6*5 + 1 + c_proj 2*64 + 8 + residual 8
  // + unembedding 2*8*2.
  ModelConfig aab = make_config(1, 1, 8, 0, 5, 2, true, false, Activation::Gelu);
  CHECK(flops_per_token(aab, 5) == 8 + 408 + 191 + 136 + 8 + 32);
  // A causal forward over 5 tokens: token t attends to t + 1 keys.
  CHECK(forward_flops(aab, 5) == 5 * (8 + 408 + 1 + 136 + 8 + 32) + (1 + 2 + 3 + 4 + 5) * (32 + 6));
  // GPT-2 small at 1024 keys: 2 N for the N = 85M non-embedding weights, plus the attention over n
  // keys, 4 L n C (Kaplan et al.'s 2 L n C counts the scores; the weighted values cost as much
  // again), plus the unembedding; LayerNorms, softmax and GELU add well under 1%.
  ModelConfig small = make_config(12, 12, 768, 3072, 1024, 50257, true, true, Activation::Gelu);
  double per_token = flops_per_token(small, 1024);
  double kaplan = 2.0 * 12 * 12 * 768 * 768 + 4.0 * 12 * 1024 * 768 + 2.0 * 768 * 50257;
  CHECK(per_token / kaplan == Approx(1.0).epsilon(0.01));
}

TEST_CASE("greedy generation keeps BOS and the last tokens that fit, over the output tokens") {
  // Seed 10 gives a continuation that changes token several times (most random models settle on
  // one token at once, which would not show the window at work).
  Model model = testing::make_random_model(make_config(2, 2, 8, 16, 5, 6, true, false, Activation::Gelu), 10, 1.0f, true);
  model.metadata["output"] = {{"encoding", "categorical"}, {"token_ids", {2, 3, 4}}};
  CpuBackend backend(model);
  const std::vector<int> prompt = {1, 5};
  const std::vector<int> generated = generate_greedy(backend, model, prompt, 12);
  REQUIRE(generated.size() == 12);
  CHECK(std::count(generated.begin(), generated.end(), generated[0]) < 12);
  // The same by full recomputation over [BOS] + the last 4 tokens.
  std::vector<int> tokens = prompt;
  for (int i = 0; i < 12; ++i) {
    std::vector<int> window = {model.bos_id};
    window.insert(window.end(), tokens.end() - std::min<size_t>(tokens.size(), 4), tokens.end());
    ForwardResult r = backend.forward({window});
    const float* logits = r.logits_at(0, int(window.size()) - 1);
    int best = 2;
    for (int v : {3, 4})
      if (logits[v] > logits[best]) best = v;
    CHECK(generated[i] == best);
    tokens.push_back(best);
  }
}

TEST_CASE("the batched forward gives the same bits on every thread count") {
  // Every step is a row's or a sequence's own, computed at the same addresses whatever thread runs
  // it, so the split of the batch changes nothing: logits, every capture, patched runs and the FLOP
  // count, bit for bit. 48 sequences of the d64 model are work enough for 2 and 3 threads.
  for (bool causal : {true, false}) {
    const ModelConfig config = make_config(2, 4, 64, 256, 16, 16, causal, true, Activation::Gelu);
    Model model = testing::make_random_model(config, 2);
    std::mt19937 rng(8);
    std::vector<std::vector<int>> batch;
    for (int b = 0; b < 48; ++b) batch.push_back(testing::random_tokens(model, 1 + b % config.n_positions, rng));
    Interventions edits;
    ResidualPatch patch;  // a different table for each sequence
    patch.stage = 2;
    patch.dims = {3, 40};
    patch.per_sequence = true;
    for (size_t i = 0; i < batch.size() * config.n_positions * 2; ++i) patch.values.push_back(float(i % 7) - 3.0f);
    edits.residual.push_back(patch);
    edits.heads.push_back({1, 2, HeadEdit::Bos, {}});
    for (const Interventions* with : {static_cast<const Interventions*>(nullptr), static_cast<const Interventions*>(&edits)}) {
      ForwardOptions options;
      options.capture_residual = options.capture_attention = options.capture_scores = options.capture_final = true;
      options.capture_outputs = options.count_flops = true;
      options.interventions = with;
      const ForwardResult one = CpuBackend(model, 1).forward(batch, options);
      for (int threads : {2, 3}) {
        INFO("causal " << causal << ", threads " << threads << ", patched " << (with != nullptr));
        const ForwardResult many = CpuBackend(model, threads).forward(batch, options);
        CHECK(many.logits == one.logits);
        CHECK(many.residual == one.residual);
        CHECK(many.attention == one.attention);
        CHECK(many.scores == one.scores);
        CHECK(many.final == one.final);
        CHECK(many.z == one.z);
        CHECK(many.mlp_out == one.mlp_out);
        CHECK(many.flops == one.flops);
      }
      CHECK(one.flops > 0);
    }
  }
}
