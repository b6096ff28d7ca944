// Fuzz target: the view. The first byte is the input's length (1 to 8), the next bytes pick its
// tokens from the model's input vocabulary; the rest is a model file. What `raspc view` does with
// them: the forward with the residual stream and the attention captured, the trace decoded from
// the model's metadata, checked against the interpreter on the program the metadata holds, and
// the page rendered. A UserError is a correct answer; anything else is a defect.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "runtime/cpu_backend.hpp"
#include "runtime/model_output.hpp"
#include "runtime/residual_trace.hpp"
#include "runtime/safetensors.hpp"
#include "view/html_view.hpp"
#include "support/diagnostics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace raspc;
  if (size < 1) return 0;
  const size_t length = 1 + data[0] % 8;
  if (size < 1 + length) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1 + length), size - 1 - length);
  try {
    const Model model = parse_model(bytes, "fuzz.safetensors");
    const std::vector<int> allowed = input_vocabulary(model);
    if (allowed.empty()) return 0;
    std::vector<int> tokens;
    for (size_t i = 0; i < length; ++i) tokens.push_back(allowed[data[1 + i] % allowed.size()]);
    const int capacity = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
    if (int(tokens.size()) > capacity) tokens.resize(size_t(std::max(capacity, 0)));
    if (tokens.empty()) return 0;
    const std::vector<int> sequence = with_bos(model, tokens);
    CpuBackend backend(model);
    const std::string page = view_page(model, backend, sequence, "fuzz.safetensors");
    if (page.find("</html>") == std::string::npos) {
      std::fprintf(stderr, "view fuzz: the page is not whole\n");
      std::abort();
    }
  } catch (const UserError& e) {
    if (std::getenv("RASPC_FUZZ_VERBOSE")) std::fputs(e.what(), stderr);
  }
  return 0;
}
