#pragma once
// What `schedc check` and `schedc explain` say about global -> shared copies
// that do not split evenly over the block's threads: there, the threads past
// the tile's last vector (or 16-byte chunk) skip the last round of copies.

#include <string>
#include <vector>

#include "compiler/kernel_plan.h"

namespace schedc::compiler {

// "thread 7" or "threads 256-1023".
std::string thread_range(int first, int last);

// One line per operand whose copy is uneven, A first, e.g.
// "A: 256 vectors of 1 element over 1024 threads: threads 256-1023 skip the copy".
// SIMT copies and the tensor cores' cp.async copies; TMA copies whole boxes
// from one thread, so a `tma` plan on sm_90 (and wgmma) has none.
std::vector<std::string> uneven_copy_notes(const KernelPlan& plan);

}  // namespace schedc::compiler
