// `schedc ablate FILE`: what each directive of a schedule buys. Builds the
// steps (cli/ablation.h), then compiles, validates against cuBLAS and times
// each step beside cuBLAS in one process, and prints the seed articles'
// table: step, directive(s), median time, TFLOP/s, % of cuBLAS, speed-up
// over the previous step and over the first.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/ablation.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "dsl/parse.h"
#include "report/svg_chart.h"
#include "report/text_table.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/report.h"
#include "runtime/run.h"

namespace schedc::cli {

namespace {

struct AblateArgs {
  std::string file, shape, mode = "cumulative", order, plot;
  bool json = false, csv = false, no_cache = false;
  uint64_t seed = 1;
};

struct StepResult {
  AblationStep step;
  std::string status = "-";  // ok | FAILED | ERROR | invalid | not run
  std::string detail;
  double median_ms = NAN, tflops = NAN, cublas_tflops = NAN, percent = NAN;
};

double speedup(const StepResult& now, const StepResult* before) {
  return before && std::isfinite(before->median_ms) && std::isfinite(now.median_ms)
             ? before->median_ms / now.median_ms
             : NAN;
}

// The step a row's speed-up is measured against: the previous measured step,
// and the first one (naive, or the full schedule in leave-one-out).
const StepResult* previous_ok(const std::vector<StepResult>& r, size_t i) {
  while (i-- > 0)
    if (r[i].status == "ok") return &r[i];
  return nullptr;
}

void print_table(std::ostream& os, const std::vector<StepResult>& rows, bool loo) {
  std::vector<std::vector<std::string>> cells = {
      {"step", loo ? "schedule" : "directive(s) added", "status", "median ms", "TFLOP/s",
       "% of cuBLAS", loo ? "vs full" : "vs previous", loo ? "" : "vs naive"}};
  const StepResult* first = rows.empty() || rows[0].status != "ok" ? nullptr : &rows[0];
  for (size_t i = 0; i < rows.size(); ++i) {
    const StepResult& r = rows[i];
    std::vector<std::string> c = {std::to_string(i),
                                  r.step.label,
                                  r.status,
                                  report::number("%.3f", r.median_ms),
                                  report::number("%.1f", r.tflops),
                                  report::number("%.1f", r.percent)};
    if (loo) {
      c.push_back(i == 0 ? "" : report::number("%.2fx", speedup(r, first)));
      c.push_back("");
    } else {
      c.push_back(report::number("%.2fx", speedup(r, previous_ok(rows, i))));
      c.push_back(report::number("%.2fx", speedup(r, first)));
    }
    cells.push_back(c);
  }
  // The label and status columns are text; the rest are numbers.
  os << report::aligned_table(cells, {false, true, true});
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].step.note.empty()) os << "step " << i << ": " << rows[i].step.note << "\n";
    if (!rows[i].detail.empty()) os << "step " << i << ": " << rows[i].detail << "\n";
  }
}

void print_csv(std::ostream& os, const std::vector<StepResult>& rows) {
  os << "step,label,status,median_ms,tflops,cublas_tflops,percent_of_cublas,note\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const StepResult& r = rows[i];
    auto quoted = [](std::string s) {
      std::string o = "\"";
      for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
      return o + "\"";
    };
    os << i << "," << quoted(r.step.label) << "," << r.status << ","
       << (std::isfinite(r.median_ms) ? report::number("%.6f", r.median_ms) : "") << ","
       << (std::isfinite(r.tflops) ? report::number("%.3f", r.tflops) : "") << ","
       << (std::isfinite(r.cublas_tflops) ? report::number("%.3f", r.cublas_tflops) : "") << ","
       << (std::isfinite(r.percent) ? report::number("%.2f", r.percent) : "") << ","
       << quoted(r.step.note + (r.detail.empty() ? "" : " " + r.detail)) << "\n";
  }
}

void print_json(std::ostream& os, const std::string& file, const compiler::Problem& p,
                const std::string& mode, const std::vector<StepResult>& rows) {
  using report::Json;
  using report::json_number;
  Json steps = Json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const StepResult& r = rows[i];
    steps.push_back({{"step", i},
                     {"label", r.step.label},
                     {"directives", r.step.added},
                     {"status", r.status},
                     {"median_ms", json_number(r.median_ms)},
                     {"tflops", json_number(r.tflops)},
                     {"cublas_tflops", json_number(r.cublas_tflops)},
                     {"percent_of_cublas", json_number(r.percent)},
                     {"note", r.step.note},
                     {"detail", r.detail},
                     {"schedule", r.step.schedule_text}});
  }
  Json j = {{"file", file}, {"mode", mode}, {"m", p.m},
            {"n", p.n},     {"k", p.k},     {"steps", std::move(steps)}};
  os << report::json_text(j) << "\n";
}

bool write_plot(const std::string& path, const std::string& file, const compiler::Problem& p,
                const std::vector<StepResult>& rows) {
  report::BarChart chart;
  chart.title = "schedc ablate " + file + " " + runtime::shape_string(p);
  chart.y_label = "TFLOP/s";
  std::vector<double> cublas;
  for (const StepResult& r : rows) {
    chart.labels.push_back(r.step.label);
    chart.values.push_back(r.status == "ok" ? r.tflops : NAN);
    if (std::isfinite(r.cublas_tflops)) cublas.push_back(r.cublas_tflops);
  }
  if (!cublas.empty()) {
    std::sort(cublas.begin(), cublas.end());
    chart.reference_name = "cuBLAS (median over steps)";
    chart.reference_value = cublas[cublas.size() / 2];
  }
  std::ofstream out(path);
  out << report::to_svg(chart);
  return bool(out);
}

int ablate_command(const AblateArgs& a) {
  if (a.json && a.csv) {
    std::cerr << "schedc ablate: error: choose one of --json and --csv\n";
    return kBadInput;
  }
  AblationMode mode;
  if (a.mode == "cumulative") {
    mode = AblationMode::cumulative;
  } else if (a.mode == "leave-one-out") {
    mode = AblationMode::leave_one_out;
  } else {
    std::cerr << "schedc ablate: error: --mode must be cumulative or leave-one-out, got '" << a.mode
              << "'\n";
    return kBadInput;
  }
  std::vector<int> order;
  if (!a.order.empty() && !parse_order(a.order, order)) {
    std::cerr << "schedc ablate: error: --order must be a comma-separated list of directive "
                 "numbers such as 3,1,2, got '"
              << a.order << "'\n";
    return kBadInput;
  }

  std::string why;
  std::optional<runtime::DeviceInfo> device = runtime::find_device(why);
  compiler::Target target = device ? runtime::target_for_device(*device) : compiler::Target{};

  // The whole file must be a valid schedule; its Ast gives the directives.
  std::optional<Compiled> full = check_file(a.file, target, std::cerr);
  if (!full) return kBadInput;
  dsl::Diagnostics diags(full->file.get());
  std::optional<dsl::Ast> ast = dsl::parse(*full->file, diags);
  if (!ast) {
    diags.print(std::cerr);
    return kBadInput;
  }
  compiler::Shape shape = full->schedule.shape;
  if (!a.shape.empty() && !parse_shape(a.shape, shape)) {
    std::cerr << "schedc ablate: error: --shape must be MxNxK with each at least 1, got '"
              << a.shape << "'\n";
    return kBadInput;
  }
  std::vector<AblationStep> steps;
  std::string error;
  if (!plan_ablation(*full->file, *ast, mode, order, target, steps, error)) {
    std::cerr << "schedc ablate: error: " << error << "\n";
    return kBadInput;
  }
  compiler::Problem problem{shape.m, shape.n, shape.k, 0, 0, 0, full->schedule.dtype};

  std::vector<StepResult> rows;
  for (const AblationStep& s : steps) {
    StepResult r;
    r.step = s;
    r.status = s.valid ? "not run" : "invalid";
    rows.push_back(r);
  }
  auto finish = [&](int rc) {
    if (a.json)
      print_json(std::cout, a.file, problem, a.mode, rows);
    else if (a.csv)
      print_csv(std::cout, rows);
    else
      print_table(std::cout, rows, mode == AblationMode::leave_one_out);
    if (!a.plot.empty() && !write_plot(a.plot, a.file, problem, rows)) {
      std::cerr << "schedc ablate: error: cannot write " << a.plot << "\n";
      return int(kToolchain);
    }
    return rc;
  };
  if (!device) {
    std::cerr << "schedc: no CUDA device: " << why << " (the steps below were planned and "
              << "checked; none can run here)\n";
    return finish(kToolchain);
  }

  std::string session_error;
  std::unique_ptr<runtime::GpuSession> session = runtime::start_session(*device, session_error);
  if (!session) {
    std::cerr << "schedc: error: " << session_error << "\n";
    return kToolchain;
  }
  runtime::JitOptions jit;
  jit.use_cache = !a.no_cache;
  int rc = kOk;
  // Every step generated first, then compiled side by side into the kernel
  // cache (runtime::precompile), then measured one at a time.
  std::vector<std::optional<Compiled>> generated(rows.size());
  std::vector<runtime::CompileJob> jobs;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].step.valid) continue;
    auto src = std::make_shared<dsl::SourceFile>(a.file + " (step " + std::to_string(i) + ")",
                                                 rows[i].step.schedule_text);
    generated[i] = compile_source(src, target, std::cerr);
    if (generated[i])
      jobs.push_back({&generated[i]->kernel, runtime::entries_for(generated[i]->kernel, problem)});
  }
  std::cerr << "compiling " << jobs.size() << " steps side by side ... " << std::flush;
  const double compile_ms = runtime::precompile(jobs, device->arch(), jit);
  std::cerr << report::number("%.1f", compile_ms / 1000) << " s\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    StepResult& r = rows[i];
    if (!r.step.valid) continue;
    std::cerr << "[" << i + 1 << "/" << rows.size() << "] " << r.step.label << " ... "
              << std::flush;
    std::optional<Compiled>& c = generated[i];
    if (!c) {
      r.status = "ERROR";
      r.detail = "internal error: a planned step did not compile (please report)";
      rc = std::max(rc, int(kToolchain));
      std::cerr << "ERROR\n";
      continue;
    }
    if (runtime::kernel_hung()) {  // the GPU may still be running it
      r.status = "ERROR";
      r.detail = "not run: an earlier step's kernel hung";
      rc = std::max(rc, int(kToolchain));
      std::cerr << "ERROR (not run: an earlier step hung)\n";
      continue;
    }
    try {
      std::shared_ptr<runtime::PreparedKernel> prepared =
          session->prepare(c->kernel, jit, &problem);
      runtime::RunOptions opt;
      opt.problem = problem;
      opt.epilogue = c->schedule.epilogue;
      opt.seed = a.seed;
      runtime::RunReport rep = session->run(*prepared, opt);
      r.status = rep.ok() ? "ok" : "FAILED";
      r.detail = rep.failure();
      if (rep.timed) {
        r.median_ms = rep.kernel.median_ms;
        r.tflops = runtime::tflops(problem, rep.kernel.median_ms);
        r.cublas_tflops = runtime::tflops(problem, rep.cublas.median_ms);
        r.percent = rep.percent_of_cublas();
      }
      if (!rep.ok()) {
        r.median_ms = r.tflops = r.percent = NAN;  // a wrong kernel's speed means nothing
        rc = std::max(rc, int(kWrongResult));
      }
    } catch (const runtime::Error& e) {
      r.status = "ERROR";
      r.detail = e.what();
      rc = std::max(rc, int(kToolchain));
    }
    std::cerr << r.status << "\n";
  }
  std::cerr << "device: " << device->name << " (" << device->arch() << ")\n";
  return finish(rc);
}

}  // namespace

Command add_ablate_command(CLI::App& root) {
  auto a = std::make_shared<AblateArgs>();
  CLI::App* sub = root.add_subcommand(
      "ablate",
      "Measure what each directive of a schedule buys: add them one by one from the naive "
      "kernel (cumulative), or drop each from the full schedule (leave-one-out)");
  sub->add_option("file", a->file, "the .sched file")->required();
  sub->add_option("--shape", a->shape, "MxNxK (default: the schedule's shape)");
  sub->add_option("--mode", a->mode, "cumulative (default) or leave-one-out");
  sub->add_option("--order", a->order,
                  "the directives in another order, by number as written (e.g. 3,1,2); "
                  "shape, dtype, layout and epilogue are not numbered");
  sub->add_option("--plot", a->plot, "write a bar chart of TFLOP/s per step (SVG)");
  sub->add_option("--seed", a->seed, "seed of the random inputs (default 1)");
  sub->add_flag("--json", a->json, "print the table as JSON on stdout");
  sub->add_flag("--csv", a->csv, "print the table as CSV on stdout");
  sub->add_flag("--no-cache", a->no_cache, "neither read nor write the kernel cache");
  return {sub, [a] { return ablate_command(*a); }};
}

}  // namespace schedc::cli
