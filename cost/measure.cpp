// Measuring what a compiled network costs: a program compiled at each maximum length, a model
// file, or the (aab)* post's setting, timed beside the interpreter and a native rule whose
// instructions callgrind or perf counts (native_rule_count, built beside raspc).
#include "cost/cost.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cost/native_rules.hpp"
#include "compiler/compile.hpp"
#include "language/evaluate.hpp"
#include "language/interpret.hpp"
#include "language/program_file.hpp"
#include "runtime/flops.hpp"
#include "runtime/handset_aab.hpp"
#include "runtime/safetensors.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"
#include "support/svg_plot.hpp"

namespace raspc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kBatch = 64;
constexpr int kInputPool = 64;  // distinct random inputs each timing cycles through

// Keeps the measured work observable so the optimiser cannot drop it.
volatile uint64_t g_sink = 0;

// Times `call` (which performs `units` units of work) and returns the time per unit in
// `scale` units of a second (1e6: microseconds). One warm-up, then samples each looping long
// enough to last options.sample_seconds.
template <class Call>
Timing time_per_unit(Call&& call, double units, double scale, const CostOptions& options) {
  g_sink = g_sink + call();
  long iterations = 1;
  for (;;) {
    auto start = Clock::now();
    for (long i = 0; i < iterations; ++i) g_sink = g_sink + call();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds >= options.sample_seconds || iterations >= (1L << 30)) break;
    iterations *= seconds > 0 ? std::clamp<long>(long(options.sample_seconds / seconds * 1.3) + 1, 2, 100) : 100;
  }
  std::vector<double> samples;
  for (int s = 0; s < options.samples; ++s) {
    auto start = Clock::now();
    for (long i = 0; i < iterations; ++i) g_sink = g_sink + call();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    samples.push_back(seconds / double(iterations) / units * scale);
  }
  std::sort(samples.begin(), samples.end());
  return Timing{samples[samples.size() / 2], samples.front(), samples.back(), int(samples.size())};
}

std::string self_directory() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

std::string temporary_path(const std::string& stem) {
  return (fs::temp_directory_path() / (stem + "." + std::to_string(::getpid()))).string();
}

bool perf_counts_instructions() {
  static const bool works = [] {
    std::string out = temporary_path("raspc_perf_probe");
    std::string command = "perf stat -x, -e instructions:u -o " + out + " true >/dev/null 2>&1";
    bool ok = std::system(command.c_str()) == 0;
    std::string text;
    if (ok) {
      std::ifstream in(out);
      std::stringstream buffer;
      buffer << in.rdbuf();
      text = buffer.str();
    }
    std::remove(out.c_str());
    return ok && text.find("instructions") != std::string::npos && text.find("<not supported>") == std::string::npos;
  }();
  return works;
}

// Whole-process user instructions of one native_rule_count run, by perf.
std::optional<double> perf_instructions(const std::string& counter, const std::string& args) {
  std::string out = temporary_path("raspc_perf");
  std::string command = "perf stat -x, -e instructions:u -o " + out + " " + counter + " " + args + " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) return std::nullopt;
  std::ifstream in(out);
  std::string line;
  std::optional<double> count;
  while (std::getline(in, line))
    if (line.find("instructions") != std::string::npos) {
      char* end = nullptr;
      double v = std::strtod(line.c_str(), &end);
      if (end != line.c_str()) count = v;
    }
  std::remove(out.c_str());
  return count;
}

// Instructions per call of a native rule: perf's hardware counter where the machine has one,
// else callgrind's count of exactly the rule's function.
std::optional<double> native_instructions_per_call(const std::string& rule, int length, int vocab_size,
                                                   const CostOptions& options, std::string& source) {
  std::string counter = options.native_counter.empty() ? self_directory() + "/native_rule_count" : options.native_counter;
  if (!fs::exists(counter)) return std::nullopt;
  const long calls = 2000;
  auto args = [&](const std::string& r) {
    return r + " " + std::to_string(length) + " " + std::to_string(calls) + " " + std::to_string(vocab_size);
  };
  if (perf_counts_instructions()) {
    auto with_rule = perf_instructions(counter, args(rule));
    auto baseline = perf_instructions(counter, args("none"));
    if (with_rule && baseline) {
      source = "perf";
      return std::max(0.0, (*with_rule - *baseline) / double(calls));
    }
  }
  std::string out = temporary_path("raspc_callgrind");
  std::string command = "valgrind --tool=callgrind --callgrind-out-file=" + out +
                        " --toggle-collect=" + native::rule_symbol(rule) + " " + counter + " " + args(rule) +
                        " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    std::remove(out.c_str());
    return std::nullopt;
  }
  std::ifstream in(out);
  std::string line;
  std::optional<double> total;
  while (std::getline(in, line))
    if (line.rfind("totals:", 0) == 0 || (!total && line.rfind("summary:", 0) == 0))
      total = std::strtod(line.c_str() + line.find(':') + 1, nullptr);
  std::remove(out.c_str());
  if (!total) return std::nullopt;
  source = "callgrind";
  return *total / double(calls);
}

size_t count_nonzero(const Model& model) {
  return size_t(std::count_if(model.storage.begin(), model.storage.end(), [](float v) { return v != 0.0f; }));
}

// Fills the model's shape, size, FLOPs and timings for sequences of `length` input tokens.
void measure_model(const Model& model, const std::vector<std::vector<int>>& inputs, int length,
                   const CostOptions& options, CostRow& row) {
  const ModelConfig& c = model.config;
  row.layers = c.n_layer;
  row.heads = c.n_head;
  row.n_embd = c.n_embd;
  row.n_inner = c.n_inner;
  row.parameters = model.storage.size();
  row.nonzero_parameters = count_nonzero(model);
  row.mode = c.causal ? "causal" : "bidirectional";
  std::vector<std::vector<int>> sequences;
  for (const auto& tokens : inputs) {
    std::vector<int> s;
    if (model.bos_id >= 0) s.push_back(model.bos_id);
    s.insert(s.end(), tokens.begin(), tokens.end());
    sequences.push_back(std::move(s));
  }
  const int T = int(sequences.front().size());
  row.flops_per_token = forward_flops(c, T) / T;
  (void)length;
  row.timed = row.parameters <= options.max_parameters;
  if (!row.timed) return;

  std::unique_ptr<Backend> backend = make_backend(model, options.device);
  size_t next = 0;
  if (c.causal) {
    std::unique_ptr<Decoder> decoder = backend->decoder();
    row.sequence_us = time_per_unit(
        [&] {
          const auto& s = sequences[next++ % sequences.size()];
          decoder->reset();
          const float* logits = nullptr;
          for (int t : s) logits = decoder->step(t);
          return uint64_t(logits[0] > 0);
        },
        T, 1e6, options);
  } else {
    row.sequence_us = time_per_unit(
        [&] {
          ForwardResult r = backend->forward({sequences[next++ % sequences.size()]});
          return uint64_t(r.logits[0] > 0);
        },
        T, 1e6, options);
  }
  std::vector<std::vector<int>> batch(sequences.begin(), sequences.begin() + std::min<size_t>(kBatch, sequences.size()));
  row.batch_us = time_per_unit(
      [&] {
        ForwardResult r = backend->forward(batch);
        return uint64_t(r.logits[0] > 0);
      },
      double(batch.size()) * T, 1e6, options);
}

struct LoadedProgramFile {
  std::shared_ptr<const SourceFile> source;
  Program program;
  ProgramHeader header;
  std::vector<Value> vocab;
};

LoadedProgramFile load_program_file(const std::string& path) {
  LoadedProgramFile f;
  f.source = read_source_file(path);
  f.program = evaluate_program(f.source);
  f.header = read_program_header(f.source);
  f.vocab = header_vocabulary(f.header);
  if (f.vocab.empty())
    fail_file(path, "the program has no `# vocab:` header line, so raspc bench cannot choose its inputs; add one");
  return f;
}

// Random inputs of exactly `length` symbols, as indices into the vocabulary.
std::vector<std::vector<int>> random_symbol_inputs(size_t vocab_size, int length, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, int(vocab_size) - 1);
  std::vector<std::vector<int>> inputs(count, std::vector<int>(length));
  for (auto& input : inputs)
    for (int& s : input) s = pick(rng);
  return inputs;
}

void measure_direct(const LoadedProgramFile& file, const std::string& stem, Mode mode, int length,
                    const std::vector<std::vector<int>>& symbols, const CostOptions& options, CostRow& row) {
  std::vector<std::vector<Value>> values;
  for (const auto& s : symbols) {
    std::vector<Value> v;
    for (int i : s) v.push_back(file.vocab[i]);
    values.push_back(std::move(v));
  }
  Interpreter interpreter(file.program, mode);
  size_t next = 0;
  try {
    row.interpreter_us = time_per_unit(
        [&] { return uint64_t(interpreter.run(values[next++ % values.size()]).size()); }, length, 1e6, options);
  } catch (const UserError&) {
    row.interpreter_us.reset();  // the program is undefined on some random input: no figure
  }
  if (!native::has_rule(stem)) return;
  std::vector<std::vector<uint8_t>> bytes;
  for (const auto& s : symbols) bytes.emplace_back(s.begin(), s.end());
  const bool one_prediction = stem == "aab";
  row.native_ns = time_per_unit(
      [&] {
        const auto& b = bytes[next++ % bytes.size()];
        return native::run_rule(stem, b.data(), b.size());
      },
      one_prediction ? 1 : length, 1e9, options);
  if (options.count_instructions) {
    std::string source;
    if (auto per_call = native_instructions_per_call(stem, length, int(file.vocab.size()), options, source)) {
      row.native_instructions = *per_call / (one_prediction ? 1 : length);
      row.instructions_source = source;
    }
  }
}

}  // namespace

std::vector<CostRow> measure_program(const std::string& path, const CostOptions& options) {
  LoadedProgramFile file = load_program_file(path);
  const std::string stem = fs::path(path).stem().string();
  const Mode mode = file.header.causal.value_or(false) ? Mode::Causal : Mode::Bidirectional;
  std::vector<CostRow> rows;
  for (int max_len : options.max_lens) {
    CostRow row;
    row.program = stem;
    row.model = "compiled";
    row.mode = mode == Mode::Causal ? "causal" : "bidirectional";
    row.max_len = max_len;
    CompileOptions compile;
    compile.vocab = file.vocab;
    compile.max_len = max_len;
    compile.mode = mode;
    compile.verify = false;
    compile.source_text = file.source->text;
    compile.device = options.device;
    std::vector<std::vector<int>> symbols = random_symbol_inputs(file.vocab.size(), max_len, std::max(kBatch, kInputPool), 7);
    try {
      CompileResult compiled = compile_program(file.program, compile);
      std::vector<std::vector<int>> tokens;
      for (const auto& s : symbols) {
        std::vector<int> t;
        for (int i : s) t.push_back(compiled.model.token_id(to_display(file.vocab[i])));
        tokens.push_back(std::move(t));
      }
      measure_model(compiled.model, tokens, max_len, options, row);
    } catch (const UserError& e) {
      std::string why = e.what();
      row.refused = why.substr(0, why.find('\n'));
    }
    measure_direct(file, stem, mode, max_len, symbols, options, row);
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// A token as the interpreter displays an integer (-12, 0, 7): a vocabulary of such tokens came
// from an integer vocabulary; "-", "--" or "007" stay strings.
bool is_integer_text(const std::string& t) {
  const size_t digits = t.size() > 0 && t[0] == '-' ? 1 : 0;
  if (t.size() == digits || t.find_first_not_of("0123456789", digits) != std::string::npos) return false;
  return t[digits] != '0' || t.size() == 1;
}

}  // namespace

std::vector<CostRow> measure_model_file(const std::string& path, const CostOptions& options) {
  Model model = load_model(path);
  CostRow row;
  row.program = fs::path(path).filename().string();
  row.model = "file";
  row.max_len = model.config.n_positions - (model.bos_id >= 0 ? 1 : 0);
  std::vector<int> inputs = model.input_ids;
  if (inputs.empty())
    for (int v = 0; v < model.config.vocab_size; ++v)
      if (v != model.bos_id) inputs.push_back(v);
  if (inputs.empty() || row.max_len < 1) fail_file(path, "the model has no input tokens or no room for one, so it cannot be measured");
  std::vector<std::vector<int>> symbols = random_symbol_inputs(inputs.size(), row.max_len, std::max(kBatch, kInputPool), 7);
  std::vector<std::vector<int>> tokens;
  for (const auto& s : symbols) {
    std::vector<int> t;
    for (int i : s) t.push_back(inputs[i]);
    tokens.push_back(std::move(t));
  }
  measure_model(model, tokens, row.max_len, options, row);
  // A compiled model carries its program: time the interpreter on the same inputs.
  if (model.metadata.contains("program") && model.metadata["program"].is_string() &&
      !model.metadata["program"].get<std::string>().empty()) {
    LoadedProgramFile file;
    file.source = std::make_shared<SourceFile>(SourceFile{path + " (program)", model.metadata["program"].get<std::string>()});
    file.program = evaluate_program(file.source);
    bool all_integers = true;
    for (int id : inputs) all_integers = all_integers && is_integer_text(model.vocab[id]);
    for (int id : inputs) {
      const std::string& token = model.vocab[id];
      int64_t value = 0;
      if (all_integers) {
        auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
        if (error != std::errc() || end != token.data() + token.size())
          fail_file(path, "the model's token " + token + " is an integer that does not fit in 64 bits");
      }
      file.vocab.push_back(all_integers ? Value::of_int(value) : Value::of_string(token));
    }
    measure_direct(file, "", model.config.causal ? Mode::Causal : Mode::Bidirectional, row.max_len, symbols, options, row);
  }
  return {row};
}

std::vector<CostRow> measure_aab_post(const std::string& aab_program_path, const CostOptions& options) {
  // The post's setting: 5 tokens of context, one prediction after them. The native rule reads
  // the last two of them.
  constexpr int kContext = 5;
  LoadedProgramFile file = load_program_file(aab_program_path);
  std::vector<std::vector<int>> symbols = random_symbol_inputs(file.vocab.size(), kContext, kInputPool, 11);
  std::vector<CostRow> rows;

  auto measure_one_prediction = [&](const Model& model, CostRow& row) {
    std::vector<std::vector<int>> tokens;
    for (const auto& s : symbols) {
      std::vector<int> t;
      for (int i : s) t.push_back(model.token_id(to_display(file.vocab[i])));
      tokens.push_back(std::move(t));
    }
    measure_model(model, tokens, kContext, options, row);
    // One prediction costs the whole 5-token forward: report it per prediction, not per token.
    int T = kContext + (model.bos_id >= 0 ? 1 : 0);
    row.flops_per_token = forward_flops(model.config, T);
    row.sequence_us.median *= T, row.sequence_us.min *= T, row.sequence_us.max *= T;
    row.batch_us.median *= T, row.batch_us.min *= T, row.batch_us.max *= T;
  };

  CostRow handset;
  handset.program = "aab (post: 5-token context, 1 prediction)";
  handset.model = "hand-set";
  handset.max_len = kContext;
  Model handset_model = make_handset_aab();
  measure_one_prediction(handset_model, handset);
  measure_direct(file, "aab", Mode::Causal, kContext, symbols, options, handset);
  if (handset.interpreter_us) {
    handset.interpreter_us->median *= kContext, handset.interpreter_us->min *= kContext, handset.interpreter_us->max *= kContext;
  }
  rows.push_back(handset);

  CostRow compiled = handset;
  compiled.model = "compiled";
  CompileOptions compile;
  compile.vocab = file.vocab;
  compile.max_len = kContext;
  compile.mode = Mode::Causal;
  compile.verify = false;
  compile.source_text = file.source->text;
  compile.device = options.device;
  try {
    CompileResult result = compile_program(file.program, compile);
    measure_one_prediction(result.model, compiled);
  } catch (const UserError& e) {
    std::string why = e.what();
    compiled.refused = why.substr(0, why.find('\n'));
  }
  rows.push_back(compiled);
  return rows;
}

}  // namespace raspc
