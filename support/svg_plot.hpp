// Line plots as standalone SVG text, for the benchmark and comparison reports (no plotting
// library: the figures must regenerate from one command on a bare machine).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace raspc {

struct PlotSeries {
  std::string name;
  bool dashed = false;
  int colour = -1;  // index into the palette; -1: the series' own position
  std::vector<double> x, y;  // same length; points with non-finite or (on log axes) non-positive
                             // coordinates are skipped
};

struct PlotSpec {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<PlotSeries> series = {};
  // Fixed axis ranges (otherwise fitted to the data, widened to whole decades on log axes).
  std::optional<std::pair<double, double>> x_range = std::nullopt, y_range = std::nullopt;
  // An x interval shaded grey behind the series (clipped to the plot), e.g. the training lengths.
  std::optional<std::pair<double, double>> x_band = std::nullopt;
};

// A 640x400 SVG: axes with ticks (decades on log axes), one coloured polyline with point markers
// per series, and a legend.
std::string render_svg_plot(const PlotSpec& spec);

}  // namespace raspc
