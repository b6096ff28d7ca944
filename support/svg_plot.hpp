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
  // Drawn after every other series, thicker, dashed, with hollow square markers: a line that
  // others may coincide with (the compiled arm, exact where trained arms are too) stays visible.
  bool emphasised = false;
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

// An SVG about 640x400: axes with ticks, one coloured polyline with point markers per series, and
// a legend inside the canvas (the canvas widens to fit the longest name). A log x axis has its
// ticks at the data's own values when there are at most 12 of them (the lengths a benchmark ran), else
// at decades; tick labels write 10000 as 10k and 10^7 as 10M.
std::string render_svg_plot(const PlotSpec& spec);

// Several plots side by side in one SVG (a learning curve's accuracy and loss).
std::string render_svg_plots(const std::vector<PlotSpec>& specs);

}  // namespace raspc
