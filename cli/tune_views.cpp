#include "cli/tune_views.h"

#include <algorithm>

#include "report/svg_chart.h"
#include "report/text_table.h"
#include "runtime/report.h"

namespace schedc::cli {

namespace {

using report::number;

std::string key_line(const tune::Key& k) {
  const std::string gemm =
      std::to_string(k.m) + "x" + std::to_string(k.n) + "x" + std::to_string(k.k);
  return k.device + ", driver " + k.driver + ", " + k.dtype + " " +
         (k.conv.empty() ? k.layout + " " + gemm : "conv " + k.conv + " (GEMM " + gemm + ")");
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// One candidate's figure on one column, as the tune table prints it: a
// GEMM's % of cuBLAS, a convolution's x of im2col + cuBLAS.
std::string figure(const tune::Measured& m) {
  if (!m.measured) return m.status == tune::Status::ok ? "compiled" : "FAILED";
  const std::string speed = number("%.1f", m.tflops) + " " +
                            runtime::rate_unit(compiler::dtype_name(m.shape.dtype)) + " ";
  switch (m.status) {
    case tune::Status::ok:
      if (!m.conv.empty())
        return speed + (m.pipeline_ms > 0 ? number("%.2f", m.x_of_pipeline()) + "x" : "-");
      return speed + number("%.1f", m.percent_of_cublas()) + "%";
    case tune::Status::wrong: return "WRONG";
    case tune::Status::failed: return "FAILED";
  }
  return "";
}

// The rows of one key as a table (a convolution's with its x of im2col + cuBLAS).
void print_key(std::ostream& os, const std::vector<const tune::Result*>& rows) {
  const tune::Key& key = rows[0]->key;
  const bool conv = !key.conv.empty();
  std::vector<std::vector<std::string>> cells = {
      {runtime::rate_unit(key.dtype), conv ? "% cuBLAS GEMM" : "% cuBLAS", "status", "model rank",
       "choices", "space", "host", "measured", "why"}};
  if (conv) cells[0].insert(cells[0].begin() + 2, "x im2col+cuBLAS");
  for (const tune::Result* r : rows) {
    const bool ok = r->status == tune::Status::ok;
    std::vector<std::string> row = {
        ok ? number("%.1f", r->tflops) : "-",
        ok && r->cublas_ms > 0 ? number("%.1f", r->percent_of_cublas()) : "-",
        tune::to_string(r->status),
        std::to_string(r->model_rank),
        r->choices.empty() ? "-" : r->choices,
        r->space.empty() ? "-" : r->space,
        r->host.empty() ? "-" : r->host,
        r->created,
        r->detail};
    if (conv)
      row.insert(row.begin() + 2,
                 ok && r->pipeline_ms > 0 ? number("%.2f", r->x_of_pipeline()) : "-");
    cells.push_back(std::move(row));
  }
  std::vector<bool> left = {false, false, true, false, true, true, true, true, true};
  if (conv) left.insert(left.begin() + 2, false);
  os << report::aligned_table(cells, left);
}

}  // namespace

void print_results(std::ostream& os, const std::vector<tune::Result>& rows) {
  if (rows.empty()) {
    os << "(no results)\n";
    return;
  }
  std::vector<const tune::Result*> block;
  for (size_t i = 0; i <= rows.size(); ++i) {
    if (i == rows.size() || (!block.empty() && rows[i].key != block[0]->key)) {
      os << (block[0] == &rows[0] ? "" : "\n") << "# " << key_line(block[0]->key) << "\n";
      print_key(os, block);
      block.clear();
    }
    if (i < rows.size()) block.push_back(&rows[i]);
  }
}

void print_results_csv(std::ostream& os, const std::vector<tune::Result>& rows) {
  os << "device,driver,dtype,layout,m,n,k,status,tflops,median_ms,cublas_ms,percent_of_cublas,"
        "model_rank,choices,space,host,created,detail,schedule,conv,pipeline_ms,x_of_pipeline\n";
  for (const tune::Result& r : rows)
    os << csv_field(r.key.device) << "," << r.key.driver << "," << r.key.dtype << ","
       << r.key.layout << "," << r.key.m << "," << r.key.n << "," << r.key.k << ","
       << tune::to_string(r.status) << "," << number("%.3f", r.tflops) << ","
       << number("%.6f", r.median_ms) << "," << number("%.6f", r.cublas_ms) << ","
       << number("%.2f", r.percent_of_cublas()) << "," << r.model_rank << ","
       << csv_field(r.choices) << "," << csv_field(r.space) << "," << csv_field(r.host) << ","
       << r.created << "," << csv_field(r.detail) << "," << csv_field(r.schedule) << ","
       << csv_field(r.key.conv) << "," << number("%.6f", r.pipeline_ms) << ","
       << number("%.3f", r.x_of_pipeline()) << "\n";
}

std::string results_svg(const std::vector<tune::Result>& rows, std::string& title) {
  if (rows.empty()) return "";
  const tune::Key& key = rows[0].key;
  std::vector<const tune::Result*> ok;
  for (const tune::Result& r : rows)
    if (r.key == key && r.status == tune::Status::ok) ok.push_back(&r);
  if (ok.empty()) return "";
  std::sort(ok.begin(), ok.end(), [](const tune::Result* a, const tune::Result* b) {
    return a->model_rank < b->model_rank;
  });
  title = key_line(key);
  report::BarChart chart;
  chart.title = "schedc tune: " + title + " (bars in the static model's order)";
  chart.y_label = runtime::rate_unit(key.dtype);
  std::vector<double> cublas;
  const compiler::Problem p{key.m, key.n, key.k};
  for (const tune::Result* r : ok) {
    chart.labels.push_back("#" + std::to_string(r->model_rank));
    chart.values.push_back(r->tflops);
    cublas.push_back(runtime::tflops(p, r->cublas_ms));
  }
  std::sort(cublas.begin(), cublas.end());
  chart.reference_name =
      key.conv.empty() ? "cuBLAS (median of its runs)" : "cuBLAS's GEMM alone (median of its runs)";
  chart.reference_value = cublas[cublas.size() / 2];
  return report::to_svg(chart);
}

void print_tune_report(std::ostream& os, const tune::TuneReport& report) {
  const size_t per = report.shapes.size();
  std::vector<std::vector<std::string>> cells = {{"rank"}};
  for (size_t c = 0; c < per; ++c) cells[0].push_back(report.column_name(c));
  cells[0].push_back("choices");
  cells[0].push_back("why");
  for (size_t i = 0; i + per <= report.results.size(); i += per) {
    std::vector<std::string> row = {std::to_string(report.results[i].model_rank)};
    std::string why;
    for (size_t s = 0; s < per; ++s) {
      row.push_back(figure(report.results[i + s]));
      if (why.empty()) why = report.results[i + s].detail;
    }
    row.push_back(report.results[i].choices);
    row.push_back(why);
    cells.push_back(std::move(row));
  }
  std::vector<bool> left(cells[0].size(), true);
  left[0] = false;
  os << report::aligned_table(cells, left);
  bool measured = false;
  for (const tune::Measured& m : report.results) measured = measured || m.measured;
  if (!measured) return;  // compiled only
  for (size_t c = 0; c < per; ++c) {
    const std::optional<tune::Measured> best = report.best(c);
    os << "# best at " << report.column_name(c) << ": ";
    if (!best) {
      os << "none measured correct\n";
      continue;
    }
    os << "model rank " << best->model_rank << ", " << number("%.1f", best->tflops) << " "
       << runtime::rate_unit(compiler::dtype_name(best->shape.dtype)) << ", ";
    if (best->conv.empty())
      os << number("%.1f", best->percent_of_cublas()) << "% of cuBLAS";
    else if (best->pipeline_ms > 0)
      os << number("%.1f", best->percent_of_cublas()) << "% of cuBLAS's GEMM, "
         << number("%.2f", best->x_of_pipeline()) << "x of im2col + cuBLAS";
    else
      os << "no cuBLAS baseline";
    os << ": " << best->choices << "\n";
    const std::optional<double> rho = report.rank_correlation(c);
    os << "#   model vs measured order (Spearman's rho over the correct candidates): "
       << (rho ? number("%.2f", *rho) : std::string("fewer than 3 correct")) << "\n";
  }
}

}  // namespace schedc::cli
