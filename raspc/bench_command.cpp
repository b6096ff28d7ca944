// raspc bench: what a compiled network costs against the rule it encodes (cost/cost.hpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "raspc/command_options.hpp"
#include "raspc/commands.hpp"
#include "cost/cost.hpp"
#include "support/atomic_file.hpp"
#include "support/diagnostics.hpp"

#ifndef RASPC_PROGRAMS_DIR
#define RASPC_PROGRAMS_DIR "programs"
#endif

namespace raspc {
namespace {

namespace fs = std::filesystem;

const char* const kBeginMarker = "<!-- raspc bench: begin (generated; do not edit) -->";
const char* const kEndMarker = "<!-- raspc bench: end -->";

std::vector<int> parse_lengths(const std::string& text) {
  auto file = std::make_shared<SourceFile>(SourceFile{"--max-len", text});
  std::vector<int> lengths;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(at, comma - at);
    Span span{file, uint32_t(at), uint32_t(std::max(comma, at + 1))};
    size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(item, &used);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < 1 || value > 4096)
      fail_at(span, "each maximum length is a whole number from 1 to 4096, separated by commas, as in 5,8,16");
    lengths.push_back(value);
    at = comma + 1;
  }
  return lengths;
}

// The rows' region of a results file, replaced in place between the markers (appended with a
// heading when the file has none).
void update_results_file(const std::string& path, const std::string& markdown) {
  std::string text;
  if (fs::exists(path)) text = read_file_bytes(path);
  std::string region = std::string(kBeginMarker) + "\n" + markdown + kEndMarker;
  size_t begin = text.find(kBeginMarker), end = text.find(kEndMarker);
  if (begin != std::string::npos && end != std::string::npos && end > begin) {
    text.replace(begin, end + std::string(kEndMarker).size() - begin, region);
  } else {
    if (!text.empty() && text.back() != '\n') text += "\n";
    text += "\n## Cost: compiled networks against the rules they encode\n\n"
            "Regenerate with `bench/cost.sh` (it runs `raspc bench`).\n\n" + region + "\n";
  }
  write_file_atomically(path, text);
}

// The folder --out-dir names and what bench writes in it.
void check_bench_out_dir(const std::string& folder) {
  check_output_folder(folder, "--out-dir");
  if (!fs::is_directory(folder)) return;
  check_output_path(folder + "/cost.md", "--out-dir");
  check_output_path(folder + "/cost.json", "--out-dir");
  check_output_folder(folder + "/plots", "--out-dir");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "Measure compiled networks against the rules they encode: FLOPs, time, instructions");
  struct Options {
    std::vector<std::string> targets;
    std::string max_lens = "5,8,16,32,64", device = "cpu", out_dir, results, programs_dir = RASPC_PROGRAMS_DIR;
    int samples = 11;
    size_t max_parameters = 20'000'000;
    bool no_instructions = false, no_post = false, json = false;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("targets", o->targets,
                  "Program files (.rasp) or model files (.safetensors); default: every program of --programs-dir");
  cmd->add_option("--max-len", o->max_lens, "Maximum lengths to compile each program at, comma-separated")->capture_default_str();
  cmd->add_option("--device", o->device, "Where the compiled models run: cpu or cuda")->capture_default_str();
  cmd->add_option("--samples", o->samples, "Timing samples per figure (after one warm-up)")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--max-parameters", o->max_parameters, "Size but do not time compiled models with more parameters")
      ->capture_default_str();
  cmd->add_flag("--no-instructions", o->no_instructions, "Do not count the native rules' instructions (callgrind is slow)");
  cmd->add_flag("--no-post", o->no_post,
                "Leave out the (aab)* post's setting (hand-set against compiled, 5 tokens), measured with aab.rasp");
  cmd->add_option("--programs-dir", o->programs_dir, "Where the default programs are")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the figures as JSON (cost.json's schema, docs/json.md) instead of Markdown");
  auto* out_dir_option = cmd->add_option("--out-dir", o->out_dir, "Also write cost.md, cost.json and plots/*.svg there");
  auto* results_option = cmd->add_option("--update-results", o->results, "Replace the generated cost section of this Markdown file (bench/RESULTS.md)");
  cmd->callback([o, out_dir_option, results_option] {
    // The outputs are checked before the measuring, which takes minutes.
    const bool write_out_dir = out_dir_option->count() > 0, update_results = results_option->count() > 0;
    if (write_out_dir) check_bench_out_dir(o->out_dir);
    if (update_results) check_output_path(o->results, "--update-results", o->targets);
    CostOptions options;
    options.max_lens = parse_lengths(o->max_lens);
    options.device = device_option(o->device);
    options.samples = o->samples;
    options.max_parameters = o->max_parameters;
    options.count_instructions = !o->no_instructions;
    std::vector<std::string> targets = o->targets;
    if (targets.empty()) {
      if (!fs::is_directory(o->programs_dir))
        fail_file(o->programs_dir, "the programs folder does not exist; name programs to measure, or give --programs-dir");
      for (const auto& entry : fs::directory_iterator(o->programs_dir))
        if (entry.path().extension() == ".rasp") targets.push_back(entry.path().string());
      std::sort(targets.begin(), targets.end());
    }
    std::vector<CostRow> rows;
    // The post's setting comes with aab.rasp: when the whole library is measured, or aab.rasp is named.
    const auto aab = std::find_if(targets.begin(), targets.end(),
                                  [](const std::string& t) { return fs::path(t).filename() == "aab.rasp"; });
    if (!o->no_post && aab != targets.end()) {
      std::cerr << "measuring the (aab)* post's setting...\n";
      for (CostRow& r : measure_aab_post(*aab, options)) rows.push_back(std::move(r));
    }
    for (const std::string& target : targets) {
      std::cerr << "measuring " << target << "...\n";
      const bool model_file = fs::path(target).extension() == ".safetensors";
      for (CostRow& r : model_file ? measure_model_file(target, options) : measure_program(target, options))
        rows.push_back(std::move(r));
    }
    nlohmann::json machine = machine_description();
    std::string markdown = cost_markdown(rows, machine, options.max_parameters);
    if (o->json) std::cout << cost_json(rows, machine).dump(2) << "\n";
    else std::cout << markdown;
    if (write_out_dir) {
      fs::create_directories(o->out_dir);
      write_file_atomically(o->out_dir + "/cost.md", markdown);
      write_file_atomically(o->out_dir + "/cost.json", cost_json(rows, machine).dump(2) + "\n");
      write_cost_plots(rows, o->out_dir + "/plots");
    }
    if (update_results) update_results_file(o->results, markdown);
  });
}

}  // namespace raspc
