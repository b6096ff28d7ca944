// raspc dataset: a program's inputs and the interpreter's labels as a Hugging Face dataset folder
// (JSON lines shards and a card; trainer/dataset.hpp says what a row holds).
#include <cstdio>
#include <iostream>
#include <thread>

#include "language/input.hpp"
#include "raspc/commands.hpp"
#include "raspc/verify_progress.hpp"
#include "raspc/command_options.hpp"
#include "support/diagnostics.hpp"
#include "support/number_text.hpp"
#include "trainer/dataset.hpp"
#include "trainer/program_task.hpp"

namespace raspc {

namespace {

struct DatasetCommandOptions {
  std::string program, output_name, folder, lengths = "1-16", vocab;
  const CLI::Option* vocab_option = nullptr;
  int max_len = 0;  // 0: the longest of --lengths
  long n = 10000;
  uint64_t seed = 1;
  int held_out = 256;
  long shard_rows = 100000;
  int threads = 0;
  bool causal = false;
};

// The longest input a dataset may hold: the trainer's (raspc train --max-len).
constexpr int kMaxDatasetLength = 512;

void run_dataset(const DatasetCommandOptions& o) {
  check_dataset_folder(o.folder, "-o", {o.program});  // before the labelling, not after it
  LoadedProgram program = load_program(o.program, o.output_name);
  DatasetOptions options;
  int shortest = 1, longest = 1;
  parse_length_range("--lengths", o.lengths, kMaxDatasetLength, shortest, longest);
  const int max_len = o.max_len == 0 ? longest : o.max_len;
  if (max_len < longest || max_len > kMaxDatasetLength)
    fail_option("--max-len", std::to_string(o.max_len),
                "the test lengths run from 1 to --max-len, which must be at least the longest of --lengths (" +
                    std::to_string(longest) + ") and at most " + std::to_string(kMaxDatasetLength));
  if (o.n < 0 || o.n > kMaxSamples)
    fail_option("--n", std::to_string(o.n), "give from 0 to " + with_commas(double(kMaxSamples)) + " training inputs");
  if (o.held_out < 0) fail_option("--held-out", std::to_string(o.held_out), "give 0 or more test inputs per length");
  if (o.shard_rows < 1) fail_option("--shard-rows", std::to_string(o.shard_rows), "a shard holds at least one row");
  if (o.threads < 0 || o.threads > 1024)
    fail_option("--threads", std::to_string(o.threads), "the thread count must be between 0 (every core) and 1024");
  if (o.vocab_option && o.vocab_option->count() > 0 && o.vocab.empty()) parse_vocabulary(o.vocab, "--vocab");
  options.task.input_vocab = task_vocabulary(o.vocab, program);
  options.task.max_len = max_len;
  options.task.train_min = shortest;
  options.task.train_max = longest;
  options.task.held_out_per_length = o.held_out;
  options.n = o.n;
  options.seed = o.seed;
  const bool causal = o.causal || program.header.causal.value_or(false);
  options.mode = causal ? Mode::Causal : Mode::Bidirectional;
  options.shard_rows = o.shard_rows;
  options.threads = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));

  VerifyProgress progress("labelling");
  const DatasetSummary summary = naming_errors(o.program, [&] {
    return write_dataset(program, options, o.folder, [&](long done, long total) {
      progress.update(done, total, total > 0 ? double(done) / double(total) : 1.0);
    });
  });
  const long rows = summary.train_rows + summary.test_rows;
  std::printf("wrote %s: %s training inputs (lengths %d-%d, seed %llu), %s test inputs (lengths 1-%d), %s mode\n",
              o.folder.c_str(), with_commas(double(summary.train_rows)).c_str(), shortest, longest,
              (unsigned long long)o.seed, with_commas(double(summary.test_rows)).c_str(), max_len,
              causal ? "causal" : "bidirectional");
  if (summary.train_undefined + summary.test_undefined > 0)
    std::printf("the program is undefined on %s training and %s test inputs: kept, marked \"defined\": false\n",
                with_commas(double(summary.train_undefined)).c_str(), with_commas(double(summary.test_undefined)).c_str());
  std::printf("vocabulary: %zu tokens (BOS, %zu input symbols, %zu output values); labelled in %.2f s (%s inputs/s, "
              "%d thread%s)\n",
              summary.vocab.size(), summary.input_ids.size(), summary.output_ids.size(), summary.seconds,
              with_commas(summary.seconds > 0 ? double(rows) / summary.seconds : 0.0).c_str(), options.threads,
              options.threads == 1 ? "" : "s");
  std::printf("load it with datasets.load_dataset(\"json\", data_dir=\"%s\")\n", o.folder.c_str());
}

}  // namespace

void add_dataset_command(CLI::App& app) {
  auto options = std::make_shared<DatasetCommandOptions>();
  auto* cmd = app.add_subcommand(
      "dataset", "Write a program's inputs and the interpreter's labels as a Hugging Face dataset (JSON lines + card)");
  cmd->add_option("PROGRAM", options->program, "The RASP program (.rasp) whose outputs are the labels")->required();
  cmd->add_option("-o", options->folder, "The dataset folder to write (new, empty, or an earlier dataset)")->required();
  cmd->add_option("--lengths", options->lengths, "Input lengths of the training split, A-B")->capture_default_str();
  cmd->add_option("--n", options->n, "Training inputs (drawn with repetition, never a test input)")->capture_default_str();
  cmd->add_option("--max-len", options->max_len, "Test inputs have lengths 1 to this (default: the longest of --lengths)");
  cmd->add_option("--held-out", options->held_out,
                  "Test inputs per length (raspc train's and compare's held-out set; fewer where a length has few "
                  "inputs)")
      ->capture_default_str();
  options->vocab_option =
      cmd->add_option("--vocab", options->vocab, "Input symbols, as in abcd or \"[1,2,3]\" (default: the program header's)");
  cmd->add_option("--output", options->output_name, "The s-op to label with (default: the program's last expression)");
  cmd->add_flag("--causal", options->causal, "Causal program semantics (default: the program header's)");
  cmd->add_option("--seed", options->seed, "Seed of the training inputs")->capture_default_str();
  cmd->add_option("--shard-rows", options->shard_rows, "Rows a training shard holds at most")->capture_default_str();
  cmd->add_option("--threads", options->threads, "Labelling threads (0: every core); the rows do not depend on it")
      ->capture_default_str();
  cmd->callback([options] { run_dataset(*options); });
}

}  // namespace raspc
