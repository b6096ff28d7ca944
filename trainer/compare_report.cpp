// The reports of a comparison: plain table, Markdown, JSON, SVG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "runtime/safetensors.hpp"
#include "support/svg_plot.hpp"
#include "trainer/compare.hpp"

namespace raspc {

namespace {

std::string percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * fraction);
  return text;
}

std::string reach(const ArmResult& arm, int steps, double seconds) {
  if (!arm.available) return "-";
  if (!arm.trained) return "compiled";
  if (!arm.source.empty()) return "-";  // trained elsewhere: its steps are not known here
  if (steps < 0) return "never";
  char text[48];
  std::snprintf(text, sizeof text, "%d (%.1f s)", steps, seconds);
  return text;
}

std::string flops_text(double flops) {
  char text[24];
  if (flops >= 1e6)
    std::snprintf(text, sizeof text, "%.2fM", flops / 1e6);
  else if (flops >= 1e3)
    std::snprintf(text, sizeof text, "%.1fk", flops / 1e3);
  else
    std::snprintf(text, sizeof text, "%.0f", flops);
  return text;
}

std::string accuracy_pair(const Evaluation& e) {
  if (e.positions == 0) return "-";
  return percent(e.token_accuracy()) + " / " + percent(e.sequence_accuracy());
}

std::string head_name(int layer, int head) { return "L" + std::to_string(layer) + "H" + std::to_string(head); }

// Rows of cells, rendered as an aligned text table or a Markdown table.
using Rows = std::vector<std::vector<std::string>>;

std::string render(const Rows& rows, bool markdown) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line = markdown ? "|" : "";
    for (size_t c = 0; c < rows[r].size(); ++c) {
      std::string cell = rows[r][c];
      cell.resize(width[c], ' ');
      line += markdown ? " " + cell + " |" : (c ? "  " : "") + cell;
    }
    while (!markdown && !line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (r == 0) {
      std::string rule = markdown ? "|" : "";
      for (size_t c = 0; c < width.size(); ++c)
        rule += markdown ? std::string(width[c] + 2, '-') + "|" : (c ? "  " : "") + std::string(width[c], '-');
      out += rule + "\n";
    }
  }
  return out;
}

Rows summary_rows(const CompareResult& r) {
  Rows rows = {{"arm", "layers", "heads", "n_embd", "mlp", "params", "FLOPs/token",
                "train lengths " + std::to_string(r.train_min) + "-" + std::to_string(r.train_max) + " (token / seq)",
                "to 99%", "to 100%", "steps run"}};
  for (const ArmResult& a : r.arms) {
    if (!a.available) {
      rows.push_back({a.name, "-", "-", "-", "-", "-", "-", "not compiled", "-", "-", "-"});
      continue;
    }
    rows.push_back({a.name, std::to_string(a.config.n_layer), std::to_string(a.config.n_head),
                    std::to_string(a.config.n_embd), std::to_string(a.config.n_inner), std::to_string(a.parameters),
                    flops_text(a.flops_per_token), accuracy_pair(a.training_lengths),
                    reach(a, a.steps_to_99, a.seconds_to_99), reach(a, a.steps_to_100, a.seconds_to_100),
                    a.trained && a.source.empty() ? std::to_string(a.steps_run) : "-"});
  }
  return rows;
}

Rows length_rows(const CompareResult& r) {
  Rows rows = {{"length"}};
  for (const ArmResult& a : r.arms) rows[0].push_back(a.name);
  for (int L = 1; L <= r.max_len; ++L) {
    const bool trained = L >= r.train_min && L <= r.train_max;
    std::vector<std::string> row = {std::to_string(L) + (trained ? " (train)" : "")};
    for (const ArmResult& a : r.arms)
      row.push_back(a.available && size_t(L) <= a.by_length.size() ? accuracy_pair(a.by_length[L - 1]) : "-");
    rows.push_back(row);
  }
  return rows;
}

Rows head_rows(const CompareResult& r) {
  Rows rows = {{"compiled head"}};
  const ArmResult* compiled = nullptr;
  for (const ArmResult& a : r.arms) {
    if (!a.trained && a.available) compiled = &a;
    if (a.trained) rows[0].push_back(a.name);
  }
  if (!compiled) return {};
  for (int l = 0; l < compiled->config.n_layer; ++l)
    for (int h = 0; h < compiled->config.n_head; ++h) {
      std::vector<std::string> row = {head_name(l, h)};
      for (const ArmResult& a : r.arms) {
        if (!a.trained) continue;
        std::string cell = "-";
        for (const HeadMatch& m : a.heads)
          if (m.compiled_layer == l && m.compiled_head == h && m.layer >= 0) {
            char text[48];
            std::snprintf(text, sizeof text, "%s %.2f", head_name(m.layer, m.head).c_str(), m.agreement);
            cell = text;
          }
        row.push_back(cell);
      }
      rows.push_back(row);
    }
  return rows;
}

std::string heading(const CompareResult& r) {
  const nlohmann::json& s = r.settings;
  std::ostringstream out;
  out << r.program_name << ": vocab";
  for (const auto& v : s["vocab"]) out << " " << v.get<std::string>();
  out << ", max length " << r.max_len << ", training lengths " << r.train_min << "-" << r.train_max << ", "
      << (s["causal"].get<bool>() ? "causal" : "bidirectional") << "; ";
  if (s.value("train_arms", true))
    out << s["steps"] << " steps of batch " << s["batch"] << ", lr " << s["lr"].get<double>() << ", seed " << s["seed"]
        << ", ";
  out << "held-out " << s["held_out_per_length"] << " per length";
  return out.str();
}

const char* kHeadNote =
    "Agreement: sum over keys of min(compiled, trained) attention weight, averaged over the queries of the held-out "
    "inputs at the training lengths (1 = identical patterns).";

}  // namespace

std::string comparison_table(const CompareResult& r) {
  std::string out = heading(r) + "\n";
  if (!r.compile_error.empty()) out += "not compiled: " + r.compile_error + "\n";
  out += "\n" + render(summary_rows(r), false);
  out += "\nheld-out accuracy by length (token / sequence):\n" + render(length_rows(r), false);
  Rows heads = head_rows(r);
  if (!heads.empty()) out += "\nbest-matching trained head per compiled head:\n" + render(heads, false);
  return out;
}

std::string comparison_markdown(const CompareResult& r, const std::string& svg_file_name) {
  std::string out = "## " + r.program_name + "\n\n" + heading(r) + "\n\n";
  if (!r.compile_error.empty()) out += "Not compiled: `" + r.compile_error + "`\n\n";
  out += render(summary_rows(r), true);
  out += "\nHeld-out accuracy by length (token / sequence):\n\n" + render(length_rows(r), true);
  Rows heads = head_rows(r);
  if (!heads.empty()) out += "\nBest-matching trained head per compiled head. " + std::string(kHeadNote) + "\n\n" + render(heads, true);
  if (!svg_file_name.empty()) out += "\n![token accuracy against length](" + svg_file_name + ")\n";
  return out;
}

nlohmann::json comparison_json(const CompareResult& r) {
  nlohmann::json arms = nlohmann::json::array();
  for (const ArmResult& a : r.arms) {
    nlohmann::json j = {{"name", a.name}, {"available", a.available}, {"trained", a.trained}};
    if (!a.available) {
      j["note"] = a.note;
      arms.push_back(j);
      continue;
    }
    j["config"] = config_to_json(a.config);
    j["parameters"] = a.parameters;
    j["flops_per_token"] = a.flops_per_token;
    auto eval_json = [](const Evaluation& e) {
      return nlohmann::json{{"token_accuracy", e.token_accuracy()}, {"sequence_accuracy", e.sequence_accuracy()},
                            {"positions", e.positions}, {"sequences", e.sequences}};
    };
    j["training_lengths"] = eval_json(a.training_lengths);
    nlohmann::json by_length = nlohmann::json::array();
    for (size_t L = 0; L < a.by_length.size(); ++L) {
      nlohmann::json e = eval_json(a.by_length[L]);
      e["length"] = L + 1;
      by_length.push_back(e);
    }
    j["by_length"] = by_length;
    if (!a.source.empty()) j["source"] = a.source;
    if (a.trained && a.source.empty()) {
      auto or_null = [](int steps, double value) { return steps < 0 ? nlohmann::json() : nlohmann::json(value); };
      j["steps_run"] = a.steps_run;
      j["seconds"] = a.seconds;
      j["steps_to_99"] = or_null(a.steps_to_99, a.steps_to_99);
      j["steps_to_100"] = or_null(a.steps_to_100, a.steps_to_100);
      j["seconds_to_99"] = or_null(a.steps_to_99, a.seconds_to_99);
      j["seconds_to_100"] = or_null(a.steps_to_100, a.seconds_to_100);
    }
    if (a.trained) {
      nlohmann::json heads = nlohmann::json::array();
      for (const HeadMatch& m : a.heads)
        heads.push_back({{"compiled", head_name(m.compiled_layer, m.compiled_head)},
                         {"trained", m.layer < 0 ? nlohmann::json() : nlohmann::json(head_name(m.layer, m.head))},
                         {"agreement", m.agreement}});
      j["head_matches"] = heads;
    }
    arms.push_back(j);
  }
  return {{"program", r.program_name},
          {"settings", r.settings},
          {"train_lengths", {r.train_min, r.train_max}},
          {"max_len", r.max_len},
          {"compile_error", r.compile_error},
          {"arms", arms}};
}

std::string comparison_svg(const CompareResult& r) {
  PlotSpec spec{.title = r.program_name + ": held-out token accuracy by input length",
                .x_label = "input length (shaded: training lengths)",
                .y_label = "token accuracy (%)"};
  spec.x_range = {1, std::max(2, r.max_len)};
  spec.y_range = {0, 100};
  spec.x_band = {r.train_min - 0.5, r.train_max + 0.5};
  for (size_t k = 0; k < r.arms.size(); ++k) {
    const ArmResult& a = r.arms[k];
    if (!a.available) continue;
    // An arm keeps its colour when another is missing; the compiled arm, exact at every length
    // where trained arms may be too, is drawn on top of them.
    PlotSeries series{a.name, false, int(k), {}, {}, !a.trained};
    for (size_t L = 0; L < a.by_length.size(); ++L)
      if (a.by_length[L].positions > 0) {
        series.x.push_back(double(L + 1));
        series.y.push_back(100 * a.by_length[L].token_accuracy());
      }
    spec.series.push_back(std::move(series));
  }
  return render_svg_plot(spec);
}

std::string learning_curves_svg(const std::string& title, const std::vector<NamedCurve>& curves) {
  PlotSpec accuracy{.title = title + ": held-out token accuracy", .x_label = "step", .y_label = "token accuracy (%)"};
  accuracy.y_range = {0, 100};
  PlotSpec loss{.title = title + ": held-out loss", .x_label = "step", .y_label = "cross-entropy", .log_y = true};
  for (size_t k = 0; k < curves.size(); ++k) {
    const int colour = curves[k].colour >= 0 ? curves[k].colour : int(k);
    PlotSeries a{curves[k].name, false, colour, {}, {}}, l{curves[k].name, false, colour, {}, {}};
    for (const CurvePoint& point : curves[k].points) {
      a.x.push_back(point.step), a.y.push_back(100 * point.held_out_accuracy);
      l.x.push_back(point.step), l.y.push_back(point.held_out_loss);
    }
    accuracy.series.push_back(std::move(a));
    loss.series.push_back(std::move(l));
  }
  return render_svg_plots({accuracy, loss});
}

std::string comparison_curves_svg(const CompareResult& r) {
  std::vector<NamedCurve> curves;
  for (size_t k = 0; k < r.arms.size(); ++k)
    if (r.arms[k].trained && r.arms[k].available && r.arms[k].source.empty()) curves.push_back({r.arms[k].name, int(k), r.arms[k].curve});
  return learning_curves_svg(r.program_name, curves);
}

}  // namespace raspc
