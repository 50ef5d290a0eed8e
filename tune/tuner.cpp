#include "tune/tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cli/pipeline.h"
#include "runtime/conv_args.h"
#include "runtime/conv_report.h"
#include "runtime/conv_run.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/launch.h"
#include "runtime/report.h"
#include "runtime/run.h"

namespace schedc::tune {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// A selected candidate between the two stages.
struct Slot {
  int model_rank = 0;
  std::string choices, text;
  std::optional<cli::Compiled> compiled;
  std::string failure;  // analysis or NVRTC, when it did not compile
  double compile_ms = 0;
};

// Everything the two stages share.
class Run {
 public:
  Run(const compiler::Target& target, const TuneOptions& o, TuneReport& report)
      : target_(target), o_(o), report_(report), start_(Clock::now()) {}

  void select() {
    const int n = o_.top > 0 ? std::min<int>(o_.top, int(report_.walk.kept.size()))
                             : int(report_.walk.kept.size());
    slots_.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      const cli::SpaceCandidate& c = report_.walk.kept[size_t(i)];
      slots_[size_t(i)].model_rank = c.model_rank;
      slots_[size_t(i)].choices = c.choices;
      slots_[size_t(i)].text = report_.walk.space.candidate_text(o_.space_text, c.index);
    }
    report_.selected = n;
    report_.results.resize(size_t(n) * columns());
    progress_.candidates = n;
  }

  // Compile threads: take the next candidate, best-ranked first.
  void compile_worker() {
    for (size_t i; (i = next_.fetch_add(1)) < slots_.size();) {
      try {
        compile(i);
      } catch (
          const std::exception& e) {  // an internal error: the candidate fails, the tune goes on
        slots_[i].failure = std::string("internal error: ") + first_line(e.what());
      }
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(i);
      ++progress_.compiled;
      if (!slots_[i].failure.empty() && o_.gpus.empty()) ++progress_.failed;
      notify_locked();
      if (progress_.compiled == int(slots_.size())) {
        report_.compile_s = seconds_since(start_);
        ready_cv_.notify_all();  // every GPU thread may now find the queue empty and stop
      } else {
        ready_cv_.notify_one();
      }
    }
  }

  // One thread per GPU: measure candidates as they are compiled.
  void measure_worker(int ordinal) {
    std::string why;
    std::optional<runtime::DeviceInfo> device = runtime::find_device(ordinal, why);
    if (!device) {
      fail_worker("GPU " + std::to_string(ordinal) + ": " + why);
      return;
    }
    std::unique_ptr<Database> db;
    std::unique_ptr<runtime::GpuSession> session;
    try {
      if (!o_.database.empty()) db = std::make_unique<Database>(o_.database);
      session = std::make_unique<runtime::GpuSession>(*device);
    } catch (const std::exception& e) {
      fail_worker(e.what());
      return;
    }
    const std::string driver = runtime::driver_version();
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_cv_.wait(lock, [&] {
          return !ready_.empty() || progress_.compiled == int(slots_.size()) || !error_.empty() ||
                 report_.time_limit_reached;
        });
        if (ready_.empty() || report_.time_limit_reached) return;
        if (o_.time_limit_s > 0 && seconds_since(start_) > o_.time_limit_s) {
          report_.time_limit_reached = true;  // the rest stay compiled only
          ready_cv_.notify_all();
          return;
        }
        i = ready_.front();
        ready_.pop_front();
      }
      After after = After::go_on;
      try {
        after = measure(slots_[i], i, *device, *session);
        if (db)
          for (size_t s = 0; s < columns(); ++s)
            db->record(row(report_.results[i * columns() + s], *device, driver));
      } catch (const std::exception& e) {  // the database, or an internal error: stop this GPU
        fail_worker(e.what());
        return;
      }
      if (after == After::abandon) {
        // The kernel may still run (so the session skips its teardown,
        // runtime::kernel_hung): this GPU measures no more; the other GPUs
        // go on, and what none measures stays compiled only.
        std::lock_guard<std::mutex> lock(mutex_);
        report_.abandoned_gpus.push_back("GPU " + std::to_string(ordinal) + ": model rank " +
                                         std::to_string(slots_[i].model_rank) +
                                         " did not finish (a hang); this GPU measured no more");
        return;
      }
      if (after == After::reset) {
        // A failed launch can leave the context unusable: start a fresh one.
        session.reset();
        runtime::reset_device(ordinal);
        try {
          session = std::make_unique<runtime::GpuSession>(*device);
        } catch (const std::exception& e) {
          fail_worker(e.what());
          return;
        }
      }
    }
  }

  void finish() {
    if (!error_.empty()) throw runtime::Error(runtime::Error::Kind::cuda, error_);
    report_.total_s = seconds_since(start_);
    report_.measured = progress_.measured;
  }

 private:
  size_t columns() const { return report_.shapes.size(); }
  bool convs() const { return !report_.convs.empty(); }

  // Column `c`'s convolution as `slot`'s module computes it: in its layout
  // where the text named none.
  runtime::NamedConv conv_for(const Slot& slot, size_t c) const {
    const runtime::NamedConv& v = report_.convs[c];
    if (!slot.compiled) return v;
    return runtime::in_layout(v, compiler::layout_from_word(slot.compiled->kernel.conv)
                                     .value_or(compiler::ConvLayout::nhwc));
  }

  void compile(size_t i) {
    Slot& slot = slots_[i];
    auto t0 = Clock::now();
    auto file = std::make_shared<dsl::SourceFile>(o_.space_path, slot.text);
    std::ostringstream diags;
    slot.compiled = cli::compile_source(file, target_, diags);
    if (slot.compiled)
      compile_entries(slot);
    else
      slot.failure = "analysis: " + first_line(diags.str());
    slot.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    // Compile-only results: one per column, unmeasured.
    for (size_t c = 0; c < columns(); ++c) {
      Measured& m = report_.results[i * columns() + c];
      m = base(slot, c);
      m.status = slot.failure.empty() ? Status::ok : Status::failed;
      m.detail = slot.failure;
    }
  }

  // The entries a launch on each column needs, compiled into the kernel cache.
  void compile_entries(Slot& slot) {
    codegen::GeneratedKernel& kernel = slot.compiled->kernel;
    if (o_.edit_kernel) o_.edit_kernel(slot.model_rank, kernel);
    // Packed operands at aligned addresses, as GpuSession::run allocates
    // them; each entry compiled alone.
    std::vector<compiler::Problem> problems;
    for (size_t c = 0; c < columns(); ++c) problems.push_back(base(slot, c).shape);
    const std::vector<std::string> entries = runtime::entries_for(kernel, problems);
    try {
      for (const std::string& e : entries) runtime::jit(kernel, target_.arch_name(), o_.jit, e);
    } catch (const runtime::Error& e) {
      slot.failure = "NVRTC: " + first_line(e.what());
    }
  }

  Measured base(const Slot& slot, size_t c) const {
    Measured m;
    m.model_rank = slot.model_rank;
    m.choices = slot.choices;
    m.text = slot.text;
    m.column = c;
    m.shape = report_.shapes[c];
    m.compile_ms = slot.compile_ms;
    if (slot.compiled) {
      m.shape.dtype = slot.compiled->schedule.dtype;
      m.layout = slot.compiled->kernel.layout();
    }
    if (convs()) {
      const runtime::NamedConv v = conv_for(slot, c);
      m.conv = runtime::conv_string(v.conv);
      m.shape = runtime::conv_problem(v.conv, m.shape.dtype);
    }
    return m;
  }

  // How one candidate is timed: tune's short windows (kTuneMinRuns,
  // kTuneMinTotalMs), one warm-up (validation has launched it already).
  runtime::TimingOptions timing() const {
    runtime::TimingOptions t;
    t.give_up_ratio = kGiveUpRatio;
    t.warmup_runs = 1;
    t.min_runs = kTuneMinRuns;
    t.min_total_ms = kTuneMinTotalMs;
    t.graph_runs = o_.graph_runs;
    return t;
  }

  // Validates, then times, `slot` on column `c` into `m`: a GEMM as
  // `schedc run` does, a convolution as `schedc bench --conv` does. Returns
  // the host milliseconds of validating and of timing.
  std::pair<double, double> run_one(const Slot& slot, size_t c, runtime::GpuSession& session,
                                    const runtime::PreparedKernel& prepared, Measured& m) {
    const compiler::Schedule& schedule = slot.compiled->schedule;
    if (convs()) {
      const runtime::NamedConv v = conv_for(slot, c);
      if (const std::string why = runtime::conv_run_error(v.conv, slot.compiled->kernel.dtype,
                                                          slot.compiled->kernel.conv);
          !why.empty()) {
        m.detail = "cannot compute " + m.conv + ": " + why;
        return {0, 0};
      }
      runtime::ConvRunOptions opt;
      opt.conv = v.conv;
      opt.epilogue = schedule.epilogue;
      opt.timing = timing();
      opt.jit = o_.jit;
      const runtime::ConvReport r = session.run_conv(prepared, opt);
      record(r, m);
      m.pipeline_ms = r.ok() && r.has_baseline() ? r.explicit_pipeline.median_ms : 0;
      return {r.validate_ms, r.time_ms};
    }
    runtime::RunOptions opt;
    opt.problem = m.shape;
    opt.epilogue = schedule.epilogue;
    opt.timing = timing();
    const runtime::RunReport r = session.run(prepared, opt);
    record(r, m);
    return {r.validate_ms, r.time_ms};
  }

  // A run's verdict and figures into `m`; a wrong kernel has no speed.
  static void record(const runtime::RunReport& r, Measured& m) {
    m.status = r.ok() ? Status::ok : Status::wrong;
    m.detail = r.ok() ? "" : r.failure();
    if (r.ok() && r.kernel.gave_up)
      m.detail = "timed once: over " + std::to_string(int(kGiveUpRatio)) + "x cuBLAS's time";
    m.median_ms = r.kernel.median_ms;
    m.cublas_ms = r.ok() && r.has_baseline() ? r.cublas.median_ms : 0;
    m.tflops = r.kernel.median_ms > 0 ? m.shape.flops() / (r.kernel.median_ms * 1e9) : 0;
    if (!r.ok()) m.median_ms = m.tflops = 0;
  }

  // What a GPU's session needs after a candidate.
  enum class After { go_on, reset, abandon };

  // Validates, then times, slot `i` on every shape. A CUDA error asks for a
  // fresh session; a hang (the kernel still running) for none on this GPU.
  After measure(const Slot& slot, size_t i, const runtime::DeviceInfo& device,
                runtime::GpuSession& session) {
    bool reset = false, hung = false;
    double validate_ms = 0, timing_ms = 0;
    std::shared_ptr<runtime::PreparedKernel> prepared;
    std::string failure = slot.failure;
    if (failure.empty()) {
      try {
        prepared = session.prepare(slot.compiled->kernel, o_.jit);
      } catch (const runtime::Error& e) {
        failure = first_line(e.what());
        reset = e.kind() == runtime::Error::Kind::cuda;
      }
    }
    for (size_t c = 0; c < columns(); ++c) {
      Measured m = base(slot, c);
      m.gpu = device.ordinal;
      m.measured = true;
      if (!failure.empty() || reset || hung) {
        m.detail = !failure.empty() ? failure
                   : hung           ? "not run: it hung on an earlier shape"
                                    : "not run: an earlier CUDA error on this candidate";
      } else {
        try {
          const auto [v_ms, t_ms] = run_one(slot, c, session, *prepared, m);
          validate_ms += v_ms;
          timing_ms += t_ms;
        } catch (const runtime::Error& e) {
          m.status = Status::failed;
          m.median_ms = m.cublas_ms = m.pipeline_ms = m.tflops = 0;
          m.detail = first_line(e.what());
          reset = reset || e.kind() == runtime::Error::Kind::cuda;
          hung = hung || e.kind() == runtime::Error::Kind::hang;
        }
      }
      report_.results[i * columns() + c] = m;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ++progress_.measured;
    report_.validate_s += validate_ms / 1000;
    report_.timing_s += timing_ms / 1000;
    const Measured& first = report_.results[i * columns()];
    if (first.status == Status::wrong) ++progress_.wrong;
    if (first.status == Status::failed) ++progress_.failed;
    if (first.status == Status::ok &&
        (!progress_.best || first.median_ms < progress_.best->median_ms))
      progress_.best = first;
    notify_locked();
    return hung ? After::abandon : reset ? After::reset : After::go_on;
  }

  Result row(const Measured& m, const runtime::DeviceInfo& device, const std::string& driver) {
    Result r;
    r.key = Key{device.name, driver,    compiler::dtype_name(m.shape.dtype),
                m.layout,    m.shape.m, m.shape.n,
                m.shape.k,   m.conv};
    r.schedule = m.text;
    r.space = o_.space_path;
    r.choices = m.choices;
    r.status = m.status;
    r.detail = m.detail;
    r.model_rank = m.model_rank;
    r.median_ms = m.median_ms;
    r.cublas_ms = m.cublas_ms;
    r.pipeline_ms = m.pipeline_ms;
    r.tflops = m.tflops;
    r.host = o_.host;
    return r;
  }

  void fail_worker(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.empty()) error_ = why;
    ready_cv_.notify_all();
  }

  void notify_locked() {
    if (!o_.progress) return;
    progress_.elapsed_s = seconds_since(start_);
    o_.progress(progress_);
  }

  const compiler::Target& target_;
  const TuneOptions& o_;
  TuneReport& report_;
  Clock::time_point start_;
  std::vector<Slot> slots_;
  std::atomic<size_t> next_{0};
  std::mutex mutex_;  // guards ready_, progress_, error_ and the progress callback
  std::condition_variable ready_cv_;
  std::deque<size_t> ready_;
  Progress progress_;
  std::string error_;
};

}  // namespace

double spearman(const std::vector<int>& a, const std::vector<int>& b) {
  const double n = double(a.size());
  if (a.size() != b.size() || a.size() < 2) return 0;
  double d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += double(a[i] - b[i]) * double(a[i] - b[i]);
  return 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
}

std::optional<Measured> TuneReport::best(size_t column) const {
  std::optional<Measured> out;
  for (const Measured& m : results)
    if (m.measured && m.status == Status::ok && m.column == column &&
        (!out || m.median_ms < out->median_ms))
      out = m;
  return out;
}

std::optional<double> TuneReport::rank_correlation(size_t column) const {
  std::vector<const Measured*> ok;
  for (const Measured& m : results)
    if (m.measured && m.status == Status::ok && m.column == column) ok.push_back(&m);
  if (ok.size() < 3) return std::nullopt;
  // Ranks 1..n among these: the model's (by its rank), the measured (by time).
  std::vector<const Measured*> by_model = ok, by_time = ok;
  std::sort(by_model.begin(), by_model.end(),
            [](const Measured* x, const Measured* y) { return x->model_rank < y->model_rank; });
  std::stable_sort(by_time.begin(), by_time.end(), [](const Measured* x, const Measured* y) {
    return x->median_ms < y->median_ms;
  });
  std::vector<int> model_rank(ok.size()), time_rank(ok.size());
  for (size_t i = 0; i < ok.size(); ++i) {
    const size_t at = size_t(std::find(ok.begin(), ok.end(), by_model[i]) - ok.begin());
    model_rank[at] = int(i) + 1;
    const size_t at_t = size_t(std::find(ok.begin(), ok.end(), by_time[i]) - ok.begin());
    time_rank[at_t] = int(i) + 1;
  }
  return spearman(model_rank, time_rank);
}

std::string TuneReport::column_name(size_t column) const {
  if (column < convs.size())
    return convs[column].name.empty() ? runtime::conv_string(convs[column].conv)
                                      : convs[column].name;
  return column < shapes.size() ? runtime::shape_string(shapes[column]) : "";
}

TuneReport tune(const compiler::Target& target, const TuneOptions& options, std::ostream& err) {
  TuneReport report;
  std::optional<cli::SpaceWalk> walk =
      cli::walk_space(options.space_path, options.space_text, target, err);
  if (!walk) {
    err << options.space_path
        << ": error: this file holds no {a,b} set: there is nothing to search (schedc run "
           "measures one schedule; docs/tuning.md says how to write a space)\n";
    return report;
  }
  report.walk = std::move(*walk);
  if (report.walk.candidates == 0) return report;
  if (report.walk.kept.empty()) {
    err << options.space_path << ": error: analysis drops every one of the "
        << report.walk.candidates << " candidates (schedc check " << options.space_path
        << " says why)\n";
    return report;
  }
  TuneOptions o = options;
  // The model's best candidate: its `shape` is the default problem (the
  // space's, unless a set varies it).
  std::ostringstream quiet;
  auto file = std::make_shared<dsl::SourceFile>(
      o.space_path, report.walk.space.candidate_text(o.space_text, report.walk.kept[0].index));
  const std::optional<cli::Compiled> best = cli::check_source(file, target, quiet);
  // A space of convolution modules is measured on convolutions, a GEMM
  // space on shapes: the other kind of column is refused once, here.
  const bool conv_space = best && best->schedule.conv;
  if (conv_space && !o.shapes.empty()) {
    err << options.space_path
        << ": error: this space's candidates are convolutions ('conv'): give them convolutions "
           "(--conv SPEC), not shapes; each convolution's implicit GEMM is its shape\n";
    return report;
  }
  if (!conv_space && !o.convs.empty()) {
    err << options.space_path
        << ": error: --conv: this space's candidates compute GEMMs (no 'conv' directive); only a "
           "space of convolution modules takes convolutions\n";
    return report;
  }
  if (conv_space) {
    if (o.convs.empty()) o.convs.push_back({"", *best->schedule.conv});
    report.convs = o.convs;
    for (const runtime::NamedConv& v : o.convs)
      report.shapes.push_back(runtime::conv_problem(v.conv, best->schedule.dtype));
  } else {
    if (o.shapes.empty()) {
      const compiler::Shape s = best ? best->schedule.shape : compiler::Shape{};
      o.shapes.push_back(compiler::Problem{s.m, s.n, s.k});
    }
    report.shapes = o.shapes;
  }
  Run run(target, o, report);
  run.select();
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  int jobs = o.jobs > 0 ? o.jobs : std::max(1, cores - int(o.gpus.size()));
  jobs = std::min(jobs, report.selected);
  report.jobs = jobs;
  runtime::nvrtc_version();  // opens NVRTC (or throws) before the threads start
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back([&] { run.compile_worker(); });
  for (int g : o.gpus) threads.emplace_back([&run, g] { run.measure_worker(g); });
  for (std::thread& t : threads) t.join();
  run.finish();
  return report;
}

}  // namespace schedc::tune
