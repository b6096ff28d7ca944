#include <catch2/catch.hpp>

#include "support/svg_plot.hpp"

using namespace raspc;

static int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("an SVG plot has one polyline and one marker per point for each series") {
  PlotSpec spec{.title = "FLOPs per token", .x_label = "max length", .y_label = "FLOPs", .log_x = true, .log_y = true,
                .series = {{"compiled", false, 0, {5, 8, 16}, {1e3, 4e3, 2e4}},
                           {"native <x>", true, 0, {5, 8, 16}, {3, 3, 3}}}};
  std::string svg = render_svg_plot(spec);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(count_of(svg, "<polyline") == 2);
  CHECK(count_of(svg, "<circle") == 6);
  CHECK(svg.find("native &lt;x&gt;") != std::string::npos);  // names are escaped
  CHECK(svg.find(">10000<") != std::string::npos);  // decade ticks on the log axis
  CHECK(svg.find(">1e+05<") != std::string::npos);  // large ticks in exponent form
  CHECK(svg.find("max length (log)") != std::string::npos);
  CHECK(count_of(svg, "stroke-dasharray") == 2);  // the dashed series: its line and its legend
  CHECK(count_of(svg, "stroke=\"#1f77b4\"") == 4);  // both series share palette colour 0
}

TEST_CASE("points a log axis cannot show are skipped, not drawn at infinity") {
  PlotSpec spec{.title = "t", .x_label = "x", .y_label = "y", .log_y = true,
                .series = {{"s", false, -1, {1, 2, 3}, {0, 10, 100}}}};
  std::string svg = render_svg_plot(spec);
  CHECK(count_of(svg, "<circle") == 2);
  CHECK(svg.find("inf") == std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
}

TEST_CASE("fixed axis ranges and a shaded band") {
  PlotSpec spec{.title = "accuracy", .x_label = "length", .y_label = "%",
                .series = {{"arm", false, 2, {1, 2, 3, 4}, {100, 100, 75, 50}}}};
  spec.x_range = {1, 4};
  spec.y_range = {0, 100};
  spec.x_band = {0.5, 2.5};  // clipped on the left to the plot's edge at x = 1
  std::string svg = render_svg_plot(spec);
  // The plot spans x 80..470 (640 wide, margins 80 and 170): x = 1 at 80, 2.5 at 275.
  CHECK(svg.find("<rect x=\"80\" y=\"40\" width=\"195\" height=\"300\" fill=\"#eeeeee\"/>") != std::string::npos);
  CHECK(svg.find(">100<") != std::string::npos);  // the fixed top of the y axis is a tick
  CHECK(svg.find("stroke=\"#2ca02c\"") != std::string::npos);  // palette colour 2
}
