#pragma once
// Device memory owned for one run, and waiting for a kernel with a time
// limit: shared by GpuSession::run (runtime/run.cpp) and run_conv
// (runtime/conv_run.cpp). Includes the CUDA runtime: runtime-internal.

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/problem.h"
#include "runtime/error.h"
#include "runtime/timing.h"

namespace schedc::runtime {

class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
    if (bytes == 0) return;
    check_cuda(
        cudaMalloc(&ptr_, bytes),
        (std::string("cudaMalloc(") + std::to_string(bytes) + " bytes for " + what + ")").c_str());
  }
  // Not after a hang: cudaFree waits for the device, which may still be
  // running the hung kernel (runtime::kernel_hung); the process ends soon.
  ~DeviceBuffer() {
    if (ptr_ && !kernel_hung()) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

  // Copies go through the session's stream and wait for it: a plain
  // cudaMemcpy from pageable memory may return before its DMA lands, and
  // would not be ordered with the stream's kernels.
  void upload(const void* src, size_t n, const char* what, cudaStream_t s) const {
    std::string call = std::string("cudaMemcpyAsync to device (") + what + ")";
    check_cuda(cudaMemcpyAsync(ptr_, src, n, cudaMemcpyHostToDevice, s), call.c_str());
    check_cuda(cudaStreamSynchronize(s), call.c_str());
  }
  void download(void* dst, size_t n, const char* what, cudaStream_t s) const {
    std::string call = std::string("cudaMemcpyAsync to host (") + what + ")";
    check_cuda(cudaMemcpyAsync(dst, ptr_, n, cudaMemcpyDeviceToHost, s), call.c_str());
    check_cuda(cudaStreamSynchronize(s), call.c_str());
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// How long one run of a kernel on `p` may take before it counts as a hang:
// 10 s (SCHEDC_HANG_SECONDS, when set to a whole number of seconds), plus the
// time at 100 GFLOP/s (a kernel slower than that is broken anyway): 11.4 s at
// 4096^3.
double seconds_allowed(const compiler::Problem& p);

// cudaStreamSynchronize that gives up after `seconds`: a kernel that
// deadlocks (a barrier never reached, setmaxnreg asking for more registers
// than the block owns) would otherwise stop schedc for good. Polls (20 us,
// then 1 ms steps), so it adds no more than a millisecond to a run. Throws
// Error(hang) naming `what` and marks the process (note_kernel_hung).
void wait_or_hang(cudaStream_t s, double seconds, const std::string& what);
// The hang's Error (after note_kernel_hung), for waits of other kinds.
[[noreturn]] void throw_hang(double seconds, const std::string& what);

// After timing on inputs that make every run write the same output (beta
// = 0): "" when `out` (downloaded into `scratch`) still holds `validated`
// byte for byte, else "the result changed between runs on the same
// inputs (a race?)".
std::string race_after_timing(const DeviceBuffer& out, const std::vector<char>& validated,
                              std::vector<char>& scratch, cudaStream_t s);

// With `flush`, a buffer of twice the L2's `l2_bytes` that `timing` then
// writes before each timed run (TimingOptions::flush_buffer); else nothing.
std::unique_ptr<DeviceBuffer> l2_flush_buffer(bool flush, size_t l2_bytes, TimingOptions& timing);

}  // namespace schedc::runtime
