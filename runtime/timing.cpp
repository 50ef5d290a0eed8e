#include "runtime/timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device_buffer.h"
#include "runtime/error.h"

namespace schedc::runtime {

namespace {

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

// The stream's idle time after each flush: options.idle_us, else
// SCHEDC_TIMING_IDLE_US (a whole number of microseconds), else none.
int idle_us(const TimingOptions& options) {
  if (options.idle_us >= 0) return options.idle_us;
  const char* v = std::getenv("SCHEDC_TIMING_IDLE_US");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (*end == '\0' && n > 0 && n <= 1000000) ? int(n) : 0;
}

// A host function on the stream: the stream waits while it waits.
void CUDART_CB wait_us(void* us) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::microseconds(*static_cast<int*>(us));
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Waits for `e` as cudaEventSynchronize does by default (spinning: the next
// run is enqueued as soon as this one ends), giving up after `seconds` (a
// hang) when that is above 0.
void wait_event(cudaEvent_t e, double seconds, const std::string& what) {
  if (seconds <= 0) {
    check_cuda(cudaEventSynchronize(e), ("cudaEventSynchronize (" + what + ")").c_str());
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t r = cudaEventQuery(e);
    if (r == cudaSuccess) return;
    if (r != cudaErrorNotReady) check_cuda(r, ("cudaEventQuery (" + what + ")").c_str());
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds)
      throw_hang(seconds, what);
  }
}

// The instantiated graphs of graph timing (TimingOptions::graph_runs), one
// per kernel, each `runs` of its launches back to back. Filled by add(), so
// that a capture that throws leaves the graphs made before it to the
// destructor.
struct Graphs {
  std::vector<cudaGraphExec_t> execs;
  Graphs() = default;
  void add(const std::function<void()>& launch, cudaStream_t stream, int runs) {
    execs.push_back(capture(launch, stream, runs));
  }
  ~Graphs() {
    for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);
  }
  Graphs(const Graphs&) = delete;
  Graphs& operator=(const Graphs&) = delete;

  // Relaxed capture: a launch may call what a global capture forbids (an
  // allocation of its first run is done in the warm-up, but not every API is
  // listed as safe); one that synchronizes fails the capture with an error.
  static cudaGraphExec_t capture(const std::function<void()>& launch, cudaStream_t stream,
                                 int runs) {
    check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed),
               "cudaStreamBeginCapture (graph timing)");
    cudaGraph_t graph = nullptr;
    try {
      for (int r = 0; r < runs; ++r) launch();
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    check_cuda(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture (graph timing)");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t r = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(r, "cudaGraphInstantiate (graph timing)");
    return exec;
  }
};

TimingStats summarize(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  TimingStats s;
  const size_t n = times.size();
  s.runs = int(n);
  if (n == 0) return s;
  s.median_ms = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  s.min_ms = times.front();
  s.max_ms = times.back();
  for (double t : times) s.total_ms += t;
  return s;
}

}  // namespace

std::string graph_timing_error(const TimingOptions& options) {
  if (options.graph_runs == 0) return "";
  if (options.graph_runs < 0 || options.graph_runs > 1000)
    return "a timing graph holds 1 to 1000 runs, not " + std::to_string(options.graph_runs);
  if (options.flush_buffer || options.flush_bytes)
    return "graph timing replays runs back to back; an L2 flush needs each run alone "
           "(graph_runs or a flush buffer, not both)";
  return "";
}

std::vector<TimingStats> time_interleaved(const std::vector<std::function<void()>>& launches,
                                          void* stream_ptr, const TimingOptions& options) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  if (const std::string why = graph_timing_error(options); !why.empty())
    throw std::invalid_argument(why);
  int idle = idle_us(options);
  auto flush = [&] {
    if (options.flush_buffer && options.flush_bytes)
      check_cuda(cudaMemsetAsync(options.flush_buffer, 0, options.flush_bytes, stream),
                 "cudaMemsetAsync (L2 flush)");
    if (idle > 0) check_cuda(cudaLaunchHostFunc(stream, wait_us, &idle), "cudaLaunchHostFunc");
  };
  for (int i = 0; i < options.warmup_runs; ++i)
    for (const auto& launch : launches) {
      flush();
      launch();
    }
  Events ev;
  const double hang = options.hang_seconds;
  check_cuda(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
  wait_event(ev.stop, hang * options.warmup_runs * double(launches.size()),
             "the warm-up runs before timing");
  // Graph timing: each timed run replays the kernel's graph (one replay of
  // each first, as a warm-up of its own); else each is one launch.
  const int per_run = std::max(1, options.graph_runs);
  std::unique_ptr<Graphs> graphs;
  if (options.graph_runs > 0) {
    graphs = std::make_unique<Graphs>();
    for (const auto& launch : launches) graphs->add(launch, stream, options.graph_runs);
    for (cudaGraphExec_t e : graphs->execs)
      check_cuda(cudaGraphLaunch(e, stream), "cudaGraphLaunch (graph timing)");
    check_cuda(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
    wait_event(ev.stop, hang * per_run * double(launches.size()), "the graphs' first replays");
  }
  auto timed_run = [&](size_t k) {
    if (graphs)
      check_cuda(cudaGraphLaunch(graphs->execs[k], stream), "cudaGraphLaunch (graph timing)");
    else
      launches[k]();
  };

  std::vector<std::vector<double>> times(launches.size());
  std::vector<double> totals(launches.size(), 0.0);
  auto wall0 = std::chrono::steady_clock::now();
  auto wall_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  };
  // Every kernel runs once per round, so all have the same number of runs.
  auto hopeless = [&] {
    if (options.give_up_ratio <= 0 || launches.size() < 2 || times[0].size() != 1) return false;
    double fastest_other = times[1][0];
    for (size_t k = 2; k < launches.size(); ++k)
      fastest_other = std::min(fastest_other, times[k][0]);
    return times[0][0] > options.give_up_ratio * fastest_other;
  };
  bool gave_up = false;
  auto more_rounds = [&] {
    if (launches.empty()) return false;
    if (hopeless()) {
      gave_up = true;
      return false;
    }
    if (int(times[0].size()) < options.min_runs) return true;
    const double least = *std::min_element(totals.begin(), totals.end());
    return least < options.min_total_ms && wall_s() < options.max_wall_s;
  };
  while (more_rounds()) {
    for (size_t k = 0; k < launches.size(); ++k) {
      flush();
      check_cuda(cudaEventRecord(ev.start, stream), "cudaEventRecord");
      timed_run(k);
      check_cuda(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
      wait_event(ev.stop, hang * per_run, "a timed run");
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
      times[k].push_back(double(ms) / per_run);
      totals[k] += ms;
    }
  }
  std::vector<TimingStats> stats;
  for (auto& t : times) {
    stats.push_back(summarize(std::move(t)));
    stats.back().gave_up = gave_up;
    stats.back().graph_runs = options.graph_runs;
  }
  return stats;
}

}  // namespace schedc::runtime
