// Fuzz target: the model reader. Any bytes as a model file: the 8-byte length, the JSON header,
// the metadata and the tensors; then what a command does with a model it accepted: describe it,
// run the CPU forward on an input and read the outputs. A UserError is a correct answer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/cpu_backend.hpp"
#include "runtime/inspect.hpp"
#include "runtime/model_output.hpp"
#include "runtime/safetensors.hpp"
#include "support/diagnostics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace raspc;
  try {
    const Model model = parse_model(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
    describe_model(model);
    std::vector<int> tokens;
    for (int v = 0; v < model.config.vocab_size && int(tokens.size()) < 3; ++v)
      if (v != model.bos_id) tokens.push_back(v);
    const int capacity = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
    if (int(tokens.size()) > capacity) tokens.resize(size_t(std::max(capacity, 0)));
    if (!tokens.empty()) {
      CpuBackend backend(model);
      run_positions(backend, model, tokens);
    }
  } catch (const UserError&) {
  }
  return 0;
}
