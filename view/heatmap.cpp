#include "view/heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace raspc {

namespace {

constexpr int kCell = 16;       // pixels a cell
constexpr int kCharWidth = 7;   // of the 11px labels, roughly: sizes the label margins
constexpr size_t kLabel = 30;   // code points of a label the margins hold; cut beyond, whole on hover

// Intensity on a log scale over six decades below the largest magnitude: a compiled model's
// residual holds an anchor of 400 beside one-hot entries of 0.1, and both must show.
double intensity(double v, double scale, bool linear) {
  if (!(scale > 0)) return 0.0;
  if (linear) return std::min(1.0, std::fabs(v) / scale);
  const double floor = scale * 1e-6;
  return std::min(1.0, std::log1p(std::fabs(v) / floor) / std::log1p(scale / floor));
}

std::string colour(double v, double scale, bool linear) {
  const double a = intensity(v, scale, linear);
  // White to #2166ac (positive) or #b2182b (negative).
  const int target[2][3] = {{0x21, 0x66, 0xac}, {0xb2, 0x18, 0x2b}};
  const int* t = target[v < 0 ? 1 : 0];
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", int(255 + (t[0] - 255) * a), int(255 + (t[1] - 255) * a),
                int(255 + (t[2] - 255) * a));
  return text;
}

// Where each UTF-8 code point of `text` begins.
std::vector<size_t> code_point_starts(const std::string& text) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  return starts;
}

size_t code_points(const std::string& text) { return code_point_starts(text).size(); }

size_t longest(const std::vector<std::string>& labels) {
  size_t n = 0;
  for (const std::string& s : labels) n = std::max(n, std::min(kLabel, code_points(s)));
  return n;
}

// At most kLabel code points of a label: its start and its end, the middle elided ("sort(tokens,
// t…step 1 of 3:True"), since labels that differ (the parts of one call, its values) differ at the end.
std::string shorten(const std::string& label) {
  const std::vector<size_t> starts = code_point_starts(label);
  if (starts.size() <= kLabel) return label;
  const size_t head = kLabel / 2 - 3, tail = kLabel - head - 1;
  return label.substr(0, starts[head]) + "…" + label.substr(starts[starts.size() - tail]);
}

// A label's text: shortened to kLabel, whole in its tooltip when shortened.
std::string label_text(const std::string& label) {
  const std::string shown = shorten(label);
  return html_escape(shown) + (shown == label ? "" : "<title>" + html_escape(label) + "</title>");
}

bool flagged(const std::vector<bool>& flags, size_t i) { return !flags.empty() && flags[i]; }

// "1", ".5", ".33": an attention weight in its cell; nothing below .005.
std::string cell_number(double v) {
  if (v < 0.005) return "";
  if (v > 0.995) return "1";
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", v);
  std::string t = text + 1;  // "0.33" -> ".33"
  while (t.back() == '0') t.pop_back();
  return t;
}

// One SVG of the map's `rows` and `columns` (indices into the map's), scaled to those alone.
std::string render_lines(const Heatmap& map, const std::vector<size_t>& rows, const std::vector<size_t>& columns,
                         const std::string& extra_class) {
  std::vector<std::string> row_labels, column_labels;
  for (size_t r : rows) row_labels.push_back(map.rows[r]);
  for (size_t c : columns) column_labels.push_back(map.columns[c]);
  const int cell = map.numbers ? 2 * kCell - 4 : kCell;  // room for ".33" in 9px digits
  const int left = int(longest(row_labels)) * kCharWidth + 10;
  const int top = int(longest(column_labels)) * kCharWidth + 10;
  const int width = std::max(left + int(columns.size()) * cell + 4, left + 130);  // 130: the scale's line
  const int height = top + int(rows.size()) * cell + 16;  // 16: the scale's line below the cells
  double scale = 0;
  std::vector<double> magnitudes;
  for (size_t r : rows)
    for (size_t c : columns) {
      const double v = std::fabs(map.value(r, c));
      scale = std::max(scale, v);
      if (v > 0) magnitudes.push_back(v);
    }
  if (map.probabilities) scale = 1;
  // A log scale only where the values span decades (a compiled model's anchor beside its one-hots);
  // a trained model's entries are of one size, and a log scale would saturate them all.
  bool linear = map.probabilities || magnitudes.empty();
  if (!linear) {
    const auto tenth = magnitudes.begin() + magnitudes.size() / 10;
    std::nth_element(magnitudes.begin(), tenth, magnitudes.end());
    linear = scale < 50 * *tenth;
  }
  std::string svg = "<svg class=\"" + map.css_class + extra_class + "\" " + map.attributes + " data-scale=\"" +
                    (linear ? "linear" : "log") + "\" width=\"" + std::to_string(width) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\">";
  // The scale below the cells (colour_legend says what it means).
  char largest[32];
  std::snprintf(largest, sizeof largest, "%.3g", scale);
  svg += "<text class=\"scale\" x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(height - 3) + "\">" +
         (linear ? "linear" : "log") + (map.probabilities ? std::string(", 0 to 1") : std::string(", full at ±") + largest) +
         "</text>";
  for (size_t i = 0; i < rows.size(); ++i)
    svg += std::string("<text class=\"row-label") + (flagged(map.bookkeeping_rows, rows[i]) ? " bookkeeping" : "") +
           "\" x=\"" + std::to_string(left - 4) + "\" y=\"" +
           std::to_string(top + int(i) * cell + cell / 2 + 4) + "\" text-anchor=\"end\">" + label_text(row_labels[i]) +
           "</text>";
  for (size_t j = 0; j < columns.size(); ++j) {
    const int x = left + int(j) * cell + cell / 2 + 4, y = top - 4;
    svg += std::string("<text class=\"column-label") + (flagged(map.bookkeeping_columns, columns[j]) ? " bookkeeping" : "") +
           "\" transform=\"translate(" + std::to_string(x) + "," + std::to_string(y) +
           ") rotate(-90)\">" + label_text(column_labels[j]) + "</text>";
  }
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < columns.size(); ++j) {
      const double v = map.value(rows[i], columns[j]);
      const int x = left + int(j) * cell, y = top + int(i) * cell;
      svg += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(cell - 1) +
             "\" height=\"" + std::to_string(cell - 1) + "\" fill=\"" + colour(v, scale, linear) + "\"><title>" +
             html_escape(map.row_title + " " + row_labels[i] + ", " + map.column_title + " " + column_labels[j]) + ": " +
             exact_number(v) + "</title></rect>";
      if (const std::string number = map.numbers ? cell_number(v) : ""; !number.empty())
        svg += "<text class=\"cell-number\" x=\"" + std::to_string(x + cell / 2) + "\" y=\"" +
               std::to_string(y + cell / 2 + 3) + "\" text-anchor=\"middle\"" +
               (intensity(v, scale, linear) > 0.6 ? " style=\"fill:#fff\"" : "") + ">" + number + "</text>";
    }
  return svg + "</svg>";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string exact_number(double v) {
  if (v == 0) return "0";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string cut_to(const std::string& text, size_t columns) {
  const std::vector<size_t> starts = code_point_starts(text);
  if (starts.size() <= columns) return text;
  return text.substr(0, starts[columns - 1]) + "…";
}

std::string render_heatmap(const Heatmap& map) {
  std::vector<size_t> all_rows(map.rows.size()), all_columns(map.columns.size()), rows, columns;
  for (size_t r = 0; r < map.rows.size(); ++r) all_rows[r] = r;
  for (size_t c = 0; c < map.columns.size(); ++c) all_columns[c] = c;
  for (size_t r : all_rows)
    if (!map.hide_bookkeeping || !flagged(map.bookkeeping_rows, r)) rows.push_back(r);
  for (size_t c : all_columns)
    if (!map.hide_bookkeeping || !flagged(map.bookkeeping_columns, c)) columns.push_back(c);
  if (rows.size() == all_rows.size() && columns.size() == all_columns.size()) return render_lines(map, rows, columns, "");
  return render_lines(map, rows, columns, " without-bookkeeping") +
         render_lines(map, all_rows, all_columns, " with-bookkeeping");
}

std::string colour_legend() {
  std::string svg = "<svg class=\"legend\" width=\"720\" height=\"34\" xmlns=\"http://www.w3.org/2000/svg\">";
  for (int i = 0; i <= 40; ++i)
    svg += "<rect x=\"" + std::to_string(10 + i * 5) + "\" y=\"2\" width=\"5\" height=\"14\" fill=\"" +
           colour((i - 20) / 20.0, 1.0, true) + "\"/>";
  return svg +
         "<text x=\"10\" y=\"30\">negative</text><text x=\"108\" y=\"30\">0</text><text x=\"170\" y=\"30\">positive"
         "</text><text x=\"230\" y=\"13\">full colour at the largest |value| of the map, written below it "
         "(±400)</text><text x=\"230\" y=\"29\">log: six decades below it shown; linear: in proportion</text></svg>";
}

}  // namespace raspc
