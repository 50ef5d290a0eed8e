#pragma once
// Plain SVG charts, no plotting dependency: a bar chart (`schedc ablate
// --plot`: TFLOP/s per step, cuBLAS as a horizontal line) and a line chart
// (`schedc bench --plot`: TFLOP/s against problem size, one line per
// schedule plus cuBLAS).

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
};

std::string to_svg(const BarChart& chart);
std::string to_svg(const LineChart& chart);

// Escapes &, <, >, " and ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace schedc::report
