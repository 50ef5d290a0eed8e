#include "runtime/timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

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

}  // namespace

TimingStats time_kernel(const std::function<void()>& launch, void* stream_ptr,
                        const TimingOptions& options) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  auto flush = [&] {
    if (options.flush_buffer && options.flush_bytes)
      check_cuda(cudaMemsetAsync(options.flush_buffer, 0, options.flush_bytes, stream),
                 "cudaMemsetAsync (L2 flush)");
  };
  for (int i = 0; i < options.warmup_runs; ++i) {
    flush();
    launch();
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after warm-up runs)");

  Events ev;
  std::vector<double> times;
  double total = 0;
  auto wall0 = std::chrono::steady_clock::now();
  auto wall_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  };
  while (int(times.size()) < options.min_runs ||
         (total < options.min_total_ms && wall_s() < options.max_wall_s)) {
    flush();
    check_cuda(cudaEventRecord(ev.start, stream), "cudaEventRecord");
    launch();
    check_cuda(cudaEventRecord(ev.stop, stream), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(ev.stop), "cudaEventSynchronize (timed run)");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
    times.push_back(ms);
    total += ms;
  }
  std::sort(times.begin(), times.end());
  TimingStats s;
  s.runs = int(times.size());
  size_t n = times.size();
  s.median_ms = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  s.min_ms = times.front();
  s.max_ms = times.back();
  s.total_ms = total;
  return s;
}

}  // namespace schedc::runtime
