// What a compiled network costs against the rule it encodes (`raspc bench`): for a program at a
// maximum length, the compiled model's size, FLOPs and time per token beside the reference
// interpreter's and a native C++ rule's time, and the native rule's instruction count.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/forward.hpp"

namespace raspc {

// A timing: the median of repeated samples after a warm-up, and their range.
struct Timing {
  double median = 0, min = 0, max = 0;  // in the row's unit
  int samples = 0;
};

struct CostRow {
  std::string program;  // file stem, or "aab (post)" for the post's setting
  std::string model;    // "compiled" or "hand-set"
  std::string mode;     // "causal" or "bidirectional"
  int max_len = 0;
  int layers = 0, heads = 0, n_embd = 0, n_inner = 0;
  size_t parameters = 0, nonzero_parameters = 0;
  double flops_per_token = 0;  // forward FLOPs of one full-length sequence / its tokens
  Timing sequence_us;          // one sequence, per token (KV cache when causal)
  Timing batch_us;             // a batch of 64, per token
  std::optional<Timing> interpreter_us;  // per position
  std::optional<Timing> native_ns;       // per position (per prediction for aab)
  std::optional<double> native_instructions;  // per position (per prediction for aab)
  std::string instructions_source;            // "callgrind" or "perf"
  std::string refused;  // non-empty: the compiler refused the program at this length (why)
  bool timed = true;    // false: the model is over CostOptions::max_parameters, sized but not timed
};

struct CostOptions {
  std::vector<int> max_lens = {5, 8, 16, 32, 64};
  Device device = Device::Cpu;
  int samples = 11;            // timing samples per figure (after one warm-up)
  double sample_seconds = 0.005;  // each sample loops until it lasts at least this long
  bool count_instructions = true;
  std::string native_counter;  // path of the native_rule_count executable ("" finds it beside raspc)
  // Larger compiled models are sized and counted but not timed (a batch of 64 through a 100M-weight
  // model takes seconds per sample).
  size_t max_parameters = 20'000'000;
};

// Measures one program file at each of options.max_lens.
std::vector<CostRow> measure_program(const std::string& path, const CostOptions& options);
// Measures a model file (compiled or trained) at its full length: size, FLOPs and time, and the
// interpreter's time when the file carries its program's source.
std::vector<CostRow> measure_model_file(const std::string& path, const CostOptions& options);
// The (aab)* post's setting: a 5-token context and one prediction, for the hand-set model and
// for programs/aab.rasp compiled at maximum length 5.
std::vector<CostRow> measure_aab_post(const std::string& aab_program_path, const CostOptions& options);

// The machine the figures were taken on: CPU model, cores, compiler and flags, date.
nlohmann::json machine_description();

std::string cost_markdown(const std::vector<CostRow>& rows, const nlohmann::json& machine, size_t max_parameters);
nlohmann::json cost_json(const std::vector<CostRow>& rows, const nlohmann::json& machine);
// bench/plots/flops.svg and time.svg: compiled against native over the maximum length, log scale.
void write_cost_plots(const std::vector<CostRow>& rows, const std::string& plots_dir);

}  // namespace raspc
