// The timing harness's graph mode (runtime/timing.h, TimingOptions::
// graph_runs): on the CPU, which options it refuses; on the GPU, that a
// replay's time is reported per run (a long memset costs about the same
// per run timed alone or eight to a graph), and that a launch which cannot
// be captured (it synchronizes) is an Error that leaves the stream usable;
// the command line's flags (cli/timing_flags.h), their refusals and the line
// a bench table prints about them.
#include "runtime/timing.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "cli/timing_flags.h"
#include "gpu_test_util.h"
#include "runtime/error.h"

using namespace schedc;
using runtime::TimingOptions;

namespace {

TimingOptions quick(int graph_runs) {
  TimingOptions t;
  t.warmup_runs = 1;
  t.min_runs = 5;
  t.min_total_ms = 1;
  t.graph_runs = graph_runs;
  return t;
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { runtime::check_cuda(cudaStreamCreate(&s), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
};

}  // namespace

TEST(GraphTiming, RefusesAFlushAndRunsOutsideOneToAThousand) {
  EXPECT_EQ(runtime::graph_timing_error(quick(0)), "");
  EXPECT_EQ(runtime::graph_timing_error(quick(1)), "");
  EXPECT_EQ(runtime::graph_timing_error(quick(1000)), "");
  EXPECT_NE(runtime::graph_timing_error(quick(1001)), "");
  EXPECT_NE(runtime::graph_timing_error(quick(-1)), "");
  TimingOptions flushed = quick(4);
  flushed.flush_bytes = 1 << 20;
  EXPECT_NE(runtime::graph_timing_error(flushed).find("an L2 flush needs each run alone"),
            std::string::npos);
  flushed.graph_runs = 0;
  EXPECT_EQ(runtime::graph_timing_error(flushed), "");
  // time_interleaved refuses them too, before touching the device.
  EXPECT_THROW(runtime::time_interleaved({[] {}}, nullptr, quick(1001)), std::invalid_argument);
}

TEST(GraphTiming, TheCommandLineFlagsSayWhatTheyTime) {
  cli::TimingFlags f;
  EXPECT_EQ(f.error(), "");
  EXPECT_EQ(f.describe(), "timing: each run launched alone on an idle stream");
  f.flush_l2 = true;
  EXPECT_EQ(f.describe(), "timing: each run launched alone after an L2 flush (--flush-l2)");
  f.graph_runs = 20;
  EXPECT_NE(f.error().find("choose one of --graph and --flush-l2"), std::string::npos);
  f.flush_l2 = false;
  EXPECT_EQ(f.error(), "");
  EXPECT_EQ(f.describe(),
            "timing: per run, each kernel replayed in CUDA graphs of 20 runs (--graph)");
}

TEST(GraphTiming, ReportsTimesPerRun) {
  SCHEDC_REQUIRE_GPU(session);
  Stream stream;
  const size_t bytes = size_t(256) << 20;  // ~0.1 ms of writes: launch latency a few percent
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, bytes), cudaSuccess);
  const std::vector<std::function<void()>> launches = {
      [&] { runtime::check_cuda(cudaMemsetAsync(buf, 1, bytes, stream.s), "cudaMemsetAsync"); }};
  const runtime::TimingStats alone = runtime::time_interleaved(launches, stream.s, quick(0))[0];
  const runtime::TimingStats graphed = runtime::time_interleaved(launches, stream.s, quick(8))[0];
  cudaFree(buf);
  EXPECT_EQ(alone.graph_runs, 0);
  EXPECT_EQ(graphed.graph_runs, 8);
  EXPECT_GE(graphed.runs, 5);
  ASSERT_GT(alone.median_ms, 0);
  // Per run, not per replay of eight: within a factor of 1.5 of a run alone.
  EXPECT_GT(graphed.median_ms, alone.median_ms / 1.5) << alone.median_ms;
  EXPECT_LT(graphed.median_ms, alone.median_ms * 1.5) << alone.median_ms;
}

TEST(GraphTiming, ALaunchThatCannotBeCapturedIsAnErrorAndTheStreamStaysUsable) {
  SCHEDC_REQUIRE_GPU(session);
  Stream stream;
  void* scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&scratch, 4096), cudaSuccess);
  // The second fails its capture after the first's graph was made.
  const std::vector<std::function<void()>> launches = {
      [&] { runtime::check_cuda(cudaMemsetAsync(scratch, 0, 4096, stream.s), "cudaMemsetAsync"); },
      [&] { runtime::check_cuda(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize"); }};
  EXPECT_THROW(runtime::time_interleaved(launches, stream.s, quick(4)), runtime::Error);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(stream.s, &capturing), cudaSuccess);
  EXPECT_EQ(capturing, cudaStreamCaptureStatusNone);
  cudaGetLastError();  // the failed capture's error, not sticky
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, 4096), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(buf, 0, 4096, stream.s), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  cudaFree(buf);
  cudaFree(scratch);
}
