// The cost figures as a reader sees them: the machine they were taken on, the Markdown table
// (bench/RESULTS.md's cost section), the JSON (`raspc bench --json`) and the two plots.
#include "cost/cost.hpp"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/atomic_file.hpp"
#include "support/svg_plot.hpp"

#ifndef RASPC_BUILD_FLAGS
#define RASPC_BUILD_FLAGS "unknown"
#endif

namespace raspc {
namespace {

std::string format_timing(const std::optional<Timing>& t) {
  if (!t || t->samples == 0) return "-";
  char text[64];
  double spread = t->median > 0 ? (t->max - t->min) / 2 / t->median * 100 : 0;
  std::snprintf(text, sizeof text, "%.3g (±%.0f%%)", t->median, spread);
  return text;
}

std::string format_number(double v, const char* format = "%.3g") {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

nlohmann::json timing_json(const std::optional<Timing>& t) {
  if (!t || t->samples == 0) return nullptr;
  return {{"median", t->median}, {"min", t->min}, {"max", t->max}, {"samples", t->samples}};
}

}  // namespace

nlohmann::json machine_description() {
  std::string cpu = "unknown";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return {{"cpu", cpu},
          {"cores", std::thread::hardware_concurrency()},
          {"compiler", std::string("g++ ") + __VERSION__},
          {"flags", RASPC_BUILD_FLAGS},
          {"threads", 1},
          {"date", date}};
}

std::string cost_markdown(const std::vector<CostRow>& rows, const nlohmann::json& machine, size_t max_parameters) {
  std::ostringstream md;
  md << "Measured " << machine["date"].get<std::string>() << " on " << machine["cpu"].get<std::string>() << " ("
     << machine["cores"].get<unsigned>() << " cores; one thread), " << machine["compiler"].get<std::string>() << ", `"
     << machine["flags"].get<std::string>() << "`. Times are medians of " << (rows.empty() ? 0 : rows[0].sequence_us.samples)
     << " samples after a warm-up, ± half their range. FLOPs per token: the whole forward of one full-length "
        "sequence (BOS included) divided by its tokens. Native instructions per position are counted by "
     << (rows.empty() || rows[0].instructions_source.empty() ? std::string("callgrind or perf") : rows[0].instructions_source)
     << " (`cost/native_rules.hpp`). Models over " << format_number(double(max_parameters), "%.0f")
     << " parameters are sized but not timed. In the (aab)* post's rows every figure is per prediction "
        "(one forward over the 5-token context), as the post counts it.\n\n"
     << "| program | model | mode | max len | layers | heads | d | mlp | params | non-zero | FLOPs/token "
        "| 1 seq µs/token | batch-64 µs/token | interpreter µs/pos | native ns/pos | native instr/pos "
        "| FLOPs per instr | seq time / native |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const CostRow& r : rows) {
    md << "| " << r.program << " | " << r.model << " | " << r.mode << " | " << r.max_len << " | ";
    if (!r.refused.empty()) {
      md << "refused: " << r.refused << " | | | | | | | | | ";
    } else {
      md << r.layers << " | " << r.heads << " | " << r.n_embd << " | " << r.n_inner << " | " << r.parameters << " | "
         << r.nonzero_parameters << " | " << format_number(r.flops_per_token, "%.0f") << " | "
         << format_timing(r.sequence_us) << " | " << format_timing(r.batch_us) << " | ";
    }
    md << format_timing(r.interpreter_us) << " | " << format_timing(r.native_ns) << " | "
       << (r.native_instructions ? format_number(*r.native_instructions) : "-") << " | ";
    if (r.refused.empty() && r.native_instructions && *r.native_instructions > 0)
      md << format_number(r.flops_per_token / *r.native_instructions, "%.0f");
    else
      md << "-";
    md << " | ";
    if (r.refused.empty() && r.timed && r.native_ns && r.native_ns->median > 0)
      md << format_number(r.sequence_us.median * 1e3 / r.native_ns->median, "%.0f") << "x";
    else
      md << "-";
    md << " |\n";
  }
  return md.str();
}

nlohmann::json cost_json(const std::vector<CostRow>& rows, const nlohmann::json& machine) {
  nlohmann::json out = {{"machine", machine}, {"rows", nlohmann::json::array()}};
  for (const CostRow& r : rows) {
    nlohmann::json j = {{"program", r.program}, {"model", r.model}, {"mode", r.mode}, {"max_len", r.max_len}};
    if (!r.refused.empty()) {
      j["refused"] = r.refused;
    } else {
      j.update({{"layers", r.layers}, {"heads", r.heads}, {"n_embd", r.n_embd}, {"n_inner", r.n_inner},
                {"parameters", r.parameters}, {"nonzero_parameters", r.nonzero_parameters},
                {"flops_per_token", r.flops_per_token}, {"timed", r.timed},
                {"sequence_us_per_token", timing_json(r.sequence_us)},
                {"batch64_us_per_token", timing_json(r.batch_us)}});
    }
    j["interpreter_us_per_position"] = timing_json(r.interpreter_us);
    j["native_ns_per_position"] = timing_json(r.native_ns);
    j["native_instructions_per_position"] = r.native_instructions ? nlohmann::json(*r.native_instructions) : nlohmann::json(nullptr);
    if (!r.instructions_source.empty()) j["instructions_source"] = r.instructions_source;
    out["rows"].push_back(j);
  }
  return out;
}

void write_cost_plots(const std::vector<CostRow>& rows, const std::string& plots_dir) {
  fs::create_directories(plots_dir);
  PlotSpec flops{.title = "FLOPs per token: compiled network against native instructions",
                 .x_label = "maximum length", .y_label = "operations per position", .log_x = true, .log_y = true};
  PlotSpec time{.title = "Time per token: compiled network (1 sequence) against native rule",
                .x_label = "maximum length", .y_label = "nanoseconds per position", .log_x = true, .log_y = true};
  std::vector<std::string> programs;
  for (const CostRow& r : rows)
    if (r.model == "compiled" && r.native_ns && r.program.find("post") == std::string::npos &&
        std::find(programs.begin(), programs.end(), r.program) == programs.end())
      programs.push_back(r.program);
  for (size_t k = 0; k < programs.size(); ++k) {
    const std::string& p = programs[k];
    const int colour = int(k);
    PlotSeries net_flops{p + " network", false, colour, {}, {}}, native_instr{p + " native", true, colour, {}, {}};
    PlotSeries net_time{p + " network", false, colour, {}, {}}, native_time{p + " native", true, colour, {}, {}};
    for (const CostRow& r : rows) {
      if (r.program != p || r.model != "compiled") continue;
      if (r.refused.empty()) {
        net_flops.x.push_back(r.max_len), net_flops.y.push_back(r.flops_per_token);
        if (r.timed) net_time.x.push_back(r.max_len), net_time.y.push_back(r.sequence_us.median * 1e3);
      }
      if (r.native_instructions) native_instr.x.push_back(r.max_len), native_instr.y.push_back(*r.native_instructions);
      if (r.native_ns) native_time.x.push_back(r.max_len), native_time.y.push_back(r.native_ns->median);
    }
    flops.series.push_back(net_flops), flops.series.push_back(native_instr);
    time.series.push_back(net_time), time.series.push_back(native_time);
  }
  write_file_atomically(plots_dir + "/flops.svg", render_svg_plot(flops));
  write_file_atomically(plots_dir + "/time.svg", render_svg_plot(time));
}

}  // namespace raspc
