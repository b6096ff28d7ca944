// Writes random models of several shapes and raspc's logits on them, for the independent numpy
// forward (tests/runtime/numpy_forward.py) to check. Usage: runtime_numpy_fixtures FOLDER
// Writes FOLDER/case<i>.safetensors and FOLDER/case<i>.json ({"sequences": [...], "logits": [...]}).
#include <cstdio>
#include <filesystem>
#include <random>

#include "runtime/cpu_backend.hpp"
#include "runtime/handset_aab.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "tests/runtime/random_model.hpp"

using namespace raspc;

namespace {

void write_case(const std::string& folder, int index, const Model& model, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> batch;
  // A full-length sequence, a short one and a middle one: padding is exercised.
  for (int length : {model.config.n_positions, 1, (model.config.n_positions + 1) / 2}) {
    std::vector<int> tokens = testing::random_tokens(model, length, rng);
    if (model.bos_id >= 0) tokens[0] = model.bos_id;
    batch.push_back(tokens);
  }
  CpuBackend backend(model);
  ForwardResult result = backend.forward(batch);
  nlohmann::json logits = nlohmann::json::array();
  for (int b = 0; b < result.batch; ++b) {
    nlohmann::json rows = nlohmann::json::array();
    for (int t = 0; t < result.lengths[b]; ++t)
      rows.push_back(std::vector<float>(result.logits_at(b, t), result.logits_at(b, t) + result.vocab));
    logits.push_back(rows);
  }
  std::string base = folder + "/case" + std::to_string(index);
  save_model(model, base + ".safetensors");
  write_file_atomically(base + ".json", nlohmann::json{{"sequences", batch}, {"logits", logits}}.dump());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  try {
    std::string folder = argv[1];
    std::filesystem::create_directories(folder);
    const ModelConfig shapes[] = {
        make_config(2, 4, 16, 32, 8, 7, true, true, Activation::Gelu),
        make_config(1, 1, 8, 0, 6, 3, false, false, Activation::Relu),
        make_config(3, 2, 12, 20, 10, 5, false, true, Activation::Relu),
        make_config(2, 2, 8, 16, 5, 4, true, false, Activation::Gelu),
        make_config(1, 4, 64, 256, 16, 11, false, true, Activation::Gelu),
    };
    int index = 0;
    for (const ModelConfig& config : shapes) {
      write_case(folder, index, testing::make_random_model(config, 100 + index, 0.3f, index == 3), 200 + index);
      ++index;
    }
    write_case(folder, index, make_handset_aab(), 300);
    std::printf("%d cases\n", index + 1);
  } catch (const UserError& e) {
    std::fputs(e.what(), stderr);
    return 1;
  }
  return 0;
}
