// Every program of programs/, compiled at max length 16, runs the same on CPU and CUDA: logits,
// residual stream and attention patterns of a padded batch of random inputs, and for causal
// programs the KV-cache decoder too. Compiled weights are large and sharp (scores in the
// hundreds, anchor dimensions, GELU pre-activations kept 10 from zero), unlike random ones.
#ifdef RASPC_WITH_CUDA
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/program_file.hpp"
#include "runtime/forward.hpp"
#include "support/diagnostics.hpp"
#include "tests/cuda/parity.hpp"

using namespace raspc;
using testing::require_close;

namespace {

constexpr int kMaxLength = 16;

std::vector<std::string> program_paths() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RASPC_SOURCE_DIR) + "/programs"))
    if (entry.path().extension() == ".rasp") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Random inputs of every length from 1 to kMaxLength (twice), as model token ids behind BOS.
std::vector<std::vector<int>> random_inputs(const Model& model, const std::vector<Value>& vocab, std::mt19937& rng) {
  std::vector<int> symbol_ids;
  for (const Value& symbol : vocab) symbol_ids.push_back(model.token_id(to_display(symbol)));
  std::uniform_int_distribution<size_t> pick(0, symbol_ids.size() - 1);
  std::vector<std::vector<int>> batch;
  for (int round = 0; round < 2; ++round)
    for (int length = 1; length <= kMaxLength; ++length) {
      std::vector<int> tokens;
      if (model.bos_id >= 0) tokens.push_back(model.bos_id);
      for (int i = 0; i < length; ++i) tokens.push_back(symbol_ids[pick(rng)]);
      batch.push_back(tokens);
    }
  return batch;
}

}  // namespace

TEST_CASE("cuda: every compiled program of programs/ runs the same on CPU and CUDA") {
  std::mt19937 rng(47);
  int compiled = 0;
  for (const std::string& path : program_paths()) {
    INFO(path);
    auto source = read_source_file(path);
    const ProgramHeader header = read_program_header(source);
    CompileOptions options;
    options.vocab = header_vocabulary(header);
    if (options.vocab.empty()) {
      WARN(path << " has no `# vocab:` line; not compiled");
      continue;
    }
    options.max_len = kMaxLength;
    options.mode = header.causal.value_or(false) ? Mode::Causal : Mode::Bidirectional;
    options.verify = false;  // the compiler's own tests verify; here CPU and CUDA are compared
    options.source_text = source->text;
    CompileResult result;
    try {
      result = compile_program(evaluate_program(source), options);
    } catch (const UserError& error) {
      // Refusing a program is the compiler's decision, tested there; it leaves nothing to compare.
      WARN(path << " is refused by the compiler: " << error.what());
      continue;
    }
    ++compiled;
    const Model& model = result.model;
    auto cpu = make_backend(model, Device::Cpu);
    auto cuda = make_backend(model, Device::Cuda);
    const auto batch = random_inputs(model, options.vocab, rng);
    ForwardOptions capture;
    capture.capture_residual = capture.capture_attention = capture.capture_last_resid = true;
    const ForwardResult on_cuda = cuda->forward(batch, capture), on_cpu = cpu->forward(batch, capture);
    REQUIRE(on_cuda.lengths == on_cpu.lengths);
    require_close(on_cuda.logits, on_cpu.logits, path + ": logits");
    require_close(on_cuda.residual, on_cpu.residual, path + ": residual stream");
    require_close(on_cuda.attention, on_cpu.attention, path + ": attention patterns");
    // The stream before ln_f alone, where verification reads a numerical output, at every real
    // position (a padded row's is each forward's own).
    auto real_rows = [](const ForwardResult& r) {
      std::vector<float> rows;
      for (int b = 0; b < r.batch; ++b)
        for (int t = 0; t < r.lengths[size_t(b)]; ++t)
          rows.insert(rows.end(), r.last_resid_at(b, t), r.last_resid_at(b, t) + r.n_embd);
      return rows;
    };
    require_close(real_rows(on_cuda), real_rows(on_cpu), path + ": the stream before ln_f");
    if (model.config.causal) {
      auto cpu_decoder = cpu->decoder();
      auto cuda_decoder = cuda->decoder();
      const int V = model.config.vocab_size;
      for (int token : batch.back()) {
        const float* cpu_logits = cpu_decoder->step(token);
        const float* cuda_logits = cuda_decoder->step(token);
        require_close(std::vector<float>(cuda_logits, cuda_logits + V),
                      std::vector<float>(cpu_logits, cpu_logits + V), path + ": decoder");
      }
    }
  }
  CHECK(compiled > 0);
}

#endif  // RASPC_WITH_CUDA
