// Shared by the compiler tests: programs from files or text, and a compile with a small,
// exhaustive-then-sampled verification.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "compiler/compile.hpp"
#include "compiler/ir.hpp"
#include "compiler/constructions/construction.hpp"
#include "compiler/pipeline.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "language/interpret.hpp"
#include "language/program_file.hpp"
#include "runtime/model_output.hpp"
#include "support/diagnostics.hpp"

namespace raspc::testing {

// The program after the pipeline's row `previous` and after its later row `pass` (the rewrite a
// test compares with the program it was given).
struct PassRewrite {
  Program before, after;
};
inline PassRewrite rewritten_by(const Program& source, const CompileOptions& o, const std::string& previous,
                                const std::string& pass) {
  PassRewrite r;
  compiler::CompileState before(source, o), after(source, o);
  compiler::run_passes(before, previous);
  compiler::run_passes(after, pass);
  r.before = before.program;
  r.after = after.program;
  return r;
}

inline std::string program_path(const std::string& name) {
  return std::string(RASPC_SOURCE_DIR) + "/programs/" + name + ".rasp";
}

inline Program program_from_text(const std::string& text, const std::string& name = "test.rasp") {
  auto file = std::make_shared<SourceFile>(SourceFile{name, text});
  return evaluate_program(file);
}

struct ProgramFile {
  std::shared_ptr<const SourceFile> source;
  ProgramHeader header;
  Program program;
};

inline ProgramFile load_program(const std::string& name) {
  ProgramFile f;
  f.source = read_source_file(program_path(name));
  f.header = read_program_header(f.source);
  f.program = evaluate_program(f.source);
  return f;
}

// The message a compile refuses the program with, or "" when it compiles.
inline std::string compile_error(const Program& program, const CompileOptions& options) {
  try {
    compile_program(program, options);
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

// Exhaustive over every input up to length 6 (for a vocabulary of up to 6 symbols), then
// `samples` random inputs at each longer length up to max_len. The default is far below the
// compiler's 10^4: these tests compile dozens of programs at max length 16 and are about the
// compiler, not about sampling; 150 at each of lengths 7..16 keeps the 1,500 inputs they drew
// in all before the sample count was per length (tests/compiler/long checks 10^4 a length).
inline CompileOptions test_options(const std::vector<Value>& vocab, int max_len, Mode mode, long samples = 150) {
  CompileOptions o;
  o.vocab = vocab;
  o.max_len = max_len;
  o.mode = mode;
  o.samples = samples;
  double total = 0, power = 1;
  for (int n = 1; n <= std::min(6, max_len); ++n) total += (power *= double(vocab.size()));
  o.exhaustive_limit = long(total);
  return o;
}

// A stable sort that stays one (vocabulary 1 2 3 4, bidirectional): its values, the tokens, are not
// a function of its key, whether a token is above 2, so the library's tie break by position orders
// them, and count_sorts.cpp leaves it alone. The tests of the widths' sum w1 + w2 compile it.
inline Program stable_partition() { return program_from_text("sorted = sort(tokens, tokens > 2);\nsorted;\n"); }
inline std::vector<Value> digits_1_to_4() {
  return {Value::of_int(1), Value::of_int(2), Value::of_int(3), Value::of_int(4)};
}

// Shifts by a computed amount (docs/long-contexts.md, "Shifts by a computed amount"), over the
// digits 0-3: the tokens moved right by the first token's value, and each token looked up as many
// places back as its own value says.
inline Program computed_shift() {
  return program_from_text("amount = aggregate(select(indices, 0, ==), tokens);\nshift(tokens, amount, 0);\n");
}
inline Program look_back_by_token() {
  return program_from_text("aggregate(select(indices, indices - tokens, ==), tokens, 0);\n");
}
inline std::vector<Value> digits_0_to_3() {
  return {Value::of_int(0), Value::of_int(1), Value::of_int(2), Value::of_int(3)};
}

// The model's output at each position of `input` (parse_model_input's forms), on the CPU.
inline std::vector<std::string> run_model(const Model& model, const std::string& input) {
  std::unique_ptr<Backend> backend = make_backend(model);
  return run_positions(*backend, model, parse_model_input(model, input)).values;
}

// The passes from inference to the assembled model, run by hand, so that a test can verify a model
// it changed, or against another source than the program compiled.
struct CompiledByHand {
  Program program;
  compiler::Inference inference;
  compiler::Schedule schedule;
  compiler::Allocation allocation;
  Model model;
  CompileReport verify(const Model& checked, const Program& source, const CompileOptions& o) const {
    CompileReport report;
    compiler::verify(source, program, inference, schedule, allocation, checked, o, report);
    return report;
  }
};
inline CompiledByHand compile_by_hand(Program program, const CompileOptions& o) {
  CompiledByHand c{std::move(program), {}, {}, {}, {}};
  c.inference = compiler::infer(c.program, o);
  c.schedule = compiler::schedule(c.program, c.inference, o);
  c.allocation = compiler::allocate(c.program, c.inference, c.schedule, o);
  const compiler::Lowered lowered = compiler::lower(c.program, c.inference, c.schedule, c.allocation, o);
  c.model = compiler::assemble(c.program, c.inference, c.allocation, lowered, o);
  return c;
}

// Calls `check` on every input over `vocab` of each length 1 to max_len, in counting order, and
// returns how many there were.
inline size_t for_every_input(const std::vector<Value>& vocab, int max_len,
                              const std::function<void(const std::vector<Value>&)>& check) {
  size_t inputs = 0;
  for (int n = 1; n <= max_len; ++n) {
    std::vector<int> digits(size_t(n), 0);
    for (bool more = true; more;) {
      std::vector<Value> input;
      for (int d : digits) input.push_back(vocab[size_t(d)]);
      check(input);
      ++inputs;
      int i = 0;
      while (i < n && ++digits[size_t(i)] == int(vocab.size())) digits[size_t(i++)] = 0;
      more = i < n;
    }
  }
  return inputs;
}

// Runs the program before and after a rewrite on every input up to `length`, checking that they
// agree; returns how many inputs it ran.
inline size_t agree_on_every_input(const PassRewrite& r, Mode mode, const std::vector<Value>& vocab, int length) {
  Interpreter source(r.before, mode), rewritten(r.after, mode);
  return for_every_input(vocab, length,
                         [&](const std::vector<Value>& input) { CHECK(rewritten.run(input) == source.run(input)); });
}

// How many nodes of a program are constructions of the kind named `kind` ("width_step", "count_rank").
inline int count_kind(const Program& p, const std::string& kind) {
  return int(std::count_if(p.nodes.begin(), p.nodes.end(), [&](const Node& n) {
    const compiler::Construction* c = compiler::construction_of(n);
    return c != nullptr && c->kind_name() == kind;
  }));
}

// Whether one of the model's residual dimensions has a label starting with `prefix`.
inline bool has_label(const Model& model, const std::string& prefix) {
  return std::any_of(model.residual_labels.begin(), model.residual_labels.end(),
                     [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

}  // namespace raspc::testing
