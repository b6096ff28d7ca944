// A labelled heatmap as inline SVG: one rect a cell, coloured blue (positive) to white (zero) to
// red (negative) against the largest magnitude, on a log scale of six decades where the values
// span decades (the largest over 50 times the smallest tenth), else linearly (probabilities: 0 to
// 1), its exact value in the cell's tooltip.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace raspc {

std::string html_escape(const std::string& text);
std::string exact_number(double v);  // %.9g, "0" for both zeros

struct Heatmap {
  std::string css_class;   // "residual-map", "attention-map", "weight-map"
  std::string attributes;  // extra attributes of the <svg> (data-stage="2"), already escaped
  std::string row_title, column_title;  // what the axes are ("position", "residual dimension")
  std::vector<std::string> rows, columns;
  std::function<double(size_t row, size_t column)> value;
  // Values from 0 to 1 (attention weights): white to blue on a linear scale, not scaled to the largest.
  bool probabilities = false;
};

std::string render_heatmap(const Heatmap& map);

}  // namespace raspc
