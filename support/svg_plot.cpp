#include "support/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace raspc {
namespace {

constexpr double kWidth = 640, kHeight = 400;
constexpr double kLeft = 80, kRight = 170, kTop = 40, kBottom = 60;  // margins; legend on the right
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

std::string number(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) std::snprintf(buf, sizeof buf, "%.0e", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// One axis: maps data values to [0,1] (linearly or by log10) and lists tick values.
struct Axis {
  bool log = false;
  double lo = 0, hi = 1;

  bool usable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double unit(double v) const {
    double a = log ? std::log10(v) : v, l = log ? std::log10(lo) : lo, h = log ? std::log10(hi) : hi;
    return h > l ? (a - l) / (h - l) : 0.5;
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
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
  if (range && range->second > range->first && (!log || range->first > 0)) {
    a.lo = range->first;
    a.hi = range->second;
    return a;
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      double v = use_x ? s.x[i] : s.y[i];
      if (!a.usable(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) lo = log ? 1 : 0, hi = log ? 10 : 1;
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

}  // namespace

std::string render_svg_plot(const PlotSpec& spec) {
  Axis ax = fit_axis(spec.log_x, spec.series, true, spec.x_range);
  Axis ay = fit_axis(spec.log_y, spec.series, false, spec.y_range);
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double v) { return kLeft + ax.unit(v) * pw; };
  auto py = [&](double v) { return kTop + (1 - ay.unit(v)) * ph; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kWidth / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << escape(spec.title) << "</text>\n";
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
      << "<text x=\"" << kLeft + pw / 2 << "\" y=\"" << kHeight - 18 << "\" text-anchor=\"middle\">"
      << escape(spec.x_label) << (spec.log_x ? " (log)" : "") << "</text>\n"
      << "<text transform=\"translate(18," << kTop + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << escape(spec.y_label) << (spec.log_y ? " (log)" : "") << "</text>\n";
  for (size_t k = 0; k < spec.series.size(); ++k) {
    const PlotSeries& s = spec.series[k];
    const char* colour = kColours[size_t(s.colour >= 0 ? s.colour : int(k)) % (sizeof kColours / sizeof *kColours)];
    std::ostringstream points, markers;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!ax.usable(s.x[i]) || !ay.usable(s.y[i])) continue;
      points << px(s.x[i]) << "," << py(s.y[i]) << " ";
      markers << "<circle cx=\"" << px(s.x[i]) << "\" cy=\"" << py(s.y[i]) << "\" r=\"3\" fill=\"" << colour << "\"/>\n";
    }
    const char* dash = s.dashed ? "\" stroke-dasharray=\"6,4" : "";
    svg << "<polyline fill=\"none\" stroke=\"" << colour << dash << "\" stroke-width=\"2\" points=\"" << points.str() << "\"/>\n"
        << markers.str();
    double ly = kTop + 10 + 18 * double(k);
    svg << "<line x1=\"" << kWidth - kRight + 12 << "\" y1=\"" << ly << "\" x2=\"" << kWidth - kRight + 32 << "\" y2=\"" << ly
        << "\" stroke=\"" << colour << dash << "\" stroke-width=\"2\"/>\n<text x=\"" << kWidth - kRight + 38 << "\" y=\"" << ly + 4
        << "\">" << escape(s.name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace raspc
