// A labelled heatmap as inline SVG: one rect a cell, coloured blue (positive) to white (zero) to
// red (negative) against the largest magnitude, on a log scale of six decades where the values
// span decades (the largest over 50 times the smallest tenth), else linearly (probabilities: 0 to
// 1), its exact value in the cell's tooltip. The scale is written in the map's corner. Labels
// longer than a margin holds are cut, whole in their tooltip.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace raspc {

std::string html_escape(const std::string& text);
std::string exact_number(double v);  // %.9g, "0" for both zeros
// At most `columns` code points of text, "…" marking a cut.
std::string cut_to(const std::string& text, size_t columns);

struct Heatmap {
  std::string css_class;   // "residual-map", "attention-map", "weight-map"
  std::string attributes;  // extra attributes of the <svg> (data-stage="2"), already escaped
  std::string row_title, column_title;  // what the axes are ("position", "residual dimension")
  std::vector<std::string> rows, columns;
  std::function<double(size_t row, size_t column)> value;
  // Values from 0 to 1 (attention weights): white to blue on a linear scale, not scaled to the largest.
  bool probabilities = false;
  // The bookkeeping rows and columns (`one`, `anchor`, position numbers: what no s-op's value is),
  // empty where there are none. Hidden: the map is drawn twice, without them (shown) and with them
  // (svg.with-bookkeeping, shown instead while the page's toggle is on), each scaled to itself.
  // Else their labels are grey (a weight map: what a head or MLP reads of them is its mechanism).
  std::vector<bool> bookkeeping_rows, bookkeeping_columns;
  bool hide_bookkeeping = true;
  bool numbers = false;  // each cell's value written in it (small attention maps)
};

std::string render_heatmap(const Heatmap& map);

// What the colours mean: one legend for every map of a page.
std::string colour_legend();

}  // namespace raspc
