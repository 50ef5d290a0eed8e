#include "report/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace schedc::report {

std::string aligned_table(const std::vector<std::vector<std::string>>& cells,
                          const std::vector<bool>& left) {
  std::vector<size_t> width;
  for (const auto& row : cells) {
    if (row.size() > width.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string pad(width[i] - row[i].size(), ' ');
      bool text = i < left.size() && left[i];
      line += (i ? "  " : "") + (text ? row[i] + pad : pad + row[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string number(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace schedc::report
