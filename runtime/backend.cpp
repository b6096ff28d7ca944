// The dispatch point between the CPU and CUDA backends, and greedy generation over either.
#include <algorithm>

#include "runtime/cpu_backend.hpp"
#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"

#include "runtime/cuda_loader.hpp"

// The CUDA backend exists only when CMake found a CUDA compiler (RASPC_WITH_CUDA).
#ifdef RASPC_WITH_CUDA
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#endif

namespace raspc {

CudaBackendFactory& cuda_backend_factory() {
  static CudaBackendFactory factory = nullptr;
  return factory;
}

#ifdef RASPC_WITH_CUDA
namespace {

// Opens libraspc_cuda.so from the executable's folder; its static initializer registers the
// backend (runtime/cuda_loader.hpp).
void load_cuda_module() {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string folder = ".";
  if (n > 0) {
    folder.assign(self, size_t(n));
    folder = folder.substr(0, folder.rfind('/'));
  }
  const std::string path = folder + "/libraspc_cuda.so";
  if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    const char* why = ::dlerror();
    fail_at(Span{}, "cannot load the CUDA backend " + path + " (" + (why ? why : "unknown reason") +
                        "); --device cpu works without it");
  }
}

}  // namespace
#endif

Device parse_device(const std::string& name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "cuda") return Device::Cuda;
  auto arg = std::make_shared<SourceFile>(SourceFile{"--device", name});
  fail_at(Span{arg, 0, uint32_t(std::max<size_t>(name.size(), 1))},
          "unknown device \"" + name + "\"; use cpu or cuda");
}

void check_token(const ModelConfig& config, int token) {
  if (token < 0 || token >= config.vocab_size)
    fail_at(Span{}, "token id " + std::to_string(token) + " is outside the model's vocabulary (0.." +
                        std::to_string(config.vocab_size - 1) + ")");
}

ForwardResult begin_forward(const ModelConfig& config, const std::vector<std::vector<int>>& batch) {
  ForwardResult result;
  result.batch = int(batch.size());
  result.vocab = config.vocab_size;
  result.n_embd = config.n_embd;
  result.n_layer = config.n_layer;
  result.n_head = config.n_head;
  for (const auto& seq : batch) {
    if (int(seq.size()) > config.n_positions)
      fail_at(Span{}, "a sequence of " + std::to_string(seq.size()) + " tokens is longer than the model's " +
                          std::to_string(config.n_positions) + " positions");
    for (int token : seq) check_token(config, token);
    result.time = std::max(result.time, int(seq.size()));
    result.lengths.push_back(int(seq.size()));
  }
  return result;
}

std::unique_ptr<Backend> make_backend(const Model& model, Device device, int threads) {
  if (device == Device::Cpu) return std::make_unique<CpuBackend>(model, threads);
#ifdef RASPC_WITH_CUDA
  if (!cuda_backend_factory()) load_cuda_module();
  if (!cuda_backend_factory()) fail_at(Span{}, "the CUDA backend's module registered no backend (a build defect)");
  return cuda_backend_factory()(model);
#else
  fail_at(Span{}, "raspc was built without CUDA, so --device cuda is not available; use --device cpu, or "
                  "rebuild on a machine with the CUDA toolkit");
#endif
}

std::vector<int> generate_greedy(Backend& backend, const Model& model, const std::vector<int>& prompt, int count) {
  const int P = model.config.n_positions;
  const bool has_bos = model.bos_id >= 0;
  const int window = P - (has_bos ? 1 : 0);  // tokens that fit beside BOS
  if (window <= 0) fail_at(Span{}, "the model has no room for any token beside BOS");
  std::vector<int> tokens = prompt;
  std::vector<int> generated;
  std::unique_ptr<Decoder> decoder = backend.decoder();
  const float* logits = nullptr;
  auto refill = [&] {  // recompute the decoder's cache over the current window
    decoder->reset();
    if (has_bos) logits = decoder->step(model.bos_id);
    size_t first = tokens.size() > size_t(window) ? tokens.size() - window : 0;
    for (size_t i = first; i < tokens.size(); ++i) logits = decoder->step(tokens[i]);
  };
  // The candidates: the model's output tokens when its metadata lists them, else every non-BOS token.
  std::vector<int> candidates;
  const nlohmann::json& output = model.metadata.contains("output") ? model.metadata["output"] : nlohmann::json();
  if (output.is_object() && output.contains("token_ids") && output["token_ids"].is_array())
    for (const nlohmann::json& id : output["token_ids"])
      if (id.is_number_integer() && id.get<int>() >= 0 && id.get<int>() < model.config.vocab_size)
        candidates.push_back(id.get<int>());
  if (candidates.empty())
    for (int v = 0; v < model.config.vocab_size; ++v)
      if (v != model.bos_id) candidates.push_back(v);
  refill();
  for (int i = 0; i < count; ++i) {
    if (!logits) fail_at(Span{}, "generation needs a prompt of at least one token for a model without BOS");
    int best = candidates[0];
    for (int v : candidates)
      if (logits[v] > logits[best]) best = v;
    tokens.push_back(best);
    generated.push_back(best);
    if (i + 1 == count) break;
    if (decoder->position() < P) logits = decoder->step(best);
    else refill();
  }
  return generated;
}

}  // namespace raspc
