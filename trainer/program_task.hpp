// A RASP program file as a training task: its header defaults, its interpreter as the labeller,
// and the checks on the command-line settings that train and compare share.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "language/interpret.hpp"
#include "language/program.hpp"
#include "language/program_file.hpp"
#include "trainer/task.hpp"

namespace raspc {

// A program, its interpreter, and the labeller over it. Keeps the Program alive as long as the
// labeller (the Interpreter refers to it).
struct LoadedProgram {
  std::shared_ptr<const SourceFile> source;
  std::shared_ptr<Program> program;
  ProgramHeader header;
  Labeller labeller(Mode mode) const;
};
// Reads and evaluates a program file; `output_name` as EvaluateOptions::output_name.
LoadedProgram load_program(const std::string& path, const std::string& output_name = "");
// The same from source text, named `name` in messages (its header read as a file's).
LoadedProgram program_from_text(const std::string& name, const std::string& text);

// A UserError about one command-line option's text, with a caret under all of it.
[[noreturn]] void fail_option(const std::string& option, const std::string& text, const std::string& message);

// "A-B" (or "N") into [min, max], with 1 <= min <= max <= max_len; errors name `option`.
void parse_length_range(const std::string& option, const std::string& text, int max_len, int& min, int& max);

// What is wrong with a task's input symbols, in one sentence ("" when nothing): none at all, one
// given twice, or one spelled "BOS" (the trainer's own start token).
std::string input_symbols_problem(const std::vector<Value>& vocab);

// The input vocabulary from --vocab, or from the program's header when --vocab is empty; refused
// (naming --vocab) where input_symbols_problem says so.
std::vector<Value> task_vocabulary(const std::string& vocab_option, const LoadedProgram& program);

}  // namespace raspc
