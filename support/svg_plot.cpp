#include "support/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

namespace raspc {
namespace {

constexpr double kPlotWidth = 390, kPlotHeight = 300;
constexpr double kLeft = 80, kTop = 40, kBottom = 60;  // margins; the legend is right of the plot
constexpr double kLegendGap = 12, kLegendSwatch = 20, kCharWidth = 7.2;  // 12px sans-serif, generously
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// 0.5, 20, 1k, 2.5k, 10M: what a reader of an axis wants.
std::string number(double v) {
  char buf[32];
  const double a = std::fabs(v);
  const struct { double scale; const char* suffix; } units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& u : units)
    if (a >= u.scale) {
      std::snprintf(buf, sizeof buf, "%g%s", v / u.scale, u.suffix);
      return buf;
    }
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// One axis: maps data values to [0,1] (linearly or by log10) and lists tick values.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<double> data_ticks;  // log axes: the data's own values, when few

  bool usable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double unit(double v) const {
    double a = log ? std::log10(v) : v, l = log ? std::log10(lo) : lo, h = log ? std::log10(hi) : hi;
    return h > l ? (a - l) / (h - l) : 0.5;
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      if (!data_ticks.empty()) return data_ticks;
      for (double d = std::floor(std::log10(lo)); d <= std::ceil(std::log10(hi)); d += 1) {
        double v = std::pow(10.0, d);
        if (v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
      }
      if (t.size() < 2) t = {lo, hi};
      return t;
    }
    double span = hi - lo, step = std::pow(10.0, std::floor(std::log10(span / 5)));
    if (span / step > 10) step *= 2;
    if (span / step > 10) step *= 2.5;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
    return t;
  }
};

Axis fit_axis(bool log, const std::vector<PlotSeries>& series, bool use_x,
              const std::optional<std::pair<double, double>>& range) {
  Axis a;
  a.log = log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::set<double> values;
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      double v = use_x ? s.x[i] : s.y[i];
      if (!a.usable(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      values.insert(v);
    }
  if (range && range->second > range->first && (!log || range->first > 0)) {
    a.lo = range->first;
    a.hi = range->second;
    return a;
  }
  if (!std::isfinite(lo)) lo = log ? 1 : 0, hi = log ? 10 : 1;
  if (log && use_x && values.size() >= 2 && values.size() <= 12) {
    // Ticks at the data, and the axis a little wider than it so the end points are not on the frame.
    a.data_ticks.assign(values.begin(), values.end());
    a.lo = lo / 1.15;
    a.hi = hi * 1.15;
    return a;
  }
  if (log) {
    lo = std::pow(10.0, std::floor(std::log10(lo)));
    hi = std::pow(10.0, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
  } else {
    if (hi <= lo) hi = lo + 1;
  }
  a.lo = lo;
  a.hi = hi;
  return a;
}

struct Size {
  double width, height;
};

Size plot_size(const PlotSpec& spec) {
  size_t longest = 0;
  for (const PlotSeries& s : spec.series) longest = std::max(longest, s.name.size());
  const double legend = kLegendGap + kLegendSwatch + 6 + double(longest) * kCharWidth + 12;
  const double width = std::max(kLeft + kPlotWidth + legend, double(spec.title.size()) * 9.0 + 20);
  const double legend_bottom = kTop + 10 + 18 * double(spec.series.size());
  return {width, std::max(kTop + kPlotHeight + kBottom, legend_bottom + 10)};
}

// The plot's elements, without the enclosing <svg>.
std::string plot_body(const PlotSpec& spec, Size size) {
  Axis ax = fit_axis(spec.log_x, spec.series, true, spec.x_range);
  Axis ay = fit_axis(spec.log_y, spec.series, false, spec.y_range);
  const double pw = kPlotWidth, ph = kPlotHeight;
  auto px = [&](double v) { return kLeft + ax.unit(v) * pw; };
  auto py = [&](double v) { return kTop + (1 - ay.unit(v)) * ph; };

  std::ostringstream svg;
  svg << "<rect width=\"" << size.width << "\" height=\"" << size.height << "\" fill=\"white\"/>\n"
      << "<text x=\"" << size.width / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << escape(spec.title)
      << "</text>\n";
  if (spec.x_band && ax.usable(spec.x_band->first) && ax.usable(spec.x_band->second)) {
    double x0 = std::clamp(px(spec.x_band->first), kLeft, kLeft + pw);
    double x1 = std::clamp(px(spec.x_band->second), kLeft, kLeft + pw);
    if (x1 > x0)
      svg << "<rect x=\"" << x0 << "\" y=\"" << kTop << "\" width=\"" << x1 - x0 << "\" height=\"" << ph
          << "\" fill=\"#eeeeee\"/>\n";
  }
  for (double t : ax.ticks()) {
    svg << "<line x1=\"" << px(t) << "\" y1=\"" << kTop << "\" x2=\"" << px(t) << "\" y2=\"" << kTop + ph
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << px(t) << "\" y=\"" << kTop + ph + 16 << "\" text-anchor=\"middle\">"
        << number(t) << "</text>\n";
  }
  for (double t : ay.ticks()) {
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << py(t) << "\" x2=\"" << kLeft + pw << "\" y2=\"" << py(t)
        << "\" stroke=\"#ddd\"/>\n<text x=\"" << kLeft - 6 << "\" y=\"" << py(t) + 4 << "\" text-anchor=\"end\">"
        << number(t) << "</text>\n";
  }
  svg << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"black\"/>\n"
      << "<text x=\"" << kLeft + pw / 2 << "\" y=\"" << kTop + ph + kBottom - 18 << "\" text-anchor=\"middle\">"
      << escape(spec.x_label) << (spec.log_x ? " (log)" : "") << "</text>\n"
      << "<text transform=\"translate(18," << kTop + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << escape(spec.y_label) << (spec.log_y ? " (log)" : "") << "</text>\n";
  auto colour_of = [&](size_t k) {
    const PlotSeries& s = spec.series[k];
    return kColours[size_t(s.colour >= 0 ? s.colour : int(k)) % (sizeof kColours / sizeof *kColours)];
  };
  auto dash_of = [](const PlotSeries& s) {
    return s.emphasised ? "\" stroke-dasharray=\"8,5" : s.dashed ? "\" stroke-dasharray=\"6,4" : "";
  };
  // Emphasised series last, so they are on top.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < spec.series.size(); ++k) {
      const PlotSeries& s = spec.series[k];
      if (s.emphasised != (pass == 1)) continue;
      const char* colour = colour_of(k);
      std::ostringstream points, markers;
      for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!ax.usable(s.x[i]) || !ay.usable(s.y[i])) continue;
        points << px(s.x[i]) << "," << py(s.y[i]) << " ";
        if (s.emphasised)
          markers << "<rect x=\"" << px(s.x[i]) - 4.5 << "\" y=\"" << py(s.y[i]) - 4.5
                  << "\" width=\"9\" height=\"9\" fill=\"white\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
        else
          markers << "<circle cx=\"" << px(s.x[i]) << "\" cy=\"" << py(s.y[i]) << "\" r=\"3\" fill=\"" << colour
                  << "\"/>\n";
      }
      svg << "<polyline class=\"series\" data-series=\"" << k << "\" fill=\"none\" stroke=\"" << colour << dash_of(s)
          << "\" stroke-width=\"" << (s.emphasised ? 3 : 2) << "\" points=\"" << points.str() << "\"/>\n"
          << markers.str();
    }
  const double legend_x = kLeft + pw + kLegendGap;
  for (size_t k = 0; k < spec.series.size(); ++k) {
    const PlotSeries& s = spec.series[k];
    double ly = kTop + 10 + 18 * double(k);
    svg << "<line x1=\"" << legend_x << "\" y1=\"" << ly << "\" x2=\"" << legend_x + kLegendSwatch << "\" y2=\"" << ly
        << "\" stroke=\"" << colour_of(k) << dash_of(s) << "\" stroke-width=\"" << (s.emphasised ? 3 : 2)
        << "\"/>\n<text x=\"" << legend_x + kLegendSwatch + 6 << "\" y=\"" << ly + 4 << "\">" << escape(s.name)
        << "</text>\n";
  }
  return svg.str();
}

std::string svg_open(Size size) {
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << size.width << "\" height=\"" << size.height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  return svg.str();
}

}  // namespace

std::string render_svg_plot(const PlotSpec& spec) {
  const Size size = plot_size(spec);
  return svg_open(size) + plot_body(spec, size) + "</svg>\n";
}

std::string render_svg_plots(const std::vector<PlotSpec>& specs) {
  Size total{0, 0};
  for (const PlotSpec& spec : specs) {
    const Size size = plot_size(spec);
    total.width += size.width;
    total.height = std::max(total.height, size.height);
  }
  std::string svg = svg_open(total);
  double x = 0;
  for (const PlotSpec& spec : specs) {
    const Size size = plot_size(spec);
    std::ostringstream at;
    at << "<svg x=\"" << x << "\" y=\"0\" width=\"" << size.width << "\" height=\"" << total.height << "\">\n";
    svg += at.str() + plot_body(spec, {size.width, total.height}) + "</svg>\n";
    x += size.width;
  }
  return svg + "</svg>\n";
}

}  // namespace raspc
