// The charts must be well-formed XML that a browser opens: checked with
// Python's XML parser (python3 is required by lit anyway).
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>
#include <vector>

using namespace schedc::report;

namespace {
// Parses the file with xml.etree and checks the root is an <svg> element.
int python_parse_svg(const std::string& path) {
  std::string cmd =
      "python3 -c \"import sys, xml.etree.ElementTree as ET; r = ET.parse(sys.argv[1]).getroot(); "
      "sys.exit(0 if r.tag == '{http://www.w3.org/2000/svg}svg' else 1)\" " +
      path;
  return std::system(cmd.c_str());
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST(SvgChart, BarChartIsValidSvgWithBarsAndReference) {
  BarChart c;
  c.title = "ablate <sgemm_best.sched> & friends";
  c.y_label = "TFLOP/s";
  c.labels = {"naive", "tile 128x128x8", "thread 8x8", "broken step"};
  c.values = {1.5, 10.25, 40.0, NAN};
  c.reference_name = "cuBLAS";
  c.reference_value = 51.0;
  std::string svg = to_svg(c);
  EXPECT_NE(svg.find("&lt;sgemm_best.sched&gt; &amp; friends"), std::string::npos);
  EXPECT_NE(svg.find(">failed<"), std::string::npos);          // the NaN step is marked, not drawn
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);  // cuBLAS line
  size_t bars = 0;
  for (size_t p = svg.find("<rect x="); p != std::string::npos; p = svg.find("<rect x=", p + 1))
    ++bars;
  EXPECT_EQ(bars, 3u);
  EXPECT_EQ(python_parse_svg(write_temp("bar.svg", svg)), 0);
}

TEST(SvgChart, LineChartIsValidSvgWithOnePolylinePerSeries) {
  LineChart c;
  c.title = "bench";
  c.x_label = "M=N=K";
  c.y_label = "TFLOP/s";
  c.x_labels = {"1024", "2048", "4096"};
  c.series = {{"v0_naive", {1, 2, 3}}, {"cuBLAS", {30, 45, NAN}}};
  std::string svg = to_svg(c);
  size_t lines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1))
    ++lines;
  EXPECT_EQ(lines, 2u);
  EXPECT_EQ(python_parse_svg(write_temp("line.svg", svg)), 0);
}

TEST(SvgChart, EscapesControlBytes) {
  EXPECT_EQ(xml_escape("a\x01<b"), "a&lt;b");
}

TEST(SvgChart, LineStylesAreDistinctAndNeverBlack) {
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (size_t i = 0; i < 150; ++i) {
    SeriesStyle s = line_style(i);
    EXPECT_TRUE(seen.insert({s.color, s.dash, s.marker}).second) << i;
    EXPECT_NE(s.color, "#000000");
    if (i > 0) {
      EXPECT_NE(s.color, line_style(i - 1).color) << i;
    }
    // The series ten apart share a colour: their dash and marker differ.
    if (i >= 10) {
      EXPECT_NE(s.dash, line_style(i - 10).dash) << i;
      EXPECT_NE(s.marker, line_style(i - 10).marker) << i;
    }
  }
}

namespace {
// The <text> elements of an SVG: position (x, y; a rotated label's
// translate) and content.
struct Text {
  double x, y;
  bool rotated;
  std::string content;
};
std::vector<Text> texts(const std::string& svg) {
  std::vector<Text> out;
  std::regex level(R"re(<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>)re");
  std::regex turned(
      R"re(<text transform="translate\(([-0-9.]+),([-0-9.]+)\) rotate\(30\)"[^>]*>([^<]*)</text>)re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), level), end; it != end; ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), false, (*it)[3]});
  for (std::sregex_iterator it(svg.begin(), svg.end(), turned), end; it != end; ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), true, (*it)[3]});
  return out;
}

// The bench chart of issue 22: ten ladder schedules, six tensor-core ones.
LineChart many_series_chart(const std::vector<std::string>& shapes) {
  LineChart c;
  c.title = "schedc bench: each schedule against cuBLAS in its own mode";
  c.x_label = "problem size (M x N x K)";
  c.y_label = "% of cuBLAS (median time)";
  c.reference_name = "cuBLAS = 100%";
  c.reference_value = 100;
  c.x_labels = shapes;
  const char* ladder[] = {"v0_naive",         "v1_smem_tiles",   "v2_thread_4x1", "v3_thread_8x8",
                          "v4_vectorize",     "v5_transpose_a",  "v6_split",      "v7_warp",
                          "v8_double_buffer", "v9_swizzle_block"};
  const char* tc[] = {"wmma_f16",        "wmma_bf16", "mma_f16_stages",
                      "mma_bf16_stages", "mma_tf32",  "tma_f16"};
  int i = 0;
  for (const char* n : ladder) {
    LineSeries s{std::string(n) + ".sched vs f32 pedantic", {}};
    for (size_t x = 0; x < shapes.size(); ++x) s.values.push_back(5 + 9.5 * i + 2.0 * double(x));
    c.series.push_back(s);
    ++i;
  }
  for (const char* n : tc) {
    LineSeries s{std::string(n) + ".sched vs f16 in, f32 accumulate", {}};
    for (size_t x = 0; x < shapes.size(); ++x)
      s.values.push_back(40 + 9 * (i - 10) - 3.0 * double(x));
    c.series.push_back(s);
    ++i;
  }
  return c;
}

// Every legend row lies right of the plot and of everything the x labels
// reach (7 px a character, as the layout assumes), and inside the canvas.
void expect_legend_clear(const LineChart& c, const std::string& svg) {
  std::vector<Text> all = texts(svg);
  double labels_right = 0;
  for (const Text& t : all)
    for (const std::string& l : c.x_labels)
      if (t.content == l)
        labels_right = std::max(labels_right, t.rotated ? t.x + 0.87 * 7 * double(l.size())
                                                        : t.x + 3.5 * double(l.size()));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex(R"re(height="([0-9.]+)")re")));
  const double height = std::stod(m[1]);
  size_t legend_rows = 0;
  for (const Text& t : all)
    for (const LineSeries& s : c.series)
      if (t.content == s.name) {
        ++legend_rows;
        EXPECT_GT(t.x, 680.0) << t.content;  // right of the plot (70 + 610)
        EXPECT_GT(t.x, labels_right + 16) << t.content;
        EXPECT_LT(t.y, height) << t.content;
      }
  EXPECT_EQ(legend_rows, c.series.size());
}
}  // namespace

TEST(SvgChart, LegendStaysClearOfTheAxesWithManySeries) {
  for (const std::vector<std::string>& shapes :
       {std::vector<std::string>{"2048x2048x2048", "4096x4096x4096"},
        std::vector<std::string>{"256", "512", "1024x1024x1024", "2048x2048x2048", "3000x3000x3000",
                                 "4096x4096x4096", "6144x6144x6144", "8192x8192x8192",
                                 "12288x12288x12288", "16384x16384x16384"}}) {
    LineChart c = many_series_chart(shapes);
    std::string svg = to_svg(c);
    expect_legend_clear(c, svg);
    EXPECT_EQ(python_parse_svg(write_temp("many.svg", svg)), 0);
    // SCHEDC_CHART_OUT=dir writes the charts for a person to look at.
    if (const char* dir = std::getenv("SCHEDC_CHART_OUT"))
      std::ofstream(std::string(dir) + "/bench_" + std::to_string(shapes.size()) + ".svg") << svg;
  }
}
