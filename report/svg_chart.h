#pragma once
// Plain SVG charts, no plotting dependency: a bar chart (`schedc ablate
// --plot`: TFLOP/s per step, cuBLAS as a horizontal line) and a line chart
// (`schedc bench --plot`: % of cuBLAS against problem size, one line per
// schedule, cuBLAS as a horizontal line at 100%).

#include <string>
#include <vector>

namespace schedc::report {

struct BarChart {
  std::string title;
  std::string y_label;              // e.g. "TFLOP/s"
  std::vector<std::string> labels;  // one per bar
  std::vector<double> values;       // same length as labels; NaN = no bar (failed step)
  std::string reference_name;       // e.g. "cuBLAS"; empty = no line
  double reference_value = 0;
};

struct LineSeries {
  std::string name;
  std::vector<double> values;  // one per x label; NaN = no point
};

struct LineChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<std::string> x_labels;  // categories, evenly spaced
  std::vector<LineSeries> series;
  std::string reference_name;  // a dashed black horizontal line; empty = none
  double reference_value = 0;
};

// How series `i` of a line chart is drawn. Every series up to 150 has its
// own (colour, dash, marker): ten colours, then the dash changes; the marker
// changes with the colour and again with each round of ten, so no two series
// look alike and no colour is black (the reference line's).
struct SeriesStyle {
  std::string color;
  std::string dash;    // stroke-dasharray; "" = solid
  std::string marker;  // circle, square, triangle, diamond, cross
};
SeriesStyle line_style(size_t i);

std::string to_svg(const BarChart& chart);
std::string to_svg(const LineChart& chart);

// Escapes &, <, >, " and ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace schedc::report
