// Fuzz target: the compiler. Any bytes as a program, compiled at max length 3 over the vocabulary
// a b c (or its `# vocab:` line) and verified against the interpreter: the result must be zero
// mismatches or a located refusal (a UserError). A mismatch is a compiler defect, reported as a
// crash so that libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "compiler/compile.hpp"
#include "fuzz/fuzz_program.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/program_file.hpp"
#include "support/diagnostics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace raspc;
  const std::shared_ptr<const SourceFile> file = fuzzed_program(data, size);
  try {
    const Program program = evaluate_program(file);
    CompileOptions options;
    options.vocab = header_vocabulary(read_program_header(file));
    if (options.vocab.empty() || options.vocab.size() > 4) options.vocab = parse_vocabulary("abc");
    options.max_len = 3;
    options.samples = 100;
    options.source_text = file->text;
    for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
      options.mode = mode;
      const CompileResult result = compile_program(program, options);
      if (result.report.mismatches != 0) {
        std::fprintf(stderr, "compiler fuzz: %ld mismatches, first: %s\n", result.report.mismatches,
                     result.report.first_mismatch.c_str());
        std::abort();
      }
    }
  } catch (const UserError& e) {
    if (std::getenv("RASPC_FUZZ_VERBOSE")) std::fputs(e.what(), stderr);
  }
  return 0;
}
