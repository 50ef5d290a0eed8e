#pragma once
// The timing harness (docs/runtime.md, "Timing"): CUDA events around each
// kernel run alone, warm-up first, then repetitions until every kernel has at
// least `min_runs` runs and `min_total_ms` of kernel time; median, min and
// max per kernel. schedc's kernel and cuBLAS are timed together, their runs
// interleaved (ours, cuBLAS's, ours, ...), so that both see the same clocks
// and temperature: timed one after the other, whichever ran second met a
// card that the first had heated for 100 ms or more.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace schedc::runtime {

// Host wall-clock milliseconds since t0 (the phases a run reports).
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct TimingOptions {
  int warmup_runs = 3;
  int min_runs = 20;
  double min_total_ms = 100;
  double max_wall_s = 10;  // stop early (after min_runs) for kernels of a few microseconds
  // 0 = never. Otherwise, after the first timed round, stop when the first
  // launch took more than give_up_ratio times the fastest of the others: a
  // tuner's candidate far slower than cuBLAS is not worth a careful median.
  double give_up_ratio = 0;
  // Flush L2 before each run by writing `flush_bytes` (2x L2) at `flush_buffer`,
  // outside the timed events.
  void* flush_buffer = nullptr;
  size_t flush_bytes = 0;
  // Microseconds the stream idles between the flush and the start event (a
  // host function that waits on it): 0 by default, the start event right
  // after the flush, as Triton's do_bench times. SCHEDC_TIMING_IDLE_US=N sets
  // it, for measuring what the flush's aftermath does to both kernels
  // (bench/NOTES.md, "Session 17": hgemm_best and cuBLAS at 4096^3 take
  // ~0.19 ms after an idle gap, ~0.22 ms right after the flush).
  int idle_us = -1;  // -1: SCHEDC_TIMING_IDLE_US, else 0
  // Above 0: a timed run that takes longer than this many seconds (the
  // warm-up: this per run) is a hang, Error(hang) as in validation
  // (wait_or_hang); 0: wait for the device however long it takes.
  double hang_seconds = 0;
  // Above 0: each kernel's timed run is the replay of a CUDA graph that
  // holds `graph_runs` of its runs back to back, captured once after the
  // warm-up; the times are per run (the replay's over graph_runs). What a
  // small problem costs inside a graph, as a framework runs it, without the
  // host's launch latency on an idle stream (docs/runtime.md, "Timing").
  // The flush needs a run alone: not both (graph_timing_error).
  int graph_runs = 0;
};

struct TimingStats {
  int runs = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, total_ms = 0;
  bool gave_up = false;  // stopped after one round (TimingOptions::give_up_ratio)
  int graph_runs = 0;    // TimingOptions::graph_runs: each timed replay held this many runs
};

// "" when `options` can be honoured; else why not (a graph with an L2 flush,
// a graph_runs out of 1..1000).
std::string graph_timing_error(const TimingOptions& options);

// Each of `launches` enqueues one run of its kernel on `stream` (a
// cudaStream_t). Rounds run every kernel once, in the order given; the result
// has one entry per launch, in the same order.
std::vector<TimingStats> time_interleaved(const std::vector<std::function<void()>>& launches,
                                          void* stream, const TimingOptions& options);

}  // namespace schedc::runtime
