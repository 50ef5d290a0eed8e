#pragma once
// The timing harness (docs/runtime.md, "Timing"): CUDA events around the
// kernel alone, warm-up first, then repetitions until at least `min_runs`
// runs and `min_total_ms` of kernel time; median, min and max. schedc's
// kernel and cuBLAS go through this same function in the same process.

#include <functional>

namespace schedc::runtime {

struct TimingOptions {
  int warmup_runs = 3;
  int min_runs = 20;
  double min_total_ms = 100;
  double max_wall_s = 10;  // stop early (after min_runs) for kernels of a few microseconds
  // Flush L2 before each run by writing `flush_bytes` (2x L2) at `flush_buffer`,
  // outside the timed events.
  void* flush_buffer = nullptr;
  size_t flush_bytes = 0;
};

struct TimingStats {
  int runs = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, total_ms = 0;
};

// `launch` enqueues one run on `stream` (a cudaStream_t).
TimingStats time_kernel(const std::function<void()>& launch, void* stream,
                        const TimingOptions& options);

}  // namespace schedc::runtime
