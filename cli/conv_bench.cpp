#include "cli/conv_bench.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/bench_rows.h"
#include "cli/pipeline.h"
#include "report/json.h"
#include "report/text_table.h"
#include "runtime/conv_report.h"
#include "runtime/conv_run.h"
#include "runtime/error.h"
#include "runtime/report.h"

namespace schedc::cli {

namespace {

struct ConvRow {
  std::string file, layer, dtype;
  std::string status;  // ok | FAILED | ERROR
  std::string detail;
  std::shared_ptr<runtime::PreparedKernel> prepared;
  runtime::ConvReport report;
};

std::string shape(const compiler::Conv2d& v) {
  return std::to_string(v.gemm_m()) + "x" + std::to_string(v.gemm_n()) + "x" +
         std::to_string(v.gemm_k());
}

void print_table(std::ostream& os, const std::vector<ConvRow>& rows) {
  const bool any_s8 =
      std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.dtype == "s8"; });
  const bool all_s8 =
      std::all_of(rows.begin(), rows.end(), [](auto& r) { return r.dtype == "s8"; });
  const std::string unit = all_s8 ? "TOPS" : any_s8 ? "TOPS|TFLOP/s" : "TFLOP/s";
  std::vector<std::vector<std::string>> cells = {
      {"schedule", "layer", "convolution", "GEMM", "dtype", "status", "median ms", unit,
       "cuBLAS GEMM ms", "% of GEMM", "im2col+cuBLAS ms", "x of im2col+cuBLAS"}};
  for (const ConvRow& r : rows) {
    const runtime::ConvReport& rep = r.report;
    std::vector<std::string> c = {base_name(r.file),
                                  r.layer.empty() ? "-" : r.layer,
                                  runtime::conv_string(rep.conv),
                                  shape(rep.conv),
                                  r.dtype,
                                  r.status};
    if (rep.timed) {
      c.push_back(report::number("%.3f", rep.kernel.median_ms));
      c.push_back(report::number("%.1f", runtime::tflops(rep.problem, rep.kernel.median_ms)));
      if (rep.has_baseline()) {
        c.push_back(report::number("%.3f", rep.cublas.median_ms));
        c.push_back(report::number("%.1f", rep.percent_of_cublas()));
        c.push_back(report::number("%.3f", rep.explicit_pipeline.median_ms));
        c.push_back(report::number("%.2f", rep.x_of_explicit()));
      }
    }
    c.resize(cells[0].size(), "-");
    cells.push_back(c);
  }
  os << report::aligned_table(cells, {true, true, true, true, true, true});
  for (const ConvRow& r : rows) {
    const std::string what = base_name(r.file) + " " + runtime::conv_string(r.report.conv);
    if (!r.detail.empty())
      os << what << ": " << r.status << ": " << r.detail << "\n";
    else if (r.report.timed && !r.report.has_baseline())
      os << what << ": no cuBLAS baseline: " << r.report.no_baseline << "\n";
  }
}

void print_csv(std::ostream& os, const std::vector<ConvRow>& rows) {
  os << "schedule,layer,n,h,w,c,k,r,s,stride_h,stride_w,pad_h,pad_w,dil_h,dil_w,m,n_gemm,k_gemm,"
        "dtype,status,min_ms,median_ms,max_ms,tflops,cublas_median_ms,percent_of_cublas,"
        "explicit_median_ms,x_of_explicit,entry,fallback\n";
  for (const ConvRow& r : rows) {
    const runtime::ConvReport& rep = r.report;
    const compiler::Conv2d& v = rep.conv;
    os << r.file << "," << r.layer << "," << v.n << "," << v.h << "," << v.w << "," << v.c << ","
       << v.k << "," << v.r << "," << v.s << "," << v.stride_h << "," << v.stride_w << ","
       << v.pad_h << "," << v.pad_w << "," << v.dil_h << "," << v.dil_w << "," << v.gemm_m() << ","
       << v.gemm_n() << "," << v.gemm_k() << "," << r.dtype << "," << r.status;
    if (rep.timed)
      os << "," << report::number("%.6f", rep.kernel.min_ms) << ","
         << report::number("%.6f", rep.kernel.median_ms) << ","
         << report::number("%.6f", rep.kernel.max_ms) << ","
         << report::number("%.3f", runtime::tflops(rep.problem, rep.kernel.median_ms));
    else
      os << ",,,,";
    if (rep.has_baseline())
      os << "," << report::number("%.6f", rep.cublas.median_ms) << ","
         << report::number("%.2f", rep.percent_of_cublas()) << ","
         << report::number("%.6f", rep.explicit_pipeline.median_ms) << ","
         << report::number("%.3f", rep.x_of_explicit());
    else
      os << ",,,,";
    os << "," << rep.entry.name << "," << (rep.entry.fallback ? 1 : 0) << "\n";
  }
}

void print_json(std::ostream& os, const std::vector<ConvRow>& rows) {
  report::Json all = report::Json::array();
  for (const ConvRow& r : rows) {
    const report::Json extra = {
        {"status", r.status}, {"layer", r.layer}, {"error", r.status == "ERROR" ? r.detail : ""}};
    if (r.prepared && r.status != "ERROR") {
      all.push_back(runtime::conv_json(r.file, *r.prepared, r.report, extra));
      continue;
    }
    report::Json o = {
        {"file", r.file}, {"ok", false}, {"conv", runtime::conv_string(r.report.conv)}};
    for (const auto& [key, value] : extra.items()) o[key] = value;
    all.push_back(std::move(o));
  }
  os << report::json_text(all) << "\n";
}

}  // namespace

int bench_convs(const std::vector<ConvBenchFile>& files, const ConvBenchOptions& o,
                runtime::GpuSession& session, const runtime::JitOptions& jit, int rc) {
  // Every file's entries for every convolution into the cache first, side by side.
  std::vector<runtime::CompileJob> jobs;
  size_t total = 0;
  for (const ConvBenchFile& f : files) {
    std::vector<compiler::Problem> problems;
    for (const runtime::NamedConv& v : f.convs)
      problems.push_back(runtime::conv_problem(v.conv, f.c.schedule.dtype));
    jobs.push_back({&f.c.kernel, runtime::entries_for(f.c.kernel, problems)});
    total += f.convs.size();
  }
  const runtime::DeviceInfo& device = session.device();
  runtime::precompile(jobs, device.arch(), jit);

  std::vector<ConvRow> rows;
  size_t done = 0;
  for (const ConvBenchFile& f : files) {
    const PreparedSchedule prepared = prepare_schedule(session, f.c.kernel, jit);
    for (const runtime::NamedConv& v : f.convs) {
      ConvRow row;
      row.file = f.file;
      row.layer = v.name;
      row.dtype = f.c.kernel.dtype;
      row.prepared = prepared.kernel;
      row.report.conv = v.conv;
      std::cerr << "[" << ++done << "/" << total << "] " << base_name(f.file) << " "
                << (v.name.empty() ? "" : v.name + ": ") << runtime::conv_string(v.conv) << " ... "
                << std::flush;
      const RowStatus status = measure_row(prepared, row.report, [&] {
        runtime::ConvRunOptions opt;
        opt.conv = v.conv;
        opt.epilogue = o.scalars.applied_to(f.c.schedule.epilogue);
        opt.seed = o.seed;
        opt.flush_l2 = o.timing.flush_l2;
        opt.timing.graph_runs = o.timing.graph_runs;
        opt.jit = jit;
        return session.run_conv(*prepared.kernel, opt);
      });
      row.status = status.status;
      row.detail = status.detail;
      const runtime::ConvReport& rep = row.report;
      if (row.status == "ok" && rep.timed && rep.has_baseline())
        std::cerr << "ok " << report::number("%.3f", rep.kernel.median_ms) << " ms, "
                  << report::number("%.1f", rep.percent_of_cublas()) << "% of cuBLAS's GEMM, "
                  << report::number("%.2f", rep.x_of_explicit()) << "x of im2col + cuBLAS\n";
      else if (row.status == "ok")
        std::cerr << "ok " << report::number("%.3f", rep.kernel.median_ms)
                  << " ms, no cuBLAS baseline\n";
      else
        std::cerr << row.status << ": " << row.detail << "\n";
      rc = std::max(rc, status.exit_code());
      rows.push_back(std::move(row));
    }
  }
  if (o.json) {
    print_json(std::cout, rows);
  } else if (o.csv) {
    print_csv(std::cout, rows);
  } else {
    std::cout << "device: " << device.name << " (" << device.arch() << ")\n";
    std::cout << o.timing.describe() << "\n";
    print_table(std::cout, rows);
  }
  return rc;
}

}  // namespace schedc::cli
