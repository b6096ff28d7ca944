// Fuzz target: the language front end. Any bytes as a program: lex, parse, evaluate, then the
// interpreter in both modes on a string and an integer input. A UserError is a correct answer;
// anything else (a crash, another exception, a sanitizer report) is a defect.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz/fuzz_program.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"
#include "support/diagnostics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace raspc;
  const std::shared_ptr<const SourceFile> file = fuzzed_program(data, size);
  try {
    const Program program = evaluate_program(file);
    for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
      for (const char* input : {"abca", "[3,1,2,0]"}) {
        try {
          Interpreter interpreter(program, mode);
          interpreter.run(parse_input(input));
        } catch (const UserError&) {
        }
      }
    }
  } catch (const UserError&) {
  }
  return 0;
}
