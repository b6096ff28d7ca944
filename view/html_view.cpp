#include "view/html_view.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "runtime/flops.hpp"
#include "runtime/inspect.hpp"
#include "runtime/model_output.hpp"
#include "runtime/model_report.hpp"
#include "runtime/safetensors.hpp"
#include "view/heatmap.hpp"
#include "circuit/circuit.hpp"
#include "circuit/program_check.hpp"

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
table.decoded, table.outputs, table.probes { border-collapse: collapse; font-size: 12px; }
:is(table.decoded, table.outputs, table.probes) :is(td, th) { border: 1px solid #ddd; padding: 1px 6px; text-align: center; }
:is(table.decoded, table.outputs, table.probes) th { background: #f4f4f4; font-weight: normal; }
table.probes td.best { font-weight: bold; }
td.mismatch { background: #e33; color: #fff; font-weight: bold; }
td.unchecked { color: #888; } td.pending { background: #fafafa; }
table.summary td { padding: 1px 12px 1px 0; vertical-align: top; }
.sop-node rect { fill: #eef4fb; stroke: #2166ac; } .sop-node.numerical rect { fill: #fdf1e6; stroke: #c66a00; }
.sop-node.output rect { stroke-width: 3; } .sop-node { cursor: pointer; }
.sop-node.selected rect { fill: #ffe98a; }
#source-panel { white-space: pre; background: #f6f6f6; padding: 6px 10px; min-height: 1.4em; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid #eee; }
.map { overflow-x: auto; max-width: calc(100vw - 60px); }
text.scale { font-size: 9px; fill: #888; } text.bookkeeping { fill: #999; font-style: italic; } text.cell-number { font-size: 9px; }
svg.with-bookkeeping { display: none; }
body.bookkeeping svg.with-bookkeeping { display: inline; } body.bookkeeping svg.without-bookkeeping { display: none; }
nav.contents { background: #f6f6f6; padding: 6px 12px; } nav.contents a { margin-right: 14px; }
.construction { color: #555; font-size: 12px; max-width: 560px; }
details.padding-heads summary { color: #666; cursor: pointer; }
table.outputs td.match { background: #e8f4e8; } table.outputs td.differ { background: #e33; color: #fff; }
)";

// Clicking an s-op of the graph shows its source line below the graph; the toggle shows the
// bookkeeping dimensions (each map drawn with them instead of without).
constexpr const char* kScript = R"(
var toggle = document.getElementById('show-bookkeeping');
if (toggle) toggle.addEventListener('change', function () { document.body.classList.toggle('bookkeeping', toggle.checked); });
document.querySelectorAll('.sop-node').forEach(function (node) {
  node.addEventListener('click', function () {
    document.querySelectorAll('.sop-node.selected').forEach(function (n) { n.classList.remove('selected'); });
    node.classList.add('selected');
    document.getElementById('source-panel').textContent =
        node.getAttribute('data-shown') + '  ' + node.getAttribute('data-at') + '\n' + node.getAttribute('data-line');
  });
});
)";

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


// The graph's arrows, from the circuit (circuit/circuit.hpp, what `raspc circuit` prints): an
// arrow from s-op a to s-op b where the node computing b reads a's dimensions, by the weights. The
// node that writes each s-op, as TransformerLens names it, by s-op.
struct GraphEdges {
  std::set<std::pair<size_t, size_t>> arrows;
  std::vector<std::string> writer;
};

GraphEdges graph_edges(const Model& model, const ModelPlacement& placement) {
  GraphEdges g;
  g.writer.assign(placement.sops.size(), "");
  const Circuit circuit = model_circuit(model);
  auto overlaps = [](const std::vector<int>& a, const std::vector<int>& b) {
    return std::any_of(a.begin(), a.end(), [&](int d) { return std::find(b.begin(), b.end(), d) != b.end(); });
  };
  // The s-ops a node completes: those of its stage whose dimensions it writes.
  auto completes = [&](const CircuitNode& node, size_t k) {
    const SopPlacement& sop = placement.sops[k];
    const int stage = node.kind == "head" ? 2 * node.layer + 1 : node.kind == "mlp" ? 2 * node.layer + 2 : 0;
    return node.kind != "unembed" && sop.stage == stage && overlaps(sop.dims, node.dims);
  };
  for (const CircuitNode& node : circuit.nodes)
    for (size_t k = 0; k < placement.sops.size(); ++k)
      if (completes(node, k) && g.writer[k].empty())
        g.writer[k] = node.head >= 0 ? node.hook + "[" + std::to_string(node.head) + "]" : node.hook;
  for (const CircuitEdge& e : circuit.edges) {
    const CircuitNode& reader = *circuit.node(e.to);
    for (size_t from = 0; from < placement.sops.size(); ++from) {
      if (!overlaps(placement.sops[from].dims, e.dims)) continue;
      for (size_t to = 0; to < placement.sops.size(); ++to)
        if (to != from && completes(reader, to)) g.arrows.insert({from, to});
    }
  }
  return g;
}

// One column a stage, the s-ops it completes stacked in it, an arrow from each s-op its node reads.
std::string graph_html(const Model& model, const ModelPlacement& placement, int stages) {
  constexpr int kBoxW = 170, kBoxH = 56, kColumn = 215, kRow = 70, kTop = 30;
  constexpr size_t kLine = 22;  // code points of a name a line of its box holds
  std::vector<int> count(size_t(stages), 0);
  std::vector<std::pair<int, int>> at;  // by s-op: (x, y)
  for (size_t k = 0; k < placement.sops.size(); ++k) {
    const int s = placement.sops[k].stage;
    at.push_back({10 + s * kColumn, kTop + count[size_t(s)]++ * kRow});
  }
  const GraphEdges edges = graph_edges(model, placement);
  const int height = kTop + std::max(1, *std::max_element(count.begin(), count.end())) * kRow + 10;
  const int width = 20 + stages * kColumn;
  std::ostringstream out;
  out << "<svg class=\"sop-graph\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
      << height << "\" xmlns=\"http://www.w3.org/2000/svg\">"
      << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
         "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#888\"/></marker></defs>";
  for (int s = 0; s < stages; ++s)
    out << "<text x=\"" << 10 + s * kColumn << "\" y=\"16\" style=\"font-weight:bold\">" << stage_description(s) << "</text>";
  for (const auto& [from, to] : edges.arrows) {
    const auto [x1, y1] = at[from];
    const auto [x2, y2] = at[to];
    out << "<path class=\"sop-edge\" d=\"M" << x1 + kBoxW << "," << y1 + kBoxH / 2 << " C" << x1 + kBoxW + 30 << ","
        << y1 + kBoxH / 2 << " " << x2 - 30 << "," << y2 + kBoxH / 2 << " " << x2 << "," << y2 + kBoxH / 2
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
        << html_escape(sop.kind) << ", " << html_escape(sop.name) << ") " << html_escape(sop.source.at)
        << (edges.writer[k].empty() ? "" : ", written by " + html_escape(edges.writer[k])) << "\n"
        << html_escape(sop.source.line) << "</title><rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << kBoxW
        << "\" height=\"" << kBoxH << "\" rx=\"6\"/><text x=\"" << x + 8 << "\" y=\"" << y + 17
        << "\" style=\"font-weight:bold\">" << html_escape(first) << "</text><text x=\"" << x + 8 << "\" y=\"" << y + 31
        << "\" style=\"font-weight:bold\">" << html_escape(cut_to(rest, kLine)) << "</text><text x=\"" << x + 8
        << "\" y=\"" << y + 47 << "\">" << html_escape(detail) << "</text></g>";
  }
  out << "</svg>";
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

// What every section reads: the model, its forward and decoding, and which residual dimensions
// are bookkeeping (no s-op's value: `one`, `anchor`, position numbers, unused), hidden by default.
struct Page {
  const Model& model;
  const ForwardResult& result;
  const ResidualTrace& trace;
  std::vector<std::string> labels;        // the residual's, shown names in place of made-up ones
  std::vector<bool> bookkeeping;          // by dimension; empty without placement (a trained model)
  std::set<std::string> bookkeeping_labels;  // their labels, as weight maps' rows and columns show them
  std::vector<std::string> positions;     // "BOS", "0 a", "1 b", ...

  Page(const Model& m, const ForwardResult& r, const ResidualTrace& t)
      : model(m),
        result(r),
        trace(t),
        labels(shown_labels(numbered_residual_labels(m), t.placement)),
        bookkeeping(bookkeeping_dimensions(t.placement, m.config.n_embd)) {
    for (int p = 0; p < int(t.tokens.size()); ++p) positions.push_back(position_label(t, p));
    if (bookkeeping.empty()) return;  // a trained model: no dimension is bookkeeping
    std::set<std::string> values;
    for (size_t d = 0; d < labels.size(); ++d) (bookkeeping[d] ? bookkeeping_labels : values).insert(labels[d]);
    for (const std::string& label : values) bookkeeping_labels.erase(label);  // an s-op named `one` stays
  }
  bool any_bookkeeping() const { return std::find(bookkeeping.begin(), bookkeeping.end(), true) != bookkeeping.end(); }
  std::vector<bool> bookkeeping_of(const std::vector<std::string>& shown) const {
    std::vector<bool> flags;
    for (const std::string& label : shown) flags.push_back(bookkeeping_labels.count(label) > 0);
    return flags;
  }
  // A head GPT-2's shape adds (every block has n_head heads) that computes nothing.
  bool padding(int layer, int head) const {
    const auto& heads = trace.placement.heads;
    return !heads.empty() && (size_t(layer) >= heads.size() || size_t(head) >= heads[size_t(layer)].size());
  }
};

std::string residual_section(const Page& page) {
  std::ostringstream out;
  for (int s = 0; s < page.trace.stages; ++s) {
    Heatmap map{"residual-map", "data-stage=\"" + std::to_string(s) + "\"", "position", "dimension", page.positions,
                page.labels, [&, s](size_t r, size_t c) { return double(page.result.residual_at(0, s, int(r))[c]); },
                false, {}, page.bookkeeping};
    const std::string name = stage_name(s, (page.trace.stages - 1) / 2);
    std::string anchor = name;  // an id has no spaces: "hook_embed+hook_pos_embed" in a model of no blocks
    std::erase(anchor, ' ');
    out << "<h3 id=\"" << anchor << "\">after " << stage_description(s) << " <code>" << name
        << "</code></h3><div class=\"stage\"><div class=\"map\">" << render_heatmap(map) << "</div>";
    if (!page.trace.placement.sops.empty()) out << decoded_table(page.trace, s);
    out << "</div>";
  }
  return out.str();
}

std::string head_name(int layer, int head) {
  return "blocks." + std::to_string(layer) + ".attn head " + std::to_string(head);
}

std::string head_caption(const Page& page, int layer, int head) {
  const std::string name = "<code>" + head_name(layer, head) + "</code>";
  if (page.trace.placement.heads.empty() || page.padding(layer, head)) return name;
  const HeadPlacement& h = page.trace.placement.heads[size_t(layer)][size_t(head)];
  const std::string how = construction_sentence(h.construction);
  return name + ": <code>" + html_escape(h.selector.text) + "</code> <span class=\"where\">from " +
         html_escape(h.selector.at) + ", computes " + html_escape(h.shown) + " (" + html_escape(h.kind) + ")</span>" +
         (how.empty() ? "" : "<div class=\"construction\">" + html_escape(how) + "</div>");
}

// A block's heads: those that compute something, then the padding ones folded away.
template <typename Draw>
std::string heads_of_block(const Page& page, int layer, Draw draw) {
  std::string shown, folded;
  std::vector<int> padding;
  for (int h = 0; h < page.model.config.n_head; ++h) {
    const bool pad = page.padding(layer, h);
    (pad ? folded : shown) += draw(h);
    if (pad) padding.push_back(h);
  }
  if (padding.empty()) return shown;
  const std::string which = padding.size() == 1 ? "head " + std::to_string(padding[0])
                                                : "heads " + std::to_string(padding.front()) + " to " +
                                                      std::to_string(padding.back());
  return shown + "<details class=\"padding-heads\"><summary>" + which +
         ": padding, computing nothing (GPT-2 gives every block the same number of heads)</summary><div class=\"maps\">" +
         folded + "</div></details>";
}

std::string attention_section(const Page& page) {
  const int T = page.result.time, H = page.model.config.n_head;
  std::ostringstream out;
  for (int l = 0; l < page.model.config.n_layer; ++l) {
    out << "<h3 id=\"blocks." << l << ".attn\">blocks." << l << ".attn <code>blocks." << l
        << ".attn.hook_pattern</code></h3><div class=\"maps\">";
    out << heads_of_block(page, l, [&](int h) {
      Heatmap map{"attention-map", "data-layer=\"" + std::to_string(l) + "\" data-head=\"" + std::to_string(h) + "\"",
                  "query", "key", page.positions, page.positions,
                  [&, l, h](size_t q, size_t k) {
                    return double(page.result.attention[((size_t(l) * H + h) * T + q) * T + k]);
                  },
                  true, {}, {}};
      map.numbers = T <= 12;  // 1/3 and 1/2 look alike in colour; the numbers fit up to 12 positions
      return "<figure><figcaption>" + head_caption(page, l, h) + "</figcaption>" + render_heatmap(map) + "</figure>";
    });
    out << "</div>";
  }
  return out.str();
}

std::string weight_map(const Page& page, const LabelledMatrix& full, const std::string& caption) {
  const LabelledMatrix m = with_shown_labels(without_zero_lines(full), page.trace.placement);
  std::string html = "<figure><figcaption>" + caption + " <span class=\"where\">(" + std::to_string(m.rows.size()) +
                     " of " + std::to_string(full.rows.size()) + " rows, " + std::to_string(m.columns.size()) + " of " +
                     std::to_string(full.columns.size()) + " columns are not all zero)</span></figcaption>";
  if (m.rows.empty()) return html + "<p class=\"where\">all zero</p></figure>";
  Heatmap map{"weight-map", "data-title=\"" + html_escape(full.title) + "\"", "row", "column", m.rows, m.columns,
              [&m](size_t r, size_t c) { return m.at(r, c); }, false, page.bookkeeping_of(m.rows),
              page.bookkeeping_of(m.columns), false};
  return html + "<div class=\"map\">" + render_heatmap(map) + "</div></figure>";
}

std::string weights_section(const Page& page) {
  std::ostringstream out;
  for (int l = 0; l < page.model.config.n_layer; ++l) {
    out << "<h3 id=\"weights-blocks." << l << "\">blocks." << l << "</h3><div class=\"maps\">";
    out << heads_of_block(page, l, [&](int h) {
      const std::string head = "<code>" + head_name(l, h) + "</code>";
      return weight_map(page, head_qk_matrix(page.model, l, h), head + " W_QK (query rows, key columns)") +
             weight_map(page, head_ov_matrix(page.model, l, h), head + " W_OV (read rows, written columns)");
    });
    if (page.model.config.n_inner > 0)
      out << weight_map(page, mlp_in_matrix(page.model, l), "<code>blocks." + std::to_string(l) + ".mlp</code> W_in")
          << weight_map(page, mlp_out_matrix(page.model, l), "<code>blocks." + std::to_string(l) + ".mlp</code> W_out");
    out << "</div>";
  }
  return out.str();
}

// The model's output at every position beside the interpreter's (where the model keeps its
// program): what a trained model's page is for.
std::string outputs_section(const Page& page, const PositionOutputs& produced, const std::vector<std::string>& expected) {
  const ResidualTrace& trace = page.trace;
  std::ostringstream out;
  out << "<table class=\"outputs\"><tr><th></th>";
  for (int t = trace.first; t < int(trace.tokens.size()); ++t) out << "<th>" << html_escape(page.positions[size_t(t)]) << "</th>";
  out << "</tr><tr data-row=\"model\"><th>the model</th>";
  for (size_t i = 0; i < produced.values.size(); ++i) {
    const bool known = i < expected.size();
    const bool match = known && output_matches(page.model, produced.values[i], expected[i]);
    out << "<td class=\"" << (!known ? "unchecked" : match ? "match" : "differ") << "\" title=\"logit margin "
        << exact_number(produced.margins[i]) << "\">" << html_escape(produced.values[i]) << "</td>";
  }
  out << "</tr>";
  if (!expected.empty()) {
    out << "<tr data-row=\"interpreter\"><th>the interpreter</th>";
    for (const std::string& value : expected) out << "<td>" << html_escape(value) << "</td>";
    out << "</tr>";
  }
  return out.str() + "</table>";
}

}  // namespace

std::string construction_sentence(const std::string& construction) {
  static const std::map<std::string, std::string> notes = {
      {"copy", "Copies the selected key's value (each query selects by its selector's table of values); where "
               "nothing is selected it attends to BOS, which holds the default. docs/compiler.md, \"Attention\"."},
      {"mean", "Averages the selected keys' numbers with equal weights; where nothing is selected it attends to BOS, "
               "which holds the default. docs/compiler.md, \"Attention\"."},
      {"selector_width", "Counts the selected keys: BOS scores as a match, so its weight is 1/(w+1), which the "
                         "block's MLP reads as w. docs/compiler.md, \"selector_width\"."},
      {"width_step", "Compares a count of selected keys with the query's index: BOS's weight says whether the index "
                     "is below the count. docs/compiler.md, \"The pipeline\" (width_steps)."},
      {"counting_sort_step", "One step of a counting sort: BOS's weight says whether the query's position is below "
                             "the number of keys at most a value, so a query attending only to BOS is an answer, "
                             "not a copy. docs/long-contexts.md, \"Counting sorts\"."},
      {"width_part", "One part of a width split over disjoint selectors; the parts' BOS weights are read together "
                     "along one line. docs/long-contexts.md, \"A stable sort's blocks\"."},
      {"numerical_selector", "Scores -(q-k)^2 between numbers built from positions: the nearest key wins. "
                             "docs/long-contexts.md, \"Numerical selectors\"."},
      {"prefix_mean", "One of a prefix mean's two heads over the position's digits: the keys before the query's "
                      "high digit, or those of its high digit up to its own; BOS weighs as the other head's keys, "
                      "so the two heads' outputs add up to the mean. docs/long-contexts.md, \"Prefix means\"."},
      {"length", "Copies the last position's index number (length - 1) to every position. docs/long-contexts.md, "
                 "\"Numerical selectors\"."}};
  const auto it = notes.find(construction);
  return it == notes.end() ? "" : it->second;
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

std::string render_view_html(const Model& model, const ForwardResult& result, const ResidualTrace& trace,
                             const std::string& title, const ViewExtras& extras) {
  const Page page(model, result, trace);
  std::string input;
  for (int t = trace.first; t < int(trace.tokens.size()); ++t) input += trace.tokens[size_t(t)];
  const bool placed = !trace.placement.sops.empty();
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>raspc view: " << html_escape(title)
      << "</title><style>" << kStyle << "</style></head><body>";
  out << "<h1>" << html_escape(title) << " <span class=\"where\">on input <code>" << html_escape(input)
      << "</code></span></h1>";
  if (placed && trace.any_mismatch())
    out << "<p class=\"mismatch-note\" style=\"color:#c00\">Some decoded values differ from the interpreter (red).</p>";
  out << "<nav class=\"contents\"><a href=\"#model\">Model</a><a href=\"#outputs\">Outputs</a>"
      << (placed ? "<a href=\"#graph\">S-ops</a>" : "") << (extras.probes.empty() ? "" : "<a href=\"#probes\">Probes</a>")
      << "<a href=\"#residual\">Residual stream</a><a href=\"#attention\">Attention</a><a href=\"#weights\">Weights</a>";
  if (page.any_bookkeeping())
    out << "<label><input type=\"checkbox\" id=\"show-bookkeeping\"> show the bookkeeping dimensions in the residual "
           "maps (one, bos, pad, zero, anchor, position numbers: no s-op's value; grey in the weights)</label>";
  out << "</nav>";
  out << "<h2 id=\"model\">Model</h2>" << summary_html(model, title);
  out << "<h2 id=\"outputs\">Outputs</h2>" << outputs_section(page, extras.outputs, extras.expected_outputs);
  if (extras.expected_outputs.empty())
    out << "<p class=\"where\">The model keeps no program, so its outputs are not checked.</p>";
  if (placed)
    out << "<h2 id=\"graph\">The program's s-ops, placed</h2><div class=\"scroll\">"
        << graph_html(model, trace.placement, trace.stages) << "</div><div id=\"source-panel\">click an s-op to see its source "
        << "line</div>";
  if (!extras.probes.empty())
    out << "<h2 id=\"probes\">What the residual stream holds: linear probes</h2>" << probes_html(extras.probes);
  out << "<h2 id=\"residual\">Residual stream</h2><p class=\"where\">Rows are positions, columns residual dimensions.";
  if (placed)
    out << " Beside each map: the value of every s-op decoded from it, checked against the interpreter (red where "
           "they differ; grey where the program does not name the s-op). The bookkeeping dimensions are hidden "
           "unless the toggle above shows them.";
  else
    out << " The model records no s-ops (a trained model): its dimensions are numbered.";
  out << "</p>" << colour_legend() << residual_section(page);
  out << "<h2 id=\"attention\">Attention patterns</h2><p class=\"where\">";
  if (page.model.config.n_layer == 0)  // an embedded map's model: the embeddings compute the output
    out << "None: this model has no blocks (its embeddings compute the output), so no position reads another.</p>";
  else
    out << "Rows are queries, columns keys (BOS included); darker is more weight.</p>" << attention_section(page);
  out << "<h2 id=\"weights\">Weights</h2><p class=\"where\">Only rows and columns that are not all zero; hover for "
         "exact values.</p>"
      << weights_section(page);
  out << "<script>" << kScript << "</script></body></html>\n";
  return out.str();
}

std::string view_page(const Model& model, Backend& backend, const std::vector<int>& sequence, const std::string& title,
                      bool* differs) {
  ForwardOptions forward = output_forward_options(model);
  forward.capture_residual = forward.capture_attention = true;
  const ForwardResult result = backend.forward({sequence}, forward);
  ResidualTrace trace = decode_residual(model, result, 0, sequence);
  ViewExtras extras;
  extras.outputs = read_outputs_locating(backend, model, result, 0, sequence);
  extras.expected_outputs = check_against_program(model, trace);
  if (trace.placement.sops.empty()) extras.probes = probe_sops(model, backend);
  if (differs != nullptr) *differs = trace.any_mismatch();
  return render_view_html(model, result, trace, title, extras);
}

}  // namespace raspc
