// schedc tune SPACE: search a schedule space (docs/tuning.md). The static
// model ranks what analysis keeps, the first --top N are compiled on the
// host's cores and measured on --gpus (each validated against cuBLAS before
// it is timed), and every result goes to the tuning database. A space of
// convolution modules is measured on --conv's convolutions (else its own).
// --show, --csv, --plot and --merge read or merge the database instead.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/conv_options.h"
#include "cli/exit_codes.h"
#include "cli/pipeline.h"
#include "cli/timing_flags.h"
#include "cli/tune_views.h"
#include "runtime/conv_report.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/report.h"
#include "tune/database.h"
#include "tune/tuner.h"

namespace schedc::cli {

namespace {

struct TuneArgs {
  std::string file;
  std::string shapes;
  int top = 50;
  double time_limit = 0;
  int jobs = 0;
  std::string gpus = "0";
  std::string db;
  std::string arch = "sm_90";
  bool compile_only = false, no_cache = false;
  ConvOptions conv;  // a space of convolution modules: the convolutions to measure
  int graph_runs = 0;
  // Reading the database.
  bool show = false, csv = false;
  std::string plot, merge, dtype, shape;
};

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "";
}

// --gpus: "all", "none", or ordinals "0,1".
bool parse_gpus(const std::string& text, std::vector<int>& out, std::string& why) {
  if (text == "none") return true;
  if (text == "all") {
    const int n = runtime::device_count();
    for (int i = 0; i < n; ++i) out.push_back(i);
    if (n == 0) why = "--gpus all: the CUDA runtime sees no device";
    return n > 0;
  }
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v > 1023) {
      why = "bad --gpus '" + text + "' (expected all, none, or device numbers such as 0,1)";
      return false;
    }
    out.push_back(int(v));
  }
  return !out.empty();
}

// Opens the database at `path` (its folder created first), or says why not.
std::unique_ptr<tune::Database> open_database(const std::string& path) {
  if (path.empty()) {
    std::cerr << "schedc tune: error: no database: set --db, SCHEDC_TUNE_DB or HOME\n";
    return nullptr;
  }
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  try {
    return std::make_unique<tune::Database>(path);
  } catch (const std::exception& e) {
    std::cerr << "schedc tune: error: " << e.what() << "\n";
    return nullptr;
  }
}

int read_database(const TuneArgs& a, const std::string& path) {
  std::unique_ptr<tune::Database> db = open_database(path);
  if (!db) return kBadInput;
  try {
    if (!a.merge.empty()) {
      const int64_t n = db->merge(a.merge);
      std::cout << "merged " << n << " results from " << a.merge << " into " << path << "\n";
      return kOk;
    }
    tune::Filter f;
    f.dtype = a.dtype;
    if (!a.shape.empty()) {
      compiler::Shape s;
      if (!parse_shape(a.shape, s)) {
        std::cerr << "schedc tune: error: bad --shape '" << a.shape << "' (expected MxNxK)\n";
        return kBadInput;
      }
      f.m = s.m;
      f.n = s.n;
      f.k = s.k;
    }
    if (a.conv.given()) {
      compiler::Target any;
      compiler::target_for_arch("sm_90", any);
      const std::optional<std::vector<runtime::NamedConv>> convs = a.conv.parse(any, std::cerr);
      if (!convs) return kBadInput;
      if (convs->size() != 1) {
        std::cerr << "schedc tune: error: --conv with --show/--csv/--plot names one convolution, "
                     "not "
                  << convs->size() << "\n";
        return kBadInput;
      }
      f.conv = runtime::conv_string(convs->front().conv);
    }
    const std::vector<tune::Result> rows = db->list(f);
    if (a.csv) print_results_csv(std::cout, rows);
    if (a.show) print_results(std::cout, rows);
    if (!a.plot.empty()) {
      std::string title;
      const std::string svg = results_svg(rows, title);
      if (svg.empty()) {
        std::cerr << "schedc tune: error: --plot: no results in " << path << " match\n";
        return kBadInput;
      }
      std::ofstream out(a.plot);
      out << svg;
      if (!out) {
        std::cerr << "schedc tune: error: cannot write " << a.plot << "\n";
        return kToolchain;
      }
      std::cerr << "schedc tune: wrote " << a.plot << " (" << title << ")\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "schedc tune: error: " << e.what() << "\n";
    return kBadInput;
  }
  return kOk;
}

// The progress line on stderr: rewritten in place on a terminal, else a line
// at each tenth of the candidates measured (or compiled, without a GPU).
class ProgressLine {
 public:
  explicit ProgressLine(bool measuring) : tty_(isatty(2)), measuring_(measuring) {}
  void operator()(const tune::Progress& p) {
    const int done = measuring_ ? p.measured : p.compiled;
    const int step = std::max(1, p.candidates / 10);
    if (!tty_ && done != p.candidates && (done == last_ || done % step != 0)) return;
    last_ = done;
    char buf[64];
    std::ostringstream line;
    line << "[tune] compiled " << p.compiled << "/" << p.candidates;
    if (measuring_) {
      line << ", measured " << p.measured << "/" << p.candidates;
      if (p.wrong) line << " (" << p.wrong << " wrong)";
      if (p.failed) line << " (" << p.failed << " failed)";
      if (p.best) {
        std::snprintf(buf, sizeof buf, "%.1f TFLOP/s, %.1f%% of cuBLAS", p.best->tflops,
                      p.best->percent_of_cublas());
        line << ", best " << buf << " (model rank " << p.best->model_rank << ")";
      }
    }
    std::snprintf(buf, sizeof buf, ", %.0f s", p.elapsed_s);
    line << buf;
    if (tty_)
      std::cerr << "\r\033[K" << line.str() << std::flush;
    else
      std::cerr << line.str() << "\n";
  }
  void end() {
    if (tty_) std::cerr << "\n";
  }

 private:
  bool tty_, measuring_;
  int last_ = -1;
};

int tune_command(const TuneArgs& a) {
  const std::string db_path = a.db.empty() ? tune::default_database_path() : a.db;
  const bool reading = a.show || a.csv || !a.plot.empty() || !a.merge.empty();
  if (reading) {
    if (!a.file.empty()) {
      std::cerr << "schedc tune: error: --show, --csv, --plot and --merge read the database; "
                   "give no space file with them\n";
      return kBadInput;
    }
    return read_database(a, db_path);
  }
  if (a.file.empty()) {
    std::cerr << "schedc tune: error: give a search space (a .sched file with {a,b} sets), or "
                 "--show / --csv / --plot / --merge to read the database\n";
    return kBadInput;
  }
  std::string why;
  std::optional<std::string> text = read_file(a.file, why);
  if (!text) {
    std::cerr << a.file << ": error: " << why << "\n";
    return kBadInput;
  }
  std::vector<int> gpus;
  if (!a.compile_only && !parse_gpus(a.gpus, gpus, why)) {
    std::cerr << "schedc tune: error: " << why << "\n";
    return why.find("sees no device") != std::string::npos ? kToolchain : kBadInput;
  }
  // The target: the first GPU's; compiling only, --arch.
  compiler::Target target;
  std::optional<runtime::DeviceInfo> device;
  if (!gpus.empty()) {
    device = runtime::find_device(gpus[0], why);
    if (!device) {
      std::cerr << "schedc: no CUDA device: " << why
                << " (schedc tune --compile-only compiles the candidates without one)\n";
      return kToolchain;
    }
    for (int g : gpus) {
      std::optional<runtime::DeviceInfo> other = runtime::find_device(g, why);
      if (!other || other->name != device->name) {
        std::cerr << "schedc tune: error: GPU " << g << " is " << (other ? other->name : why)
                  << ", GPU " << gpus[0] << " " << device->name
                  << ": one tune spreads over GPUs of one kind\n";
        return kBadInput;
      }
    }
    target = runtime::target_for_device(*device);
  } else if (!compiler::target_for_arch(a.arch, target)) {
    std::cerr << "schedc tune: error: unknown architecture '" << a.arch << "'\n";
    return kBadInput;
  }

  tune::TuneOptions o;
  o.space_path = a.file;
  o.space_text = *text;
  o.top = a.top;
  o.time_limit_s = a.time_limit;
  o.jobs = a.jobs;
  o.gpus = gpus;
  o.jit.use_cache = !a.no_cache;
  o.host = host_name();
  if (!gpus.empty()) {
    std::unique_ptr<tune::Database> db = open_database(db_path);
    if (!db) return kBadInput;
    o.database = db_path;
  }
  std::vector<compiler::Shape> shapes;
  if (!a.shapes.empty() && !parse_shapes(a.shapes, shapes)) {
    std::cerr << "schedc tune: error: bad --shapes '" << a.shapes
              << "' (expected a comma-separated list of N or MxNxK)\n";
    return kBadInput;
  }
  if (a.conv.given()) {
    std::optional<std::vector<runtime::NamedConv>> convs = a.conv.parse(target, std::cerr);
    if (!convs) return kBadInput;
    o.convs = std::move(*convs);
  }
  TimingFlags timing;
  timing.graph_runs = a.graph_runs;
  if (const std::string why = timing.error(); !why.empty()) {
    std::cerr << "schedc tune: error: --graph: " << why << "\n";
    return kBadInput;
  }
  o.graph_runs = a.graph_runs;
  ProgressLine progress(!gpus.empty());
  o.progress = [&progress](const tune::Progress& p) { progress(p); };
  tune::TuneReport report;
  try {
    for (const compiler::Shape& s : shapes) o.shapes.push_back(compiler::Problem{s.m, s.n, s.k});
    report = tune::tune(target, o, std::cerr);
  } catch (const runtime::Error& e) {
    progress.end();
    std::cerr << "schedc: error: " << e.what() << "\n";
    return kToolchain;
  } catch (const std::exception& e) {
    progress.end();
    std::cerr << "schedc tune: error: " << e.what() << "\n";
    return kToolchain;
  }
  progress.end();
  if (report.walk.candidates == 0 || report.selected == 0) return kBadInput;

  std::cout << "# " << a.file << ": " << report.walk.candidates << " candidates, analysis keeps "
            << report.walk.kept.size() << "; the model's first " << report.selected
            << " compiled on " << report.jobs << (report.jobs == 1 ? " thread in " : " threads in ")
            << seconds(report.compile_s)
            << (gpus.empty() ? ""
                             : ", measured on " + std::to_string(gpus.size()) + " GPU(s) (" +
                                   device->name + ")")
            << "\n";
  std::vector<std::pair<std::string, int64_t>> rules(report.walk.dropped.begin(),
                                                     report.walk.dropped.end());
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& x, const auto& y) { return x.second > y.second; });
  for (const auto& [rule, n] : rules) std::cout << "#   dropped " << n << ": " << rule << "\n";
  print_tune_report(std::cout, report);
  for (const std::string& why : report.abandoned_gpus) std::cout << "# " << why << "\n";
  if (report.time_limit_reached)
    std::cout << "# --time-limit " << a.time_limit << " s reached: " << report.measured << " of "
              << report.selected << " candidates measured, the rest compiled only\n";
  if (report.measured)
    std::cout << "# measuring " << report.measured << " candidates: validation "
              << seconds(report.validate_s) << ", timing " << seconds(report.timing_s)
              << (gpus.size() > 1 ? " (summed over the GPUs)" : "") << "\n";
  std::cout << "# " << seconds(report.total_s) << " in all"
            << (o.database.empty() ? "" : "; results in " + o.database) << "\n";
  int failed = 0;
  for (const tune::Measured& m : report.results) failed += m.status == tune::Status::failed;
  if (gpus.empty()) {
    if (a.compile_only || a.gpus == "none") return failed ? kToolchain : kOk;
    std::cerr << "schedc: no CUDA device: compiled the candidates, measured none\n";
    return kToolchain;
  }
  if (!report.abandoned_gpus.empty()) return kToolchain;  // a generated kernel hung: a schedc bug
  for (size_t c = 0; c < report.shapes.size(); ++c)
    if (!report.best(c)) return kWrongResult;
  return kOk;
}

}  // namespace

Command add_tune_command(CLI::App& root) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* sub = root.add_subcommand(
      "tune",
      "Search a schedule space (a .sched file with {a,b} sets): rank what analysis keeps by the "
      "static model, compile the first --top N in parallel, validate each against cuBLAS and "
      "time it beside cuBLAS on --gpus (a space of convolutions: on --conv's convolutions, "
      "beside im2col + cuBLAS), record every result in the tuning database. --show, --csv, "
      "--plot, --merge read or merge the database (docs/tuning.md)");
  sub->add_option("file", a->file, "the search space (.sched file with {a,b} sets)");
  sub->add_option("--shapes", a->shapes,
                  "comma-separated shapes, N (= NxNxN) or MxNxK (default: the space's shape); a "
                  "GEMM space's");
  a->conv.add_to(sub, true);
  a->conv.option->description(
      "a space of convolution modules: measure each candidate on this convolution, \"NxHxWxC "
      "filter KxRxS [stride A[xB]] [pad A[xB]] [dilation A[xB]] [nhwc|nchw32]\" or "
      "resnet50[:B] (default: the space's `conv`); repeat for more. With --show/--csv/--plot: "
      "only this convolution's results");
  sub->add_option("--graph", a->graph_runs,
                  "time replays of a CUDA graph of N back-to-back runs of each kernel and "
                  "baseline, per run (bench's --graph; default: each run launched alone)");
  sub->add_option("--top", a->top, "compile and measure the model's first N candidates (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--time-limit", a->time_limit,
                  "seconds after which no further candidate starts measuring; the rest stay "
                  "compiled only (default 0: none)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--jobs", a->jobs,
                  "compile threads (default: host cores less one per GPU measuring)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--gpus", a->gpus,
                  "GPUs to measure on: all, numbers such as 0,1, or none (= --compile-only)")
      ->capture_default_str();
  sub->add_option("--db", a->db,
                  "the tuning database (default: $SCHEDC_TUNE_DB, else tune.sqlite in the "
                  "kernel cache's folder)");
  sub->add_option("--arch", a->arch, "target with --compile-only (with GPUs: the first GPU's)")
      ->capture_default_str();
  sub->add_flag("--compile-only", a->compile_only,
                "compile the candidates (filling the kernel cache), measure none; no GPU needed");
  sub->add_flag("--no-cache", a->no_cache, "neither read nor write the kernel cache");
  sub->add_flag("--show", a->show, "print the database's results, fastest first per shape");
  sub->add_flag("--csv", a->csv, "print the database's results as CSV");
  sub->add_option("--plot", a->plot,
                  "write an SVG bar chart of one shape's results in the model's order");
  sub->add_option("--merge", a->merge, "copy the results of another database file into this one");
  sub->add_option("--dtype", a->dtype, "with --show/--csv/--plot: only this dtype");
  sub->add_option("--shape", a->shape,
                  "with --show/--csv/--plot: only this MxNxK (a convolution's: its implicit GEMM)");
  return {sub, [a] { return tune_command(*a); }};
}

}  // namespace schedc::cli
