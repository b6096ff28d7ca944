// The hand-set (aab)* model of the post: its completions, its score, and its file.
#include <catch2/catch.hpp>

#include <cstdio>

#include "runtime/cpu_backend.hpp"
#include "runtime/flops.hpp"
#include "runtime/handset_aab.hpp"
#include "runtime/safetensors.hpp"

using namespace raspc;

namespace {

std::string complete(Backend& backend, const Model& model, const std::string& prompt, int count) {
  std::vector<int> tokens;
  for (char c : prompt) tokens.push_back(model.token_id(std::string(1, c)));
  std::string text;
  for (int id : generate_greedy(backend, model, tokens, count)) text += model.vocab[id];
  return text;
}

}  // namespace

TEST_CASE("the hand-set (aab)* model completes the post's prompts") {
  Model model = make_handset_aab();
  CpuBackend backend(model);
  CHECK(complete(backend, model, "a", 10) == "baabaabaab");
  CHECK(complete(backend, model, "ba", 10) == "abaabaabaa");
  CHECK(complete(backend, model, "abaab", 10) == "aabaabaaba");
  // Outside the task, as in the post.
  CHECK(complete(backend, model, "ababa", 10) == "abaabaabaa");
  CHECK(complete(backend, model, "bbbbb", 10) == "aabaabaaba");
}

TEST_CASE("the hand-set (aab)* model scores 27/27 on the unambiguous positions") {
  Model model = make_handset_aab();
  CpuBackend backend(model);
  AabScore score = score_handset_aab(backend, model);
  CHECK(score.correct == 27);
  CHECK(score.total == 27);
}

TEST_CASE("the hand-set (aab)* model is the post's weights") {
  Model model = make_handset_aab();
  CHECK(parameter_count(model.config) == 2 * 8 + 5 * 8 + 8 * 24 + 24 + 8 * 8 + 8);
  CHECK(model.w.layers[0].attn_w[3 * 24 + 2] == 1024.0f);   // q: position 3 attends to position 2 ...
  CHECK(model.w.layers[0].attn_w[3 * 24 + 3] == 1024.0f);   // ... and to itself
  CHECK(model.w.layers[0].attn_w[3 * 24 + 8 + 3] == 1.0f);  // k: position 3
  CHECK(model.w.layers[0].attn_w[6 * 24 + 16 + 7] == -1.0f);  // v: b -> -1
  CHECK(model.w.layers[0].attn_proj_b[5] == 1024.0f);
  // About 4,000 FLOPs for a 5-token prediction, the design's seed figure: 3,535 for the causal
  // forward over 5 tokens, 783 for the last token alone.
  CHECK(forward_flops(model.config, 5) == 3535);
  CHECK(flops_per_token(model.config, 5) == 783);
}

TEST_CASE("the hand-set (aab)* model generates the same from its file") {
  std::string path = std::string("runtime_test_aab.safetensors");
  save_model(make_handset_aab(), path);
  Model model = load_model(path);
  std::remove(path.c_str());
  CHECK(model.residual_labels[5] == "tokens:a");
  CpuBackend backend(model);
  CHECK(complete(backend, model, "a", 10) == "baabaabaab");
}
