// Compile times and compiled sizes (bench/RESULTS.md, section "Compiler").
//
//   compile_bench   1. every program of programs/ at maximum length 16, without verification
//                      (median of 5 compiles, CPU time of this thread)
//                   2. sort by frequency (programs/most_freq.rasp) at maximum length 40
//                   3. layers/heads/residual/MLP/block parameters at Tracr's vocabularies and
//                      maximum length 5, beside Tracr's own figures (shared/acceptance/tracr_sizes.md)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/thread_clock.hpp"
#include "compiler/compile.hpp"
#include "language/program_file.hpp"
#include "language/evaluate.hpp"
#include "language/input.hpp"
#include "support/diagnostics.hpp"

using namespace raspc;

namespace {

std::string programs_dir() {
  if (std::filesystem::exists("programs")) return "programs";
  return (std::filesystem::path(__FILE__).parent_path().parent_path() / "programs").string();
}

struct Measured {
  CompileResult result;
  double median_ms = 0;
  std::string refused;
};

Measured measure(const std::shared_ptr<const SourceFile>& source, const std::vector<Value>& vocab, int max_len,
                 Mode mode, int repeats) {
  Measured m;
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    CompileOptions o;
    o.vocab = vocab;
    o.max_len = max_len;
    o.mode = mode;
    o.verify = false;
    try {
      double start = bench::thread_cpu_seconds();
      Program program = evaluate_program(source);
      m.result = compile_program(program, o);
      times.push_back(1000.0 * (bench::thread_cpu_seconds() - start));
    } catch (const UserError& e) {
      std::string text = e.what();
      size_t at = text.find("error: ");
      m.refused = text.substr(at == std::string::npos ? 0 : at + 7);
      m.refused = m.refused.substr(0, m.refused.find('\n'));
      return m;
    }
  }
  std::sort(times.begin(), times.end());
  m.median_ms = times[times.size() / 2];
  return m;
}

size_t block_parameters(const Model& model) {
  const ModelConfig& c = model.config;
  return parameter_count(c) - size_t(c.vocab_size + c.n_positions) * size_t(c.n_embd);
}

std::shared_ptr<const SourceFile> text_source(const std::string& name, const std::string& text) {
  return std::make_shared<SourceFile>(SourceFile{name, text});
}

}  // namespace

int main() {
  try {
    const std::string dir = programs_dir();
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".rasp") names.push_back(entry.path().stem().string());
    std::sort(names.begin(), names.end());

    std::printf("## compile time without verification, maximum length 16 (median of 5, thread CPU time)\n\n");
    std::printf("| program | mode | layers | heads | n_embd | MLP | parameters | compile ms |\n|---|---|---|---|---|---|---|---|\n");
    for (const std::string& name : names) {
      auto source = read_source_file(dir + "/" + name + ".rasp");
      ProgramHeader header = read_program_header(source);
      for (Mode mode : {Mode::Bidirectional, Mode::Causal}) {
        if (mode == Mode::Causal && !header.causal.value_or(false)) continue;
        Measured m = measure(source, header_vocabulary(header), 16, mode, 5);
        const char* mode_name = mode == Mode::Causal ? "causal" : "bidirectional";
        if (!m.refused.empty()) {
          std::printf("| %s | %s | refused: %s |||||| \n", name.c_str(), mode_name, m.refused.c_str());
          continue;
        }
        const ModelConfig& c = m.result.model.config;
        std::printf("| %s | %s | %d | %d | %d | %d | %zu | %.2f |\n", name.c_str(), mode_name, c.n_layer, c.n_head,
                    c.n_embd, c.n_inner, parameter_count(c), m.median_ms);
      }
    }

    std::printf("\n## sort by frequency (most_freq.rasp, vocabulary a b c d) at maximum length 40\n\n");
    {
      auto source = read_source_file(dir + "/most_freq.rasp");
      Measured m = measure(source, parse_vocabulary("abcd"), 40, Mode::Bidirectional, 3);
      if (!m.refused.empty()) {
        std::printf("refused: %s\n", m.refused.c_str());
      } else {
        const ModelConfig& c = m.result.model.config;
        std::printf("layers %d, heads %d, n_embd %d, MLP %d, weights %zu, compile %.1f ms (median of 3)\n", c.n_layer,
                    c.n_head, c.n_embd, c.n_inner, parameter_count(c), m.median_ms);
      }
    }

    std::printf("\n## beside Tracr, at Tracr's vocabularies and maximum length 5\n\n");
    std::printf("| program | vocab | raspc layers/heads/d/mlp/block params | Tracr layers/heads/d/mlp/block params |\n|---|---|---|---|\n");
    struct Case {
      const char* label;
      const char* file;  // programs/<file>.rasp, or "" for `text`
      const char* text;
      const char* vocab;
      const char* tracr;
    };
    const Case cases[] = {
        {"length", "length", "", "abcd", "1/1/19/12/912"},
        {"frac_prevs", "frac_prevs", "", "abcx", "2/1/14/1/840"},
        {"shuffle_dyck2", "shuffle_dyck2", "", "(){}", "8/4/55/212/242,880"},
        {"sort", "sort", "", "[1,2,3,4,5]", "3/1/50/25/23,700"},
        {"sort_unique", "sort_unique", "", "[1,2,3,4,5]", "2/1/25/12/2,600"},
        {"hist", "hist", "", "abcd", "1/1/19/12/912"},
        {"sort_freq", "most_freq", "", "abcd", "5/1/66/30/62,040"},
        {"pair_balance", "pair_balance", "", "()", "2/2/15/4/1,920"},
        {"reverse", "reverse", "", "[1,2,3]", "4/1/41/30/17,712"},
        {"count_less_freq(2)", "count_less_freq", "", "abcd", "2/1/26/12/2,912"},
        {"count of \"a\"", "", "count(tokens, \"a\");", "abc", "1/1/18/12/792"},
        {"shift_by(1)", "shift", "", "abcd", "1/1/16/-/480"},
        {"detect_pattern(\"abc\")", "detect_pattern", "", "abc", "3/2/25/6/5,100"},
    };
    for (const Case& c : cases) {
      auto source = std::string(c.file).empty() ? text_source("count.rasp", c.text)
                                                : read_source_file(dir + "/" + c.file + ".rasp");
      Measured m = measure(source, parse_vocabulary(c.vocab), 5, Mode::Bidirectional, 1);
      std::string ours;
      if (!m.refused.empty()) {
        ours = "refused";
      } else {
        const ModelConfig& k = m.result.model.config;
        ours = std::to_string(k.n_layer) + "/" + std::to_string(k.n_head) + "/" + std::to_string(k.n_embd) + "/" +
               std::to_string(k.n_inner) + "/" + std::to_string(block_parameters(m.result.model));
      }
      std::printf("| %s | %s | %s | %s |\n", c.label, c.vocab, ours.c_str(), c.tracr);
    }
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s", e.what());
    return 1;
  }
  return 0;
}
