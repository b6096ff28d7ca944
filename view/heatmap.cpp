#include "view/heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace raspc {

namespace {

constexpr int kCell = 16;       // pixels a cell
constexpr int kCharWidth = 7;   // of the 11px labels, roughly: sizes the label margins

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

size_t longest(const std::vector<std::string>& labels) {
  size_t n = 0;
  for (const std::string& s : labels) n = std::max(n, s.size());
  return n;
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

std::string render_heatmap(const Heatmap& map) {
  const int left = int(longest(map.rows)) * kCharWidth + 10;
  const int top = int(longest(map.columns)) * kCharWidth + 10;
  const int width = left + int(map.columns.size()) * kCell + 4;
  const int height = top + int(map.rows.size()) * kCell + 4;
  double scale = 0;
  for (size_t r = 0; r < map.rows.size(); ++r)
    for (size_t c = 0; c < map.columns.size(); ++c) scale = std::max(scale, std::fabs(map.value(r, c)));
  if (map.probabilities) scale = 1;
  // A log scale only where the values span decades (a compiled model's anchor beside its one-hots);
  // a trained model's entries are of one size, and a log scale would saturate them all.
  std::vector<double> magnitudes;
  for (size_t r = 0; r < map.rows.size(); ++r)
    for (size_t c = 0; c < map.columns.size(); ++c)
      if (double v = std::fabs(map.value(r, c)); v > 0) magnitudes.push_back(v);
  bool linear = map.probabilities || magnitudes.empty();
  if (!linear) {
    const auto tenth = magnitudes.begin() + magnitudes.size() / 10;
    std::nth_element(magnitudes.begin(), tenth, magnitudes.end());
    linear = scale < 50 * *tenth;
  }
  std::string svg = "<svg class=\"" + map.css_class + "\" " + map.attributes + " width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " +
                    std::to_string(height) + "\" xmlns=\"http://www.w3.org/2000/svg\">";
  for (size_t r = 0; r < map.rows.size(); ++r)
    svg += "<text class=\"row-label\" x=\"" + std::to_string(left - 4) + "\" y=\"" +
           std::to_string(top + int(r) * kCell + 12) + "\" text-anchor=\"end\">" + html_escape(map.rows[r]) + "</text>";
  for (size_t c = 0; c < map.columns.size(); ++c) {
    const int x = left + int(c) * kCell + 12, y = top - 4;
    svg += "<text class=\"column-label\" transform=\"translate(" + std::to_string(x) + "," + std::to_string(y) +
           ") rotate(-90)\">" + html_escape(map.columns[c]) + "</text>";
  }
  for (size_t r = 0; r < map.rows.size(); ++r)
    for (size_t c = 0; c < map.columns.size(); ++c) {
      const double v = map.value(r, c);
      svg += "<rect x=\"" + std::to_string(left + int(c) * kCell) + "\" y=\"" + std::to_string(top + int(r) * kCell) +
             "\" width=\"" + std::to_string(kCell - 1) + "\" height=\"" + std::to_string(kCell - 1) + "\" fill=\"" +
             colour(v, scale, linear) + "\"><title>" + html_escape(map.row_title + " " + map.rows[r] + ", " +
                                                           map.column_title + " " + map.columns[c]) +
             ": " + exact_number(v) + "</title></rect>";
    }
  return svg + "</svg>";
}

}  // namespace raspc
