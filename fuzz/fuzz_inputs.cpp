// Fuzz target: `raspc run --inputs` parsing. Any bytes as a file of inputs, one a line, read by a
// model of hist compiled once over a vocabulary of awkward tokens (the list syntax's own
// characters, a quote, a two-byte letter, a token of two characters): every line parses to
// tokens of the model's input vocabulary within its length, or is a located refusal; the first
// line that parses is run. A UserError is a correct answer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "runtime/cpu_backend.hpp"
#include "runtime/model_output.hpp"
#include "support/diagnostics.hpp"

namespace {

const raspc::Model& fuzzed_model() {
  static const raspc::Model model = [] {
    using namespace raspc;
    auto source = std::make_shared<SourceFile>(
        SourceFile{"hist.rasp", "hist = selector_width(select(tokens, tokens, ==));\nhist;\n"});
    CompileOptions options;
    for (const char* token : {"a", ",", "[", "]", "\"", "'", "\xc3\xa9", "ab", " "})
      options.vocab.push_back(Value::of_string(token));
    options.max_len = 6;
    options.verify = false;
    options.source_text = source->text;
    return compile_program(evaluate_program(source), options).model;
  }();
  return model;
}

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "inputs fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace raspc;
  const Model& model = fuzzed_model();
  const std::vector<int> allowed_ids = input_vocabulary(model);
  const std::set<int> allowed(allowed_ids.begin(), allowed_ids.end());
  const int capacity = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
  auto file = std::make_shared<SourceFile>(SourceFile{"inputs.txt", std::string(reinterpret_cast<const char*>(data), size)});
  bool ran = false;
  try {
    for (const auto& [first, last] : input_lines(file)) {
      try {
        const std::vector<int> tokens = parse_model_input(model, file, first, last);
        if (tokens.empty() || int(tokens.size()) > capacity) violated("a line parsed to an empty or too long input");
        for (int id : tokens)
          if (!allowed.count(id)) violated("a line parsed to a token outside the input vocabulary");
        if (!ran) {
          CpuBackend backend(model);
          run_positions(backend, model, tokens);
          ran = true;
        }
      } catch (const UserError& e) {
        if (std::getenv("RASPC_FUZZ_VERBOSE")) std::fputs(e.what(), stderr);
      }
    }
  } catch (const UserError& e) {
    if (std::getenv("RASPC_FUZZ_VERBOSE")) std::fputs(e.what(), stderr);
  }
  return 0;
}
