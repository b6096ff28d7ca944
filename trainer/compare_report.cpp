// The reports of a comparison: plain table, Markdown, JSON, SVG.
#include <cmath>
#include <cstdio>
#include <sstream>

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

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
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
                    a.trained ? std::to_string(a.steps_run) : "-"});
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
      << (s["causal"].get<bool>() ? "causal" : "bidirectional") << "; " << s["steps"] << " steps of batch "
      << s["batch"] << ", lr " << s["lr"].get<double>() << ", seed " << s["seed"] << ", held-out "
      << s["held_out_per_length"] << " per length";
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
    j["config"] = {{"n_layer", a.config.n_layer}, {"n_head", a.config.n_head}, {"n_embd", a.config.n_embd},
                   {"n_inner", a.config.n_inner}, {"n_positions", a.config.n_positions},
                   {"vocab_size", a.config.vocab_size}};
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
    if (a.trained) {
      auto or_null = [](int steps, double value) { return steps < 0 ? nlohmann::json() : nlohmann::json(value); };
      j["steps_run"] = a.steps_run;
      j["seconds"] = a.seconds;
      j["steps_to_99"] = or_null(a.steps_to_99, a.steps_to_99);
      j["steps_to_100"] = or_null(a.steps_to_100, a.steps_to_100);
      j["seconds_to_99"] = or_null(a.steps_to_99, a.seconds_to_99);
      j["seconds_to_100"] = or_null(a.steps_to_100, a.seconds_to_100);
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
  const double width = 640, height = 400, left = 60, right = 200, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const int n = r.max_len;
  auto x_of = [&](double length) { return left + (n > 1 ? (length - 1) / (n - 1) : 0.5) * plot_w; };
  auto y_of = [&](double accuracy) { return top + (1 - accuracy) * plot_h; };
  const char* colours[] = {"#222222", "#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\">" << xml_escaped(r.program_name)
    << ": held-out token accuracy by input length</text>\n";
  // The training lengths, shaded.
  const double x0 = x_of(r.train_min - (n > 1 ? 0.5 : 0)), x1 = x_of(r.train_max + (n > 1 ? 0.5 : 0));
  s << "<rect x=\"" << std::max(left, x0) << "\" y=\"" << top << "\" width=\"" << std::min(left + plot_w, x1) - std::max(left, x0)
    << "\" height=\"" << plot_h << "\" fill=\"#eeeeee\"/>\n";
  for (int i = 0; i <= 4; ++i) {
    const double a = i / 4.0;
    s << "<line x1=\"" << left << "\" y1=\"" << y_of(a) << "\" x2=\"" << left + plot_w << "\" y2=\"" << y_of(a)
      << "\" stroke=\"#cccccc\"/>\n";
    s << "<text x=\"" << left - 8 << "\" y=\"" << y_of(a) + 4 << "\" text-anchor=\"end\">" << int(a * 100) << "%</text>\n";
  }
  for (int L = 1; L <= n; ++L)
    s << "<text x=\"" << x_of(L) << "\" y=\"" << top + plot_h + 18 << "\" text-anchor=\"middle\">" << L << "</text>\n";
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 10 << "\" text-anchor=\"middle\">input length (shaded: training lengths)</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  int index = 0;
  for (const ArmResult& a : r.arms) {
    const char* colour = colours[index % 5];
    const double legend_y = top + 16 + 20 * index;
    ++index;
    if (!a.available) continue;
    std::ostringstream points;
    points.setf(std::ios::fixed);
    points.precision(1);
    for (size_t L = 0; L < a.by_length.size(); ++L)
      if (a.by_length[L].positions > 0) points << x_of(double(L + 1)) << "," << y_of(a.by_length[L].token_accuracy()) << " ";
    s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"" << points.str() << "\"/>\n";
    for (size_t L = 0; L < a.by_length.size(); ++L)
      if (a.by_length[L].positions > 0)
        s << "<circle cx=\"" << x_of(double(L + 1)) << "\" cy=\"" << y_of(a.by_length[L].token_accuracy())
          << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
    s << "<line x1=\"" << left + plot_w + 12 << "\" y1=\"" << legend_y << "\" x2=\"" << left + plot_w + 32 << "\" y2=\""
      << legend_y << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
    s << "<text x=\"" << left + plot_w + 38 << "\" y=\"" << legend_y + 4 << "\">" << xml_escaped(a.name) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace raspc
