#include "view/html_view.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "runtime/flops.hpp"
#include "runtime/inspect.hpp"
#include "runtime/model_report.hpp"
#include "runtime/safetensors.hpp"
#include "view/heatmap.hpp"
#include "view/program_check.hpp"

namespace raspc {

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin: 16px 0 4px; } .where { color: #666; font-weight: normal; }
code, pre, td, text { font-family: ui-monospace, monospace; }
svg text { font-size: 11px; fill: #333; }
.stage { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.maps { display: flex; flex-wrap: wrap; gap: 24px; }
figure { margin: 0; } figcaption { font-size: 13px; margin-bottom: 4px; }
table.decoded { border-collapse: collapse; font-size: 12px; }
table.decoded td, table.decoded th { border: 1px solid #ddd; padding: 1px 6px; text-align: center; }
table.decoded th { background: #f4f4f4; font-weight: normal; }
td.mismatch { background: #e33; color: #fff; font-weight: bold; }
td.unchecked { color: #888; } td.pending { background: #fafafa; }
table.summary td { padding: 1px 12px 1px 0; vertical-align: top; }
.sop-node rect { fill: #eef4fb; stroke: #2166ac; } .sop-node.numerical rect { fill: #fdf1e6; stroke: #c66a00; }
.sop-node.output rect { stroke-width: 3; } .sop-node { cursor: pointer; }
.sop-node.selected rect { fill: #ffe98a; }
#source-panel { white-space: pre; background: #f6f6f6; padding: 6px 10px; min-height: 1.4em; }
)";

// Clicking an s-op of the graph shows its source line below the graph.
constexpr const char* kScript = R"(
document.querySelectorAll('.sop-node').forEach(function (node) {
  node.addEventListener('click', function () {
    document.querySelectorAll('.sop-node.selected').forEach(function (n) { n.classList.remove('selected'); });
    node.classList.add('selected');
    document.getElementById('source-panel').textContent =
        node.getAttribute('data-shown') + '  ' + node.getAttribute('data-at') + '\n' + node.getAttribute('data-line');
  });
});
)";

// At most `columns` code points of text, "…" marking a cut.
std::string cut_to(const std::string& text, size_t columns) {
  std::vector<size_t> starts;  // where each code point begins
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  if (starts.size() <= columns) return text;
  return text.substr(0, starts[columns - 1]) + "…";
}

// At most `columns` code points of text for a line, broken after a space where one lies in its
// second half, and the rest.
std::pair<std::string, std::string> split_at(const std::string& text, size_t columns) {
  size_t at = 0;
  for (size_t count = 0; at < text.size() && count < columns; ++count) {
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  }
  if (at == text.size()) return {text, ""};
  const size_t space = text.rfind(' ', at);
  if (space != std::string::npos && space >= at / 2) at = space + 1;
  return {text.substr(0, at), text.substr(at)};
}

std::string position_label(const ResidualTrace& trace, int t) {
  if (t < trace.first) return "BOS";
  return std::to_string(t - trace.first) + " " + trace.tokens[size_t(t)];
}

std::string summary_html(const Model& model, const std::string& title) {
  const ModelConfig& c = model.config;
  std::ostringstream out;
  char flops[64];
  std::snprintf(flops, sizeof flops, "%.0f", flops_per_token(c, c.n_positions));
  out << "<table class=\"summary\">";
  auto row = [&](const std::string& key, const std::string& value) {
    out << "<tr><td>" << html_escape(key) << "</td><td>" << html_escape(value) << "</td></tr>";
  };
  row("model", title);
  row("config", describe_config(config_to_json(c)));
  row("parameters", std::to_string(parameter_count(c)));
  row("FLOPs per token", std::string(flops) + " (at " + std::to_string(c.n_positions) + " positions)");
  if (model.metadata.contains("compile"))
    for (const auto& [heading, text] : verification_lines(model.metadata["compile"])) row(heading, text);
  const nlohmann::json trainer = model.metadata.is_object() ? model.metadata.value("trainer", nlohmann::json()) : nlohmann::json();
  if (trainer.is_object() && trainer.contains("result") && trainer["result"].is_object())
    for (const auto& [key, value] : trainer["result"].items())
      if (!value.is_array() && !value.is_object()) row("training: " + key, value.dump());
  out << "</table>";
  if (trainer.is_object() && trainer.contains("settings") && trainer["settings"].is_object()) {
    out << "<details><summary>training settings</summary><table class=\"summary\">";
    for (const auto& [key, value] : trainer["settings"].items()) row(key, value.dump());
    out << "</table></details>";
  }
  if (model.metadata.contains("program") && model.metadata["program"].is_string())
    out << "<details><summary>program source</summary><pre>" << html_escape(model.metadata["program"].get<std::string>())
        << "</pre></details>";
  return out.str();
}

// One column a stage, the s-ops it completes stacked in it, an arrow from each s-op it reads.
std::string graph_html(const ModelPlacement& placement, int stages) {
  constexpr int kBoxW = 170, kBoxH = 56, kColumn = 215, kRow = 70, kTop = 30;
  constexpr size_t kLine = 22;  // code points of a name a line of its box holds
  std::vector<int> count(size_t(stages), 0);
  std::vector<std::pair<int, int>> at;  // by s-op: (x, y)
  std::map<std::string, size_t> by_name;
  for (size_t k = 0; k < placement.sops.size(); ++k) {
    const int s = placement.sops[k].stage;
    at.push_back({10 + s * kColumn, kTop + count[size_t(s)]++ * kRow});
    if (!by_name.count(placement.sops[k].name)) by_name[placement.sops[k].name] = k;
  }
  const int height = kTop + std::max(1, *std::max_element(count.begin(), count.end())) * kRow + 10;
  const int width = 20 + stages * kColumn;
  std::ostringstream out;
  out << "<svg class=\"sop-graph\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
      << height << "\" xmlns=\"http://www.w3.org/2000/svg\">"
      << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
         "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#888\"/></marker></defs>";
  for (int s = 0; s < stages; ++s)
    out << "<text x=\"" << 10 + s * kColumn << "\" y=\"16\" style=\"font-weight:bold\">" << stage_description(s) << "</text>";
  for (size_t k = 0; k < placement.sops.size(); ++k)
    for (const std::string& read : placement.sops[k].reads) {
      auto it = by_name.find(read);
      if (it == by_name.end()) continue;
      const auto [x1, y1] = at[it->second];
      const auto [x2, y2] = at[k];
      out << "<path d=\"M" << x1 + kBoxW << "," << y1 + kBoxH / 2 << " C" << x1 + kBoxW + 30 << "," << y1 + kBoxH / 2
          << " " << x2 - 30 << "," << y2 + kBoxH / 2 << " " << x2 << "," << y2 + kBoxH / 2
          << "\" fill=\"none\" stroke=\"#999\" marker-end=\"url(#arrow)\"/>";
    }
  for (size_t k = 0; k < placement.sops.size(); ++k) {
    const SopPlacement& sop = placement.sops[k];
    const auto [x, y] = at[k];
    // The name on two lines (the parts of one call differ only at the end), then what it holds.
    const auto [first, rest] = split_at(sop.shown, kLine);
    std::string detail = std::string(sop.numerical ? "numerical" : "categorical") +
                         (sop.value_count ? ", " + std::to_string(*sop.value_count) + " values" : "");
    out << "<g class=\"sop-node" << (sop.numerical ? " numerical" : "") << (sop.output ? " output" : "")
        << "\" data-name=\"" << html_escape(sop.name) << "\" data-shown=\"" << html_escape(sop.shown)
        << "\" data-at=\"" << html_escape(sop.source.at)
        << "\" data-line=\"" << html_escape(sop.source.line) << "\"><title>" << html_escape(sop.shown) << " ("
        << html_escape(sop.kind) << ", " << html_escape(sop.name) << ") " << html_escape(sop.source.at) << "\n"
        << html_escape(sop.source.line) << "</title><rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << kBoxW
        << "\" height=\"" << kBoxH << "\" rx=\"6\"/><text x=\"" << x + 8 << "\" y=\"" << y + 17
        << "\" style=\"font-weight:bold\">" << html_escape(first) << "</text><text x=\"" << x + 8 << "\" y=\"" << y + 31
        << "\" style=\"font-weight:bold\">" << html_escape(cut_to(rest, kLine)) << "</text><text x=\"" << x + 8
        << "\" y=\"" << y + 47 << "\">" << html_escape(detail) << "</text></g>";
  }
  out << "</svg><div id=\"source-panel\">click an s-op to see its source line</div>";
  return out.str();
}

std::string decoded_table(const ResidualTrace& trace, int stage) {
  std::ostringstream out;
  const int length = int(trace.tokens.size());
  out << "<table class=\"decoded\" data-stage=\"" << stage << "\"><tr><th>s-op</th>";
  for (int t = trace.first; t < length; ++t) out << "<th>" << html_escape(position_label(trace, t)) << "</th>";
  out << "</tr>";
  for (size_t k = 0; k < trace.placement.sops.size(); ++k) {
    const SopPlacement& sop = trace.placement.sops[k];
    out << "<tr data-sop=\"" << html_escape(sop.name) << "\"" << (sop.output ? " data-output=\"true\"" : "")
        << "><th title=\"" << html_escape(sop.name + (sop.source.at.empty() ? "" : " at " + sop.source.at)) << "\">"
        << html_escape(sop.shown) << "</th>";
    for (int t = trace.first; t < length; ++t) {
      const std::string& value = trace.decoded[size_t(stage)][k][size_t(t)];
      const bool known = trace.expected[k].size() == size_t(length - trace.first);
      const std::string expected = known ? trace.expected[k][size_t(t - trace.first)] : "";
      std::string cls = stage < sop.stage ? "pending" : trace.mismatch(k, stage, t) ? "mismatch" : known ? "checked" : "unchecked";
      std::string tip = stage < sop.stage ? "not computed yet (" + stage_description(sop.stage) + ")"
                        : known             ? "interpreter: " + expected
                                            : "not named in the program: not checked";
      out << "<td class=\"" << cls << "\" data-position=\"" << t - trace.first << "\" title=\"" << html_escape(tip)
          << "\">" << html_escape(value) << "</td>";
    }
    out << "</tr>";
  }
  return out.str() + "</table>";
}

std::string residual_section(const Model& model, const ForwardResult& result, const ResidualTrace& trace) {
  const std::vector<std::string> labels = shown_labels(numbered_residual_labels(model), trace.placement);
  std::vector<std::string> positions;
  for (int t = 0; t < int(trace.tokens.size()); ++t) positions.push_back(position_label(trace, t));
  std::ostringstream out;
  for (int s = 0; s < trace.stages; ++s) {
    Heatmap map{"residual-map", "data-stage=\"" + std::to_string(s) + "\"", "position", "dimension", positions, labels,
                [&, s](size_t r, size_t c) { return double(result.residual_at(0, s, int(r))[c]); }, false};
    out << "<h3>after " << stage_description(s) << " <code>" << stage_name(s) << "</code></h3><div class=\"stage\">"
        << render_heatmap(map);
    if (!trace.placement.sops.empty()) out << decoded_table(trace, s);
    out << "</div>";
  }
  return out.str();
}

std::string head_caption(const ModelPlacement& placement, int layer, int head) {
  std::string caption = "layer " + std::to_string(layer) + " head " + std::to_string(head);
  if (placement.heads.empty()) return "<code>" + caption + "</code>";
  if (size_t(layer) >= placement.heads.size() || size_t(head) >= placement.heads[size_t(layer)].size())
    return "<code>" + caption + "</code> <span class=\"where\">unused (padding)</span>";
  const HeadPlacement& h = placement.heads[size_t(layer)][size_t(head)];
  return "<code>" + caption + "</code>: <code>" + html_escape(h.selector.text) + "</code> <span class=\"where\">from " +
         html_escape(h.selector.at) + ", computes " + html_escape(h.shown) + " (" + html_escape(h.kind) + ")</span>";
}

std::string attention_section(const Model& model, const ForwardResult& result, const ResidualTrace& trace) {
  const int T = result.time, H = model.config.n_head;
  std::vector<std::string> positions;
  for (int t = 0; t < int(trace.tokens.size()); ++t) positions.push_back(position_label(trace, t));
  std::ostringstream out;
  for (int l = 0; l < model.config.n_layer; ++l) {
    out << "<h3>layer " << l << "</h3><div class=\"maps\">";
    for (int h = 0; h < H; ++h) {
      Heatmap map{"attention-map", "data-layer=\"" + std::to_string(l) + "\" data-head=\"" + std::to_string(h) + "\"",
                  "query", "key", positions, positions,
                  [&, l, h](size_t q, size_t k) {
                    return double(result.attention[((size_t(l) * H + h) * T + q) * T + k]);
                  },
                  true};
      out << "<figure><figcaption>" << head_caption(trace.placement, l, h) << "</figcaption>" << render_heatmap(map)
          << "</figure>";
    }
    out << "</div>";
  }
  return out.str();
}

std::string weight_map(const LabelledMatrix& full, const std::string& caption, const ModelPlacement& placement) {
  LabelledMatrix m = without_zero_lines(full);
  m.rows = shown_labels(std::move(m.rows), placement);
  m.columns = shown_labels(std::move(m.columns), placement);
  std::string html = "<figure><figcaption>" + caption + " <span class=\"where\">(" + std::to_string(m.rows.size()) +
                     " of " + std::to_string(full.rows.size()) + " rows, " + std::to_string(m.columns.size()) + " of " +
                     std::to_string(full.columns.size()) + " columns are not all zero)</span></figcaption>";
  if (m.rows.empty()) return html + "<p class=\"where\">all zero</p></figure>";
  Heatmap map{"weight-map", "data-title=\"" + html_escape(full.title) + "\"", "row", "column", m.rows, m.columns,
              [&m](size_t r, size_t c) { return m.at(r, c); }, false};
  return html + render_heatmap(map) + "</figure>";
}

std::string weights_section(const Model& model, const ResidualTrace& trace) {
  std::ostringstream out;
  for (int l = 0; l < model.config.n_layer; ++l) {
    out << "<h3>layer " << l << "</h3><div class=\"maps\">";
    for (int h = 0; h < model.config.n_head; ++h) {
      const std::string head = head_caption(trace.placement, l, h);
      out << weight_map(head_qk_matrix(model, l, h), head + " W_QK (query rows, key columns)", trace.placement)
          << weight_map(head_ov_matrix(model, l, h), head + " W_OV (read rows, written columns)", trace.placement);
    }
    if (model.config.n_inner > 0)
      out << weight_map(mlp_in_matrix(model, l), "<code>layer " + std::to_string(l) + " MLP</code> W_in", trace.placement)
          << weight_map(mlp_out_matrix(model, l), "<code>layer " + std::to_string(l) + " MLP</code> W_out", trace.placement);
    out << "</div>";
  }
  return out.str();
}

}  // namespace

std::string render_view_html(const Model& model, const ForwardResult& result, const ResidualTrace& trace,
                             const std::string& title) {
  std::string input;
  for (int t = trace.first; t < int(trace.tokens.size()); ++t) input += trace.tokens[size_t(t)];
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>raspc view: " << html_escape(title)
      << "</title><style>" << kStyle << "</style></head><body>";
  out << "<h1>" << html_escape(title) << " <span class=\"where\">on input <code>" << html_escape(input)
      << "</code></span></h1>";
  if (!trace.placement.sops.empty() && trace.any_mismatch())
    out << "<p class=\"mismatch-note\" style=\"color:#c00\">Some decoded values differ from the interpreter (red).</p>";
  out << "<h2>Model</h2>" << summary_html(model, title);
  if (!trace.placement.sops.empty())
    out << "<h2>The program's s-ops, placed</h2>" << graph_html(trace.placement, trace.stages);
  out << "<h2>Residual stream</h2><p class=\"where\">Rows are positions, columns residual dimensions; blue positive, "
         "red negative, on a log scale where the values span decades (an anchor of 400 beside one-hots of 0.1).";
  if (!trace.placement.sops.empty())
    out << " Beside each map: the value of every s-op decoded from it, checked against the interpreter (red where "
           "they differ; grey where the program does not name the s-op).";
  else
    out << " The model records no s-ops (a trained model): its dimensions are numbered.";
  out << "</p>" << residual_section(model, result, trace);
  out << "<h2>Attention patterns</h2><p class=\"where\">Rows are queries, columns keys (BOS included); darker is "
         "more weight.</p>"
      << attention_section(model, result, trace);
  out << "<h2>Weights</h2><p class=\"where\">Only rows and columns that are not all zero; hover for exact values.</p>"
      << weights_section(model, trace);
  out << "<script>" << kScript << "</script></body></html>\n";
  return out.str();
}

std::string view_page(const Model& model, Backend& backend, const std::vector<int>& sequence, const std::string& title,
                      bool* differs) {
  ForwardOptions forward;
  forward.capture_residual = forward.capture_attention = true;
  const ForwardResult result = backend.forward({sequence}, forward);
  ResidualTrace trace = decode_residual(model, result, 0, sequence);
  check_against_program(model, trace);
  if (differs != nullptr) *differs = trace.any_mismatch();
  return render_view_html(model, result, trace, title);
}

}  // namespace raspc
