#pragma once
// The CUDA driver's functions that schedc calls directly (tensor map
// encoding, launching a loaded kernel), found through the CUDA runtime
// (cudaGetDriverEntryPointByVersion): schedc never links libcuda.

#include <string>

#include "runtime/error.h"

namespace schedc::runtime {

// The driver's entry point `name` as of CUDA 12.0, or null when the driver
// has none.
void* driver_entry_point(const char* name);

// driver_entry_point(name) as an `Fn`; throws Error(cuda) when the driver has
// none, saying what needs it. Callers keep the result in a function-local
// static: the lookup runs once.
template <typename Fn>
Fn driver_function(const char* name, const char* needed_by) {
  if (void* p = driver_entry_point(name)) return reinterpret_cast<Fn>(p);
  throw Error(Error::Kind::cuda,
              std::string("the CUDA driver has no ") + name + " (" + needed_by + ")");
}

}  // namespace schedc::runtime
