// Whole models on CPU and CUDA: random models of several shapes (logits, residual stream and
// attention patterns of padded batches, and the KV-cache decoder step by step), and the hand-set
// (aab)* model.
#ifdef RASPC_WITH_CUDA
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "runtime/cpu_backend.hpp"
#include "runtime/forward.hpp"
#include "runtime/handset_aab.hpp"
#include "tests/cuda/parity.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;
using testing::require_close;

namespace {

// LayerNorm on and off, GELU and ReLU, with and without an MLP, one to eight heads, head widths
// from 4 to 48, contexts shorter and longer than a warp.
std::vector<ModelConfig> parity_configs() {
  return {make_config(1, 1, 8, 32, 16, 5, true, true, Activation::Gelu),
          make_config(2, 4, 64, 256, 16, 12, true, true, Activation::Gelu),
          make_config(3, 3, 48, 0, 24, 7, false, false, Activation::Relu),
          make_config(2, 8, 32, 64, 40, 9, false, true, Activation::Relu),
          make_config(1, 2, 96, 128, 70, 33, true, false, Activation::Gelu),
          make_config(2, 2, 40, 80, 33, 6, false, true, Activation::Gelu),
          // No blocks: a compiled embedded map's shape (the embeddings and ln_f alone).
          make_config(0, 1, 24, 0, 16, 9, true, true, Activation::Gelu)};
}

std::string describe(const ModelConfig& c) {
  return "layers " + std::to_string(c.n_layer) + ", heads " + std::to_string(c.n_head) + ", embd " +
         std::to_string(c.n_embd) + ", inner " + std::to_string(c.n_inner) + ", positions " +
         std::to_string(c.n_positions) + (c.causal ? ", causal" : ", bidirectional") +
         (c.layer_norm ? ", LayerNorm" : ", no LayerNorm") +
         (c.activation == Activation::Gelu ? ", GELU" : ", ReLU");
}

// A batch with a full-length sequence, a short one, an empty one and one of one token.
std::vector<std::vector<int>> padded_batch(const Model& model, std::mt19937& rng) {
  const int P = model.config.n_positions;
  return {testing::random_tokens(model, P, rng), testing::random_tokens(model, P / 2, rng), {},
          testing::random_tokens(model, 1, rng)};
}

void require_same_forward(const ForwardResult& cuda, const ForwardResult& cpu, const std::string& what) {
  REQUIRE(cuda.batch == cpu.batch);
  REQUIRE(cuda.time == cpu.time);
  REQUIRE(cuda.vocab == cpu.vocab);
  REQUIRE(cuda.n_embd == cpu.n_embd);
  REQUIRE(cuda.n_layer == cpu.n_layer);
  REQUIRE(cuda.n_head == cpu.n_head);
  REQUIRE(cuda.lengths == cpu.lengths);
  require_close(cuda.logits, cpu.logits, what + ": logits");
  require_close(cuda.residual, cpu.residual, what + ": residual stream");
  require_close(cuda.attention, cpu.attention, what + ": attention patterns");
}

}  // namespace

TEST_CASE("cuda: random models give the CPU's logits, residual stream and attention patterns") {
  std::mt19937 rng(11);
  for (const ModelConfig& config : parity_configs()) {
    Model model = testing::make_random_model(config, 17);
    auto cpu = make_backend(model, Device::Cpu);
    auto cuda = make_backend(model, Device::Cuda);
    CHECK(cuda->name() == "cuda");
    const auto batch = padded_batch(model, rng);
    ForwardOptions capture;
    capture.capture_residual = capture.capture_attention = true;
    require_same_forward(cuda->forward(batch, capture), cpu->forward(batch, capture), describe(config));
    // Without captures the logits are the same computation, bit for bit.
    ForwardResult plain = cuda->forward(batch);
    CHECK(plain.residual.empty());
    CHECK(plain.attention.empty());
    CHECK(plain.logits == cuda->forward(batch, capture).logits);
    // A smaller batch after a larger one reuses the activations (the views are laid out again).
    const std::vector<std::vector<int>> single = {batch[1]};
    require_close(cuda->forward(single).logits, cpu->forward(single).logits, describe(config) + ": batch of one");
  }
}

TEST_CASE("cuda: the KV-cache decoder gives the CPU decoder's logits at every step, and again after reset") {
  std::mt19937 rng(12);
  for (const ModelConfig& config : parity_configs()) {
    if (!config.causal) continue;
    Model model = testing::make_random_model(config, 19);
    auto cpu = make_backend(model, Device::Cpu);
    auto cuda = make_backend(model, Device::Cuda);
    const std::vector<int> tokens = testing::random_tokens(model, config.n_positions, rng);
    auto cpu_decoder = cpu->decoder();
    auto cuda_decoder = cuda->decoder();
    const ForwardResult whole = cuda->forward({tokens});
    for (int round = 0; round < 2; ++round) {
      cpu_decoder->reset();
      cuda_decoder->reset();
      for (size_t t = 0; t < tokens.size(); ++t) {
        const int V = config.vocab_size;
        const float* cpu_logits = cpu_decoder->step(tokens[t]);
        const float* cuda_logits = cuda_decoder->step(tokens[t]);
        CHECK(cuda_decoder->position() == int(t) + 1);
        const std::string step = describe(config) + ", round " + std::to_string(round) + ", step " + std::to_string(t);
        require_close(std::vector<float>(cuda_logits, cuda_logits + V), std::vector<float>(cpu_logits, cpu_logits + V),
                      step + ": decoder against the CPU decoder");
        require_close(std::vector<float>(cuda_logits, cuda_logits + V),
                      std::vector<float>(whole.logits_at(0, int(t)), whole.logits_at(0, int(t)) + V),
                      step + ": decoder against the whole forward");
      }
    }
  }
}

TEST_CASE("cuda: a decoder outlives its backend") {
  Model model = testing::make_random_model(parity_configs()[0], 23);
  auto cpu_decoder = make_backend(model, Device::Cpu)->decoder();
  auto cuda_decoder = make_backend(model, Device::Cuda)->decoder();  // the backend is gone at once
  for (int token : {1, 4, 2}) {
    const float* cpu_logits = cpu_decoder->step(token);
    const float* cuda_logits = cuda_decoder->step(token);
    const int V = model.config.vocab_size;
    require_close(std::vector<float>(cuda_logits, cuda_logits + V), std::vector<float>(cpu_logits, cpu_logits + V),
                  "decoder after its backend");
  }
}

TEST_CASE("cuda: the hand-set (aab)* model") {
  Model model = make_handset_aab();
  auto cpu = make_backend(model, Device::Cpu);
  auto cuda = make_backend(model, Device::Cuda);
  // Every window the post's test feeds it, as one padded batch.
  const std::string text = "aabaabaabaab";
  std::vector<std::vector<int>> windows;
  for (size_t end = 1; end <= text.size(); ++end) {
    std::vector<int> window;
    for (size_t i = end > 5 ? end - 5 : 0; i < end; ++i) window.push_back(model.token_id(std::string(1, text[i])));
    windows.push_back(window);
  }
  ForwardOptions capture;
  capture.capture_residual = capture.capture_attention = true;
  require_same_forward(cuda->forward(windows, capture), cpu->forward(windows, capture), "(aab)*");

  const AabScore score = score_handset_aab(*cuda, model);
  CHECK(score.correct == 27);
  CHECK(score.total == 27);
  auto complete = [&](const std::string& prompt) {
    std::vector<int> tokens;
    for (char c : prompt) tokens.push_back(model.token_id(std::string(1, c)));
    std::string completion;
    for (int id : generate_greedy(*cuda, model, tokens, 10)) completion += model.vocab[id];
    return completion;
  };
  CHECK(complete("a") == "baabaabaab");
  CHECK(complete("ba") == "abaabaabaa");
  CHECK(complete("abaab") == "aabaabaaba");
  CHECK(complete("ababa") == "abaabaabaa");
  CHECK(complete("bbbbb") == "aabaabaaba");
}

#endif  // RASPC_WITH_CUDA
