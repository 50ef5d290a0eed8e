#pragma once
// One launch of a loaded entry of a module (runtime/launch.h, Module).
// Launched through the driver: cuLaunchKernelEx on the entry's function in
// the current context, which an H100 enqueues in 0.3-0.6 µs less host time
// than the runtime's cudaLaunchKernelExC on the context-free cudaKernel_t
// (bench/NOTES.md, session 29); at batch 1 a convolution's whole time is a
// few launches' worth.

#include <string>

#include "codegen/generated_kernel.h"

namespace schedc::runtime {

// A loaded entry: its kernel (cudaKernel_t: occupancy queries, attributes,
// messages) and its function in the context it launches in (CUfunction).
struct LaunchableEntry {
  void* kernel = nullptr;
  void* function = nullptr;
};

// The function of `kernel` in the current context, its dynamic shared memory
// limit raised to `dynamic_smem` bytes where that is above 48 KB. Throws
// Error(cuda) naming `name`.
void* function_in_current_context(void* kernel, const std::string& name, uint32_t dynamic_smem);
// The current context (CUcontext): the current device's primary context made
// current first where the thread has none (as the runtime's calls do).
void* current_context();

// Launches `entry` (named `name` in messages) on `grid` x e.block threads
// with e.dynamic_smem bytes, `params` its arguments, on `stream`. With
// `early`, programmatic dependent launch (sm_90): the kernel may start before
// the previous one on the stream ends, once all of that one's blocks have
// started (the previous kernel allows it with griddepcontrol.launch_dependents).
// With `cluster_x` x `cluster_y` > 1, thread-block clusters of that many
// blocks (split_k's slices along x, a pair's two tiles along y; grid.x and
// grid.y multiples of them). Throws Error(cuda) naming the kernel, grid,
// block, cluster, shared memory and the kernel's registers.
void launch_kernel(const LaunchableEntry& entry, const std::string& name, codegen::Dim3 grid,
                   const codegen::KernelEntry& e, void** params, void* stream, bool early,
                   uint32_t cluster_x = 1, uint32_t cluster_y = 1);

// Whether a grid that waits for the one ahead of it (KernelEntry::
// dependent_launch, the explicit pipeline's im2col) is launched early, as a
// programmatic dependent launch, on a device of compute capability
// `cc_major`: from 9 on, unless SCHEDC_DEPENDENT_LAUNCH=0, which launches
// every grid after the one ahead has finished, for measuring what the early
// start buys (docs/runtime.md). The variable is read once.
bool launch_early(int cc_major);

}  // namespace schedc::runtime
