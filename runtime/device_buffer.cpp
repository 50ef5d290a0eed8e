#include "runtime/device_buffer.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace schedc::runtime {

namespace {

// SCHEDC_HANG_SECONDS (a whole number of seconds, 1 to 86400) in place of the
// base 10 s, else 10: tools that slow every kernel down by orders of
// magnitude (compute-sanitizer's racecheck) need more.
double base_seconds() {
  const char* v = std::getenv("SCHEDC_HANG_SECONDS");
  if (!v || !*v) return 10.0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (*end == '\0' && n > 0 && n <= 86400) ? double(n) : 10.0;
}

}  // namespace

double seconds_allowed(const compiler::Problem& p) {
  return base_seconds() + p.flops() / 1e11;
}

void throw_hang(double seconds, const std::string& what) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", seconds);
  note_kernel_hung();
  throw Error(Error::Kind::hang, what + ": the kernel did not finish in " + buf +
                                     " s (a hang: a deadlock in the generated kernel is a "
                                     "schedc bug; the GPU may still be running it)");
}

void wait_or_hang(cudaStream_t s, double seconds, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) check_cuda(e, what.c_str());
    if (std::chrono::duration<double>(Clock::now() - t0).count() > seconds)
      throw_hang(seconds, what);
    if (polls < 100)
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::string race_after_timing(const DeviceBuffer& out, const std::vector<char>& validated,
                              std::vector<char>& scratch, cudaStream_t s) {
  scratch.resize(out.bytes());
  out.download(scratch.data(), scratch.size(), "the output after timing", s);
  return scratch == validated ? "" : "the result changed between runs on the same inputs (a race?)";
}

std::unique_ptr<DeviceBuffer> l2_flush_buffer(bool flush, size_t l2_bytes, TimingOptions& timing) {
  if (!flush || l2_bytes == 0) return nullptr;
  auto buffer = std::make_unique<DeviceBuffer>(2 * l2_bytes, "L2 flush");
  timing.flush_buffer = buffer->get();
  timing.flush_bytes = buffer->bytes();
  return buffer;
}

}  // namespace schedc::runtime
