#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace schedc::report {

namespace {

// Canvas geometry (pixels). The plot area is fixed; the right margin grows
// with the longest legend entry and the bottom one with the longest x label
// (rotated 30 degrees), so no text is cut off.
constexpr double kPlotW = 610, kPlotH = 320;
constexpr double kLeft = 70, kTop = 50;
constexpr double kCharW = 7;  // average width of a 12px sans-serif character

struct Canvas {
  double width = 0, height = 0;
};

Canvas fit_canvas(const std::vector<std::string>& legend,
                  const std::vector<std::string>& x_labels) {
  size_t legend_chars = 0, label_chars = 0;
  for (const std::string& s : legend) legend_chars = std::max(legend_chars, s.size());
  for (const std::string& s : x_labels) label_chars = std::max(label_chars, s.size());
  double right = std::max(180.0, 60 + kCharW * double(legend_chars));
  double bottom = std::max(110.0, 50 + 0.5 * kCharW * double(label_chars));  // sin 30 = 0.5
  return Canvas{kLeft + kPlotW + right, kTop + kPlotH + bottom};
}
// Tableau 10: ten colours told apart by most readers; none is black.
const char* const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr size_t kColors = sizeof kPalette / sizeof kPalette[0];
const char* const kDashes[] = {"", "8,4", "2,3"};
const char* const kMarkers[] = {"circle", "square", "triangle", "diamond", "cross"};
constexpr size_t kDashCount = sizeof kDashes / sizeof kDashes[0];
constexpr size_t kMarkerCount = sizeof kMarkers / sizeof kMarkers[0];
constexpr const char* kReferenceColor = "#000000";
constexpr double kLegendRow = 18;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A "nice" upper bound for the y axis and its tick step.
void y_axis(double max_value, double& top, double& step) {
  if (!(max_value > 0)) max_value = 1;
  double raw = max_value / 5;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double norm = raw / mag;
  step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  top = std::ceil(max_value / step) * step;
}

double y_px(double v, double top) {
  return kTop + kPlotH * (1 - v / top);
}

void header(std::ostringstream& os, const Canvas& canvas, const std::string& title,
            const std::string& y_label, double top, double step) {
  const double width = canvas.width, height = canvas.height;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
     << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << num(width / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">"
     << xml_escape(title) << "</text>\n";
  for (double v = 0; v <= top + step / 2; v += step) {
    double y = y_px(v, top);
    os << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(y) << "\" x2=\"" << num(kLeft + kPlotW)
       << "\" y2=\"" << num(y) << "\" stroke=\"#dddddd\"/>\n"
       << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
       << num(v) << "</text>\n";
  }
  os << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(kLeft)
     << "\" y2=\"" << num(kTop + kPlotH) << "\" stroke=\"black\"/>\n"
     << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop + kPlotH) << "\" x2=\""
     << num(kLeft + kPlotW) << "\" y2=\"" << num(kTop + kPlotH) << "\" stroke=\"black\"/>\n"
     << "<text transform=\"translate(18," << num(kTop + kPlotH / 2)
     << ") rotate(-90)\" text-anchor=\"middle\">" << xml_escape(y_label) << "</text>\n";
}

void legend_entry(std::ostringstream& os, int row, const std::string& color,
                  const std::string& name, bool dashed) {
  double x = kLeft + kPlotW + 16, y = kTop + 10 + 20 * row;
  os << "<line x1=\"" << num(x) << "\" y1=\"" << num(y) << "\" x2=\"" << num(x + 24) << "\" y2=\""
     << num(y) << "\" stroke=\"" << color << "\" stroke-width=\"3\""
     << (dashed ? " stroke-dasharray=\"6,3\"" : "") << "/>\n"
     << "<text x=\"" << num(x + 30) << "\" y=\"" << num(y + 4) << "\">" << xml_escape(name)
     << "</text>\n";
}

void x_label(std::ostringstream& os, double x, const std::string& text) {
  double y = kTop + kPlotH + 14;
  os << "<text transform=\"translate(" << num(x) << "," << num(y)
     << ") rotate(30)\" text-anchor=\"start\">" << xml_escape(text) << "</text>\n";
}

// A point of a series, in its marker's shape, with a tooltip.
void marker(std::ostringstream& os, const std::string& shape, double x, double y,
            const std::string& color, const std::string& tooltip) {
  const std::string title = tooltip.empty() ? "" : "<title>" + xml_escape(tooltip) + "</title>";
  const double r = 4;
  if (shape == "square") {
    os << "<rect x=\"" << num(x - r + 0.5) << "\" y=\"" << num(y - r + 0.5) << "\" width=\""
       << num(2 * r - 1) << "\" height=\"" << num(2 * r - 1) << "\" fill=\"" << color << "\">";
    os << title << "</rect>\n";
  } else if (shape == "triangle" || shape == "diamond") {
    std::string pts = shape == "triangle"
                          ? num(x) + "," + num(y - r - 1) + " " + num(x + r + 1) + "," +
                                num(y + r) + " " + num(x - r - 1) + "," + num(y + r)
                          : num(x) + "," + num(y - r - 1) + " " + num(x + r + 1) + "," + num(y) +
                                " " + num(x) + "," + num(y + r + 1) + " " + num(x - r - 1) + "," +
                                num(y);
    os << "<polygon points=\"" << pts << "\" fill=\"" << color << "\">" << title << "</polygon>\n";
  } else if (shape == "cross") {
    os << "<path d=\"M" << num(x - r) << "," << num(y - r) << " L" << num(x + r) << ","
       << num(y + r) << " M" << num(x - r) << "," << num(y + r) << " L" << num(x + r) << ","
       << num(y - r) << "\" stroke=\"" << color << "\" stroke-width=\"2.5\">" << title
       << "</path>\n";
  } else {
    os << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r - 0.5)
       << "\" fill=\"" << color << "\">" << title << "</circle>\n";
  }
}

// A legend row of a line chart at (x, y): a stroke in the series' style with
// its marker, then the name.
void line_legend_entry(std::ostringstream& os, double x, double y, const SeriesStyle& style,
                       const std::string& name) {
  os << "<line x1=\"" << num(x) << "\" y1=\"" << num(y) << "\" x2=\"" << num(x + 28) << "\" y2=\""
     << num(y) << "\" stroke=\"" << style.color << "\" stroke-width=\"2\""
     << (style.dash.empty() ? "" : " stroke-dasharray=\"" + style.dash + "\"") << "/>\n";
  if (!style.marker.empty()) marker(os, style.marker, x + 14, y, style.color, "");
  os << "<text x=\"" << num(x + 36) << "\" y=\"" << num(y + 4) << "\">" << xml_escape(name)
     << "</text>\n";
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control bytes are not allowed in XML 1.0 text.
        if ((unsigned char)c >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

std::string to_svg(const BarChart& chart) {
  Canvas canvas = fit_canvas({chart.y_label, chart.reference_name}, chart.labels);
  double max_value = chart.reference_name.empty() ? 0 : chart.reference_value;
  for (double v : chart.values)
    if (std::isfinite(v)) max_value = std::max(max_value, v);
  double top, step;
  y_axis(max_value * 1.05, top, step);
  std::ostringstream os;
  header(os, canvas, chart.title, chart.y_label, top, step);
  size_t n = chart.labels.size();
  double slot = n ? kPlotW / double(n) : kPlotW;
  for (size_t i = 0; i < n; ++i) {
    double x = kLeft + slot * double(i);
    double v = i < chart.values.size() ? chart.values[i] : NAN;
    if (std::isfinite(v) && v > 0) {
      double y = y_px(v, top);
      os << "<rect x=\"" << num(x + slot * 0.15) << "\" y=\"" << num(y) << "\" width=\""
         << num(slot * 0.7) << "\" height=\"" << num(kTop + kPlotH - y) << "\" fill=\""
         << kPalette[0] << "\"><title>" << xml_escape(chart.labels[i]) << ": " << num(v)
         << "</title></rect>\n"
         << "<text x=\"" << num(x + slot / 2) << "\" y=\"" << num(y - 4)
         << "\" text-anchor=\"middle\" font-size=\"10\">" << num(v) << "</text>\n";
    } else {
      os << "<text x=\"" << num(x + slot / 2) << "\" y=\"" << num(kTop + kPlotH - 4)
         << "\" text-anchor=\"middle\" fill=\"#d62728\">failed</text>\n";
    }
    x_label(os, x + slot / 2, chart.labels[i]);
  }
  int rows = 0;
  legend_entry(os, rows++, kPalette[0], chart.y_label, false);
  if (!chart.reference_name.empty()) {
    double y = y_px(chart.reference_value, top);
    os << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(y) << "\" x2=\"" << num(kLeft + kPlotW)
       << "\" y2=\"" << num(y) << "\" stroke=\"" << kReferenceColor
       << "\" stroke-width=\"2\" stroke-dasharray=\"6,3\"/>\n";
    legend_entry(os, rows++, kReferenceColor, chart.reference_name, true);
  }
  os << "</svg>\n";
  return os.str();
}

SeriesStyle line_style(size_t i) {
  size_t round = i / kColors;
  return SeriesStyle{kPalette[i % kColors], kDashes[round % kDashCount],
                     kMarkers[(i + round) % kMarkerCount]};
}

// Layout: x labels written level when each fits its slot, else rotated 30
// degrees; the legend is a column right of the plot and of everything the x
// labels reach, one row per series, and the canvas grows to hold it, so the
// legend never runs into the axes or their labels however many series.
std::string to_svg(const LineChart& chart) {
  const size_t n = chart.x_labels.size();
  auto x_at = [&](size_t i) {
    return n > 1 ? kLeft + 20 + (kPlotW - 40) * double(i) / double(n - 1) : kLeft + kPlotW / 2;
  };
  size_t label_chars = 0, legend_chars = 0;
  for (const std::string& l : chart.x_labels) label_chars = std::max(label_chars, l.size());
  for (const LineSeries& s : chart.series) legend_chars = std::max(legend_chars, s.name.size());
  legend_chars = std::max(legend_chars, chart.reference_name.size());
  const double label_w = kCharW * double(label_chars);
  const double slot = n > 1 ? (kPlotW - 40) / double(n - 1) : kPlotW;
  const bool rotate = label_w > 0.9 * slot;
  const double labels_right =
      n ? x_at(n - 1) + (rotate ? 0.87 * label_w + 12 : label_w / 2) : kLeft + kPlotW;
  const double labels_bottom = kTop + kPlotH + (rotate ? 20 + 0.5 * label_w : 20);
  const double legend_x = std::max(kLeft + kPlotW, labels_right) + 16;
  const size_t rows = chart.series.size() + (chart.reference_name.empty() ? 0 : 1);
  const double axis_title_y = labels_bottom + 22;
  Canvas canvas{legend_x + 36 + kCharW * double(legend_chars) + 16,
                std::max(axis_title_y + 12, kTop + 10 + kLegendRow * double(rows) + 10)};

  double max_value = chart.reference_name.empty() ? 0 : chart.reference_value;
  for (const LineSeries& s : chart.series)
    for (double v : s.values)
      if (std::isfinite(v)) max_value = std::max(max_value, v);
  double top, step;
  y_axis(max_value * 1.05, top, step);
  std::ostringstream os;
  header(os, canvas, chart.title, chart.y_label, top, step);
  for (size_t i = 0; i < n; ++i) {
    if (rotate)
      x_label(os, x_at(i), chart.x_labels[i]);
    else
      os << "<text x=\"" << num(x_at(i)) << "\" y=\"" << num(kTop + kPlotH + 18)
         << "\" text-anchor=\"middle\">" << xml_escape(chart.x_labels[i]) << "</text>\n";
  }
  os << "<text x=\"" << num(kLeft + kPlotW / 2) << "\" y=\"" << num(axis_title_y)
     << "\" text-anchor=\"middle\">" << xml_escape(chart.x_label) << "</text>\n";
  if (!chart.reference_name.empty()) {
    double y = y_px(chart.reference_value, top);
    os << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(y) << "\" x2=\"" << num(kLeft + kPlotW)
       << "\" y2=\"" << num(y) << "\" stroke=\"" << kReferenceColor
       << "\" stroke-width=\"1.5\" stroke-dasharray=\"6,3\"/>\n";
  }
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const LineSeries& series = chart.series[s];
    const SeriesStyle style = line_style(s);
    std::string points;
    for (size_t i = 0; i < n && i < series.values.size(); ++i)
      if (std::isfinite(series.values[i]))
        points += num(x_at(i)) + "," + num(y_px(series.values[i], top)) + " ";
    if (!points.empty())
      os << "<polyline points=\"" << points << "\" fill=\"none\" stroke=\"" << style.color
         << "\" stroke-width=\"2\""
         << (style.dash.empty() ? "" : " stroke-dasharray=\"" + style.dash + "\"") << "/>\n";
    for (size_t i = 0; i < n && i < series.values.size(); ++i) {
      double v = series.values[i];
      if (std::isfinite(v))
        marker(os, style.marker, x_at(i), y_px(v, top), style.color,
               series.name + " " + chart.x_labels[i] + ": " + num(v));
    }
    line_legend_entry(os, legend_x, kTop + 10 + kLegendRow * double(s), style, series.name);
  }
  if (!chart.reference_name.empty())
    line_legend_entry(os, legend_x, kTop + 10 + kLegendRow * double(chart.series.size()),
                      SeriesStyle{kReferenceColor, "6,3", ""}, chart.reference_name);
  os << "</svg>\n";
  return os.str();
}

}  // namespace schedc::report
