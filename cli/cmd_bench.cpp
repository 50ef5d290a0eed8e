// schedc bench FILE…: the seed articles' table. Every (schedule, shape) is
// validated first (a failure shows FAILED in its row and makes the exit code
// 1), then timed beside cuBLAS in the same process. Progress goes to stderr;
// --json / --csv put the table alone on stdout.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/batch_options.h"
#include "cli/bench_rows.h"
#include "cli/commands.h"
#include "cli/conv_bench.h"
#include "cli/conv_options.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "cli/scalars.h"
#include "cli/timing_flags.h"
#include "report/svg_chart.h"
#include "report/text_table.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/report.h"
#include "runtime/run.h"

namespace schedc::cli {

namespace {

struct BenchArgs {
  std::vector<std::string> files;
  std::string shapes;
  std::string plot;  // SVG path; "" = no plot
  bool json = false, csv = false, no_cache = false;
  TimingFlags timing;  // --flush-l2, --graph
  uint64_t seed = 1;
  Scalars scalars;     // --alpha, --beta
  std::string layout;  // --layout NN|NT|TN|TT ("" = each file's)
  BatchOptions batch;  // --batch, --stride-a/-b/-c: for every file and shape
  ConvOptions conv;    // --conv: the convolutions of convolution modules
};

struct Row {
  std::string file;
  compiler::Problem problem;
  std::string dtype;
  std::string status;  // ok | FAILED | ERROR
  std::string detail;  // failure or error text
  std::shared_ptr<runtime::PreparedKernel> prepared;
  runtime::RunReport report;
};

void print_table(std::ostream& os, const std::vector<Row>& rows) {
  std::vector<std::vector<std::string>> cells = {{"schedule", "shape", "dtype", "status", "min ms",
                                                  "median ms", "max ms", "TFLOP/s", "cuBLAS ms",
                                                  "cuBLAS TFLOP/s", "% of cuBLAS"}};
  for (const Row& r : rows) {
    const runtime::RunReport& rep = r.report;
    std::vector<std::string> c = {base_name(r.file), runtime::shape_string(r.problem), r.dtype,
                                  r.status};
    if (rep.timed) {
      c.push_back(report::number("%.3f", rep.kernel.min_ms));
      c.push_back(report::number("%.3f", rep.kernel.median_ms));
      c.push_back(report::number("%.3f", rep.kernel.max_ms));
      c.push_back(report::number("%.1f", runtime::tflops(r.problem, rep.kernel.median_ms)));
      if (rep.has_baseline()) {
        c.push_back(report::number("%.3f", rep.cublas.median_ms));
        c.push_back(report::number("%.1f", runtime::tflops(r.problem, rep.cublas.median_ms)));
        c.push_back(report::number("%.1f", rep.percent_of_cublas()));
      } else {  // s8 where cuBLAS int8 rejects the problem: why, below the table
        c.resize(11, "-");
      }
    } else {
      c.resize(11, "-");
    }
    cells.push_back(c);
  }
  // Text columns (schedule, shape, dtype, status) left, numbers right.
  os << report::aligned_table(cells, {true, true, true, true});
  for (const Row& r : rows)
    if (!r.detail.empty())
      os << base_name(r.file) << " " << runtime::shape_string(r.problem) << ": " << r.status << ": "
         << r.detail << "\n";
    else if (r.report.timed && !r.report.has_baseline())
      os << base_name(r.file) << " " << runtime::shape_string(r.problem)
         << ": no cuBLAS baseline: " << r.report.no_baseline << "\n";
}

void print_csv(std::ostream& os, const std::vector<Row>& rows) {
  os << "schedule,m,n,k,dtype,status,min_ms,median_ms,max_ms,tflops,cublas_median_ms,"
        "cublas_tflops,percent_of_cublas,entry,fallback,batch,stride_a,stride_b,stride_c\n";
  for (const Row& r : rows) {
    const runtime::RunReport& rep = r.report;
    os << r.file << "," << r.problem.m << "," << r.problem.n << "," << r.problem.k << "," << r.dtype
       << "," << r.status;
    if (rep.timed)
      os << "," << report::number("%.6f", rep.kernel.min_ms) << ","
         << report::number("%.6f", rep.kernel.median_ms) << ","
         << report::number("%.6f", rep.kernel.max_ms) << ","
         << report::number("%.3f", runtime::tflops(r.problem, rep.kernel.median_ms)) << ",";
    if (rep.has_baseline())
      os << report::number("%.6f", rep.cublas.median_ms) << ","
         << report::number("%.3f", runtime::tflops(r.problem, rep.cublas.median_ms)) << ","
         << report::number("%.2f", rep.percent_of_cublas());
    else if (rep.timed)
      os << ",,";  // no baseline (s8 where cuBLAS int8 rejects the problem)
    else
      os << ",,,,,,,";
    const compiler::Problem& p = r.problem;
    os << "," << rep.entry.name << "," << (rep.entry.fallback ? 1 : 0) << "," << p.batch << ","
       << p.a_stride() << "," << p.b_stride() << "," << p.c_stride() << "\n";
  }
}

void print_json(std::ostream& os, const std::vector<Row>& rows) {
  report::Json all = report::Json::array();
  for (const Row& r : rows) {
    if (r.prepared)
      all.push_back(runtime::run_json(
          r.file, r.problem, *r.prepared, r.report,
          {{"status", r.status}, {"error", r.status == "ERROR" ? r.detail : ""}}));
    else {
      report::Json o = {{"file", r.file},   {"m", r.problem.m}, {"n", r.problem.n},
                        {"k", r.problem.k}, {"ok", false},      {"status", r.status},
                        {"error", r.detail}};
      runtime::add_batch_json(o, r.problem);
      all.push_back(std::move(o));
    }
  }
  os << report::json_text(all) << "\n";
}

// % of cuBLAS against problem size: one line per schedule, each measured
// against cuBLAS in its own mode (f32 pedantic, TF32, f16 or bf16 inputs),
// so f32 and tensor-core schedules share one axis whose 100% line is
// cuBLAS; the legend names each schedule's reference mode.
bool write_plot(const std::string& path, const std::vector<Row>& rows) {
  report::LineChart chart;
  chart.title = "schedc bench: each schedule against cuBLAS in its own mode";
  chart.x_label = "problem size (M x N x K)";
  chart.y_label = "% of cuBLAS (median time)";
  chart.reference_name = "cuBLAS = 100%";
  chart.reference_value = 100;
  auto x_of = [&](const std::string& shape) {
    auto it = std::find(chart.x_labels.begin(), chart.x_labels.end(), shape);
    if (it != chart.x_labels.end()) return size_t(it - chart.x_labels.begin());
    chart.x_labels.push_back(shape);
    return chart.x_labels.size() - 1;
  };
  for (const Row& r : rows) x_of(runtime::shape_string(r.problem));
  auto series_of = [&](const std::string& name) -> report::LineSeries& {
    for (report::LineSeries& s : chart.series)
      if (s.name == name) return s;
    chart.series.push_back({name, std::vector<double>(chart.x_labels.size(), NAN)});
    return chart.series.back();
  };
  for (const Row& r : rows) {
    std::string name = base_name(r.file);
    if (r.report.timed) {
      std::string mode = runtime::to_string(r.report.ref_mode);
      if (mode.rfind("cuBLAS ", 0) == 0) mode = mode.substr(7);
      name += " vs " + mode;
    }
    double v = r.status == "ok" && r.report.timed ? r.report.percent_of_cublas() : NAN;
    series_of(name).values[x_of(runtime::shape_string(r.problem))] = v;
  }
  std::ofstream out(path);
  out << report::to_svg(chart);
  return bool(out);
}

int bench_command(const BenchArgs& a) {
  if (a.json && a.csv) {
    std::cerr << "schedc bench: error: choose one of --json and --csv\n";
    return kBadInput;
  }
  if (std::string why = a.timing.error(); !why.empty()) {
    std::cerr << "schedc bench: error: " << why << "\n";
    return kBadInput;
  }
  std::vector<compiler::Shape> shapes;
  if (!a.shapes.empty() && !parse_shapes(a.shapes, shapes)) {
    std::cerr << "schedc bench: error: bad --shapes '" << a.shapes
              << "' (expected a comma-separated list of N or MxNxK)\n";
    return kBadInput;
  }
  if (std::string why = a.batch.check_batch(); !why.empty()) {
    std::cerr << "schedc bench: error: " << why << "\n";
    return kBadInput;
  }
  std::string why;
  std::optional<runtime::DeviceInfo> device = runtime::find_device(why);
  compiler::Target target = device ? runtime::target_for_device(*device) : compiler::Target{};
  const std::optional<std::vector<runtime::NamedConv>> given_convs =
      a.conv.parse(target, std::cerr);
  if (!given_convs) return kBadInput;

  int rc = kOk;
  // Each file compiled, and its problems: its shape or --shapes, with the
  // batch and strides.
  struct Bench {
    std::string file;
    Compiled c;
    std::vector<compiler::Problem> problems;
  };
  std::vector<Bench> compiled;
  std::vector<ConvBenchFile> conv_files;  // convolution modules (cli/conv_bench.h)
  for (const std::string& f : a.files) {
    std::optional<Compiled> c =
        compile_file_with(f, {a.layout, a.batch.directive()}, target, std::cerr);
    if (!c) {
      rc = std::max(rc, int(kBadInput));
      continue;
    }
    // s8 takes whole-number scalars (the kernel converts them with int()).
    const compiler::Epilogue epi = a.scalars.applied_to(c->schedule.epilogue);
    if (std::string why = runtime::integer_scalars_error(c->kernel, epi.alpha, epi.beta);
        !why.empty()) {
      std::cerr << f << ": error: " << why << "\n";
      rc = std::max(rc, int(kBadInput));
      continue;
    }
    if (a.conv.given() || !c->kernel.conv.empty()) {
      const char* refused =
          !a.shapes.empty()   ? "--shapes"
          : !a.layout.empty() ? "--layout"
          : a.batch.directive() || a.batch.stride_a || a.batch.stride_b || a.batch.stride_c
              ? "--batch and --stride-*"
          : !a.plot.empty() ? "--plot"
                            : nullptr;
      std::optional<std::vector<runtime::NamedConv>> convs;
      if (refused)
        std::cerr << f << ": error: " << refused
                  << " does not apply to a convolution module (its problems are its "
                     "convolutions: --conv SPEC, else its `conv`)\n";
      else
        convs = convs_for(f, *c, *given_convs, std::cerr);
      if (!convs) {
        rc = std::max(rc, int(kBadInput));
        continue;
      }
      conv_files.push_back({f, std::move(*c), std::move(*convs)});
      continue;
    }
    std::vector<compiler::Problem> ps;
    for (const compiler::Shape& s : shapes.empty() ? std::vector{c->schedule.shape} : shapes) {
      compiler::Problem p =
          c->kernel.in_layouts(compiler::Problem{s.m, s.n, s.k, 0, 0, 0, c->schedule.dtype});
      if (std::string why = a.batch.apply(p, c->schedule.batch); !why.empty()) {
        std::cerr << f << ": error: at " << s.m << "x" << s.n << "x" << s.k << ": " << why << "\n";
        rc = std::max(rc, int(kBadInput));
        ps.clear();
        break;
      }
      ps.push_back(p);
    }
    if (!ps.empty()) compiled.push_back({f, std::move(*c), std::move(ps)});
  }
  if (!compiled.empty() && !conv_files.empty()) {
    std::cerr << "schedc bench: error: " << conv_files.front().file << " computes convolutions and "
              << compiled.front().file << " GEMMs: bench one kind at a time\n";
    return kBadInput;
  }
  // Nothing left to run: bad input, device or not (as a GPU machine would say).
  if (compiled.empty() && conv_files.empty() && rc == kBadInput) return kBadInput;
  if (!device) {
    std::cerr << "schedc: no CUDA device: " << why << " (" << compiled.size() + conv_files.size()
              << " of " << a.files.size()
              << " schedules checked and emitted; nothing can be timed here)\n";
    return kToolchain;
  }

  std::string session_error;
  std::unique_ptr<runtime::GpuSession> session = runtime::start_session(*device, session_error);
  if (!session) {
    std::cerr << "schedc: error: " << session_error << "\n";
    return kToolchain;
  }
  runtime::JitOptions jit;
  jit.use_cache = !a.no_cache;
  if (!conv_files.empty())
    return bench_convs(conv_files, {a.seed, a.scalars, a.json, a.csv, a.timing}, *session, jit, rc);

  // Every schedule's entries for every shape compiled side by side into the
  // kernel cache first (runtime::precompile); then each is measured alone.
  std::vector<runtime::CompileJob> jobs;
  for (const Bench& b : compiled)
    jobs.push_back({&b.c.kernel, runtime::entries_for(b.c.kernel, b.problems)});
  runtime::precompile(jobs, device->arch(), jit);

  std::vector<Row> rows;
  size_t total = 0;
  total = compiled.size() * std::max<size_t>(1, shapes.size());
  size_t done = 0;
  for (const auto& [file, c, problems] : compiled) {
    const PreparedSchedule prepared = prepare_schedule(*session, c.kernel, jit);
    for (const compiler::Problem& problem : problems) {
      Row row;
      row.file = file;
      row.problem = problem;
      row.dtype = c.kernel.dtype;
      row.prepared = prepared.kernel;
      std::cerr << "[" << ++done << "/" << total << "] " << base_name(file) << " "
                << runtime::shape_string(row.problem) << " ... " << std::flush;
      const RowStatus status = measure_row(prepared, row.report, [&] {
        runtime::RunOptions opt;
        opt.problem = row.problem;
        opt.epilogue = a.scalars.applied_to(c.schedule.epilogue);
        opt.seed = a.seed;
        opt.flush_l2 = a.timing.flush_l2;
        opt.timing.graph_runs = a.timing.graph_runs;
        return session->run(*prepared.kernel, opt);
      });
      row.status = status.status;
      row.detail = status.detail;
      if (row.status == "ok" && row.report.timed && !row.report.has_baseline())
        std::cerr << "ok " << report::number("%.3f", row.report.kernel.median_ms)
                  << " ms, no cuBLAS baseline\n";
      else if (row.status == "ok")
        std::cerr << "ok " << report::number("%.3f", row.report.kernel.median_ms) << " ms, "
                  << report::number("%.1f", row.report.percent_of_cublas()) << "% of cuBLAS\n";
      else
        std::cerr << row.status << ": " << row.detail << "\n";
      rc = std::max(rc, status.exit_code());
      rows.push_back(std::move(row));
    }
  }
  if (a.json)
    print_json(std::cout, rows);
  else if (a.csv)
    print_csv(std::cout, rows);
  else {
    std::cout << "device: " << device->name << " (" << device->arch() << ")\n";
    std::cout << a.timing.describe() << "\n";
    print_table(std::cout, rows);
  }
  if (!a.plot.empty() && !write_plot(a.plot, rows)) {
    std::cerr << "schedc bench: error: cannot write " << a.plot << "\n";
    return std::max(rc, int(kToolchain));
  }
  return rc;
}

}  // namespace

Command add_bench_command(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* sub = root.add_subcommand(
      "bench", "Validate and time schedules beside cuBLAS over a list of shapes");
  sub->add_option("files", a->files, ".sched files")->required();
  sub->add_option("--shapes", a->shapes,
                  "comma-separated shapes, N (= NxNxN) or MxNxK (default: each schedule's shape)");
  sub->add_option("--seed", a->seed, "seed of the random inputs (default 1)");
  a->scalars.add_to(sub);
  sub->add_option(
      "--layout", a->layout,
      "A's and B's layouts for every file: NN, NT (B column-major: C = X·Wᵀ), TN or "
      "TT; N row-major, T column-major; a third letter gives C's (default: each file's)");
  a->batch.add_to(sub);
  a->conv.add_to(sub, true);
  sub->add_option("--plot", a->plot,
                  "write % of cuBLAS (each schedule against cuBLAS in its own mode) against "
                  "problem size as an SVG chart");
  sub->add_flag("--json", a->json, "print the table as JSON on stdout");
  sub->add_flag("--csv", a->csv, "print the table as CSV on stdout");
  sub->add_flag("--no-cache", a->no_cache, "neither read nor write the kernel cache");
  a->timing.add_to(sub);
  return {sub, [a] { return bench_command(*a); }};
}

}  // namespace schedc::cli
