#include "runtime/driver_api.h"

#include <cuda_runtime.h>

namespace schedc::runtime {

void* driver_entry_point(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
      q == cudaDriverEntryPointSuccess)
    return p;
  cudaGetLastError();
  return nullptr;
}

}  // namespace schedc::runtime
