// The compiler: a Program into a verified GPT-2 Model. The passes, one a file, run in the order of
// the table in pipeline.cpp: the rewrites (causal_prefixes, simplify, merge_means, width_steps,
// width_predicates, tiebreak_keys, count_sorts, prune_inputs, split_widths, pair_selectors,
// output_copy), then infer -> schedule -> allocate -> budget -> lower -> assemble ->
// verify. docs/compiler.md explains each.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "language/interpret.hpp"
#include "language/program.hpp"
#include "runtime/forward.hpp"
#include "runtime/model.hpp"

namespace raspc {

struct CompileReport;

struct CompileOptions {
  std::vector<Value> vocab;  // input symbols
  int max_len = 16;          // longest input (BOS not counted)
  Mode mode = Mode::Bidirectional;
  bool layer_norm = true;
  Activation activation = Activation::Gelu;
  bool verify = true;
  int verify_len = 0;        // longest input verified; 0: max_len
  long samples = 10000;      // inputs checked at each length beyond the exhaustive ones (each symbol repeated, then random)
  long exhaustive_limit = 100000;  // lengths are checked exhaustively while the total stays within
  uint64_t seed = 1;
  // The compile budget: a model estimated (before lowering) to have more parameters is refused,
  // naming the s-op that contributes most. 0: no limit.
  size_t max_parameters = 200'000'000;
  Device device = Device::Cpu;
  // Threads the CPU verification checks its batches on (verification_threads): 0 is every core.
  // The report is the same for every count, to the last bit of a margin.
  int threads = 0;
  std::string source_text;   // stored in the model's metadata
  std::string dump_after;    // a pass name: its result goes to CompileResult::dump and on_dump
  // Called with the dump as soon as dump_after's pass finishes: a later pass may still throw (a
  // refusal in lower), and that is when the dump is wanted most.
  std::function<void(const std::string&)> on_dump;
  bool explain = false;      // fill CompileResult::explanation
  // Called with the explanation as soon as the schedule exists (before lowering may refuse).
  std::function<void(const std::string&)> on_explanation;
  // Called once the model is assembled, before verification starts: the report holds the model's
  // shape and parameters (verification fields still zero), so a command can print the summary
  // while the user waits.
  std::function<void(const CompileReport&)> on_assembled;
  // Called as verification starts (done == 0), after each round of checked batches, and once at
  // the end: inputs done so far (checked or undefined), the total that will be done, and the
  // fraction of the estimated verification time behind it (estimate_verification's cost of an
  // input of each length: the long inputs come last and cost most); the last call has done ==
  // total and work == 1.
  std::function<void(long done, long total, double work)> on_verify_progress;
};

// The bounds of what a user may ask a compile for, shared by the command line and Python so both
// refuse the same things with the same sentence; `names` are the flags' or the arguments' names
// ("--max-len" or "max_len"). An enormous sample count would verify for ever instead of failing.
constexpr int kMaxCompileLength = 4096;
constexpr long kMaxSamples = 10'000'000;
struct OptionNames {
  std::string max_len, verify_len, samples;
};
void check_compile_limits(int max_len, int verify_len, long samples, const OptionNames& names);

// The threads a verification with these options runs on: `threads`, or every core for 0, on the
// CPU; one on CUDA (one device runs one batch at a time).
unsigned verification_threads(const CompileOptions& options);
constexpr int kMaxThreads = 1024;

struct CompileReport {
  ModelConfig config;  // the assembled model's, whole (on_assembled has no model to read it from)
  int layers = 0, heads = 0, n_embd = 0, n_inner = 0;
  size_t parameters = 0;
  // Verification: inputs checked, mismatches, min logit margin (categorical outputs) or worst
  // absolute error (numerical outputs); the first mismatch, described, when there is one.
  long inputs_checked = 0, mismatches = 0;
  double min_logit_margin = 0, worst_numerical_error = 0;
  std::string first_mismatch;
  // The s-op (its name) where the first mismatch's residual stream first departs from the
  // interpreter's trace; empty where none does (the output's read is what differs).
  std::string first_departure;
  // Inputs on which the program itself is undefined (the interpreter raises): not counted as
  // checked; the first one is named.
  long undefined_inputs = 0;
  std::string first_undefined;
  bool verified = false;   // verification ran (not --no-verify)
  bool exhaustive = true;  // every input up to verified_len was checked
  int verified_len = 0;
  int exhaustive_len = 0;        // every input up to this length was checked
  long samples_per_length = 0;   // inputs checked at each length beyond exhaustive_len
  // Inputs checked (as inputs_checked) by length: index n counts the inputs of length n, 0..verified_len.
  std::vector<long> checked_by_length;
  // Numerical selectors (docs/long-contexts.md): the smallest margin a matching key wins by, and
  // the most float32 rounds one of their scores by, as designed; 0 without numerical selectors.
  double numerical_selector_margin = 0, numerical_selector_rounding = 0;
  // The compile budget's estimate of the verification to come (compiler/budget.cpp): the inputs
  // it will check and the wall seconds that takes at a calibrated rate a thread, on the
  // verify_threads the verification runs on; 0 without verification.
  double estimated_verify_inputs = 0, estimated_verify_seconds = 0;
  int verify_threads = 0;
  bool numerical_output = false;
  double compile_ms = 0, verify_ms = 0;
};

struct CompileResult {
  Model model;
  CompileReport report;
  std::string dump;         // options.dump_after's result (also given to options.on_dump)
  std::string explanation;  // with options.explain
};

// The pass names --dump-after accepts, in pipeline order.
const std::vector<std::string>& compiler_pass_names();
// Refuses, under `option` ("--dump-after", "dump_after"), a name that is no pass of the pipeline,
// listing them (and the nearest, where one is near).
void check_pass_name(const std::string& name, const std::string& option);

// The report as JSON, the one form every reader takes it in (runtime/model_report.hpp reads it;
// docs/json.md lists the keys): `raspc compile --json` prints it, Python's Model.report is it, and
// a model file stores part of it (stored_report) in metadata["compile"].
nlohmann::json report_json(const CompileReport& report);

// What to say where the program itself is undefined on most of the inputs verification drew (the
// interpreter fails on them, so the model was verified on the rest only): "THE PROGRAM IS
// UNDEFINED ON 28 OF THE 30 INPUTS CHECKED (93%): ..." (the CLI prints it as a warning, Python
// issues it as a raspc.RaspcWarning); empty where it is defined on at least half of them.
std::string mostly_undefined_warning(const CompileReport& report);

// What to say where the program's header says `causal: no` but it is compiled causally (the CLI
// prints it as a warning, Python issues it as a raspc.RaspcWarning); empty otherwise.
std::string causal_header_warning(std::optional<bool> header_causal, Mode mode);

CompileResult compile_program(const Program& program, const CompileOptions& options);

}  // namespace raspc
