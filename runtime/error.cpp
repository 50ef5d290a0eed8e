#include "runtime/error.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>

#include "runtime/cuda_libs.h"

namespace schedc::runtime {

namespace {
std::atomic<bool> g_kernel_hung{false};
}  // namespace

bool kernel_hung() {
  return g_kernel_hung.load();
}
void note_kernel_hung() {
  g_kernel_hung.store(true);
}

void check_cuda(int status, const char* call) {
  if (status == cudaSuccess) return;
  auto err = static_cast<cudaError_t>(status);
  throw Error(Error::Kind::cuda, std::string(call) + " failed: " + cudaGetErrorName(err) + " (" +
                                     cudaGetErrorString(err) + ")");
}

void check_cublas(int status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  auto st = static_cast<cublasStatus_t>(status);
  throw Error(Error::Kind::cuda, std::string(call) + " failed: " + cublas().GetStatusName(st) +
                                     " (" + cublas().GetStatusString(st) + ")");
}

}  // namespace schedc::runtime
