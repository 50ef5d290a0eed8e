// The charts must be well-formed XML that a browser opens: checked with
// Python's XML parser (python3 is required by lit anyway).
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

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
