#include <catch2/catch.hpp>

#include <regex>

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
  CHECK(svg.find(">10k<") != std::string::npos);  // decade ticks on the log y axis, 10^4 written 10k
  CHECK(svg.find(">100k<") != std::string::npos);
  // The log x axis has its ticks at the data's lengths, not at decades.
  CHECK(svg.find(">5</text>") != std::string::npos);
  CHECK(svg.find(">8</text>") != std::string::npos);
  CHECK(svg.find(">16</text>") != std::string::npos);
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

namespace {

double attribute(const std::string& element, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(element, m, std::regex(" " + name + "=\"([-0-9.e]+)\""))) return NAN;
  return std::stod(m[1]);
}

// Every <text> must lie inside the canvas. Its extent is estimated from its length at a generous
// 7.2 pixels a character (9 for the 15px title) and its anchor; rotated labels are measured along
// the vertical.
void check_text_inside(const std::string& svg) {
  const double width = attribute(svg.substr(0, svg.find('>')), "width");
  const double height = attribute(svg.substr(0, svg.find('>')), "height");
  const std::regex text("<text([^>]*)>([^<]*)</text>");
  int checked = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const std::string attributes = (*it)[1], content = (*it)[2];
    const bool big = attributes.find("font-size=\"15\"") != std::string::npos;
    const double extent = double(content.size()) * (big ? 9.0 : 7.2);
    INFO(content);
    std::smatch rotated;
    if (std::regex_search(attributes, rotated, std::regex("translate\\(([-0-9.e]+),([-0-9.e]+)\\) rotate"))) {
      const double y = std::stod(rotated[2]);
      CHECK(y - extent / 2 >= 0);
      CHECK(y + extent / 2 <= height);
      ++checked;
      continue;
    }
    const double x = attribute(attributes, "x"), y = attribute(attributes, "y");
    double left = x, right = x + extent;
    if (attributes.find("text-anchor=\"middle\"") != std::string::npos) left = x - extent / 2, right = x + extent / 2;
    if (attributes.find("text-anchor=\"end\"") != std::string::npos) left = x - extent, right = x;
    CHECK(left >= 0);
    CHECK(right <= width);
    CHECK(y - 12 >= 0);
    CHECK(y <= height);
    ++checked;
  }
  CHECK(checked > 0);
}

// A series is hidden when a series drawn after it has the same points and a solid line; a dashed
// one on top leaves it showing through the gaps.
void check_every_series_visible(const std::string& svg) {
  const std::regex line("<polyline class=\"series\" data-series=\"([0-9]+)\"([^>]*) points=\"([^\"]*)\"");
  std::vector<std::tuple<int, bool, std::string>> drawn;  // in drawing order
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it)
    drawn.emplace_back(std::stoi((*it)[1]), std::string((*it)[2]).find("stroke-dasharray") != std::string::npos, (*it)[3]);
  REQUIRE(!drawn.empty());
  for (size_t i = 0; i < drawn.size(); ++i)
    for (size_t j = i + 1; j < drawn.size(); ++j) {
      INFO("series " << std::get<0>(drawn[i]) << " under series " << std::get<0>(drawn[j]));
      CHECK((std::get<2>(drawn[i]) != std::get<2>(drawn[j]) || std::get<1>(drawn[j])));
    }
}

}  // namespace

TEST_CASE("a plot keeps its legend and labels inside the canvas, however long the names") {
  PlotSpec spec{.title = "most_freq: held-out token accuracy by input length", .x_label = "input length (shaded: training lengths)",
                .y_label = "token accuracy (%)",
                .series = {{"compiled", false, 0, {1, 2, 3}, {100, 100, 100}, true},
                           {"trained, compiled shape (3 layers, 2 heads)", false, 1, {1, 2, 3}, {100, 100, 100}},
                           {"trained, comfortable", false, 2, {1, 2, 3}, {90, 80, 100}}}};
  spec.y_range = {0, 100};
  const std::string svg = render_svg_plot(spec);
  check_text_inside(svg);
  check_every_series_visible(svg);
  // The compiled line is drawn last (on top of the trained line it coincides with), with squares.
  CHECK(svg.rfind("data-series=\"0\"") > svg.rfind("data-series=\"1\""));
  CHECK(count_of(svg, "fill=\"white\" stroke=\"#1f77b4\"") == 3);  // its hollow square markers
}

TEST_CASE("log axes label 10^7 as 10M, and side-by-side plots stay inside their canvas") {
  PlotSpec flops{.title = "FLOPs per token", .x_label = "maximum length", .y_label = "operations", .log_x = true, .log_y = true,
                 .series = {{"hist network", false, 0, {5, 8, 16, 32, 64}, {4e3, 1e4, 5e4, 3e5, 2.2e7}},
                            {"hist native", true, 0, {5, 8, 16, 32, 64}, {9, 9, 9, 9, 9}}}};
  const std::string one = render_svg_plot(flops);
  CHECK(one.find(">10M<") != std::string::npos);
  CHECK(one.find(">100M<") != std::string::npos);
  CHECK(one.find(">64</text>") != std::string::npos);
  CHECK(one.find("e+0") == std::string::npos);
  check_text_inside(one);
  check_every_series_visible(one);
  const std::string two = render_svg_plots({flops, flops});
  CHECK(count_of(two, "<svg") == 3);
  check_text_inside(two);
}
