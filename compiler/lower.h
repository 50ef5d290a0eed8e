#pragma once
// compiler::lower: a valid Schedule -> KernelPlan, every decision concrete.
// Requires: `s` came from analyze for `t`. Guarantees: verify(plan) holds.
// The plan does not depend on M, N, K: one kernel serves every shape.

#include <string>

#include "compiler/kernel_plan.h"
#include "compiler/schedule.h"
#include "compiler/target.h"

namespace schedc::compiler {

KernelPlan lower(const Schedule& s, const Target& t);

// The alignment-checked twin of a vectorized SIMT plan: the same plan (tiles,
// copy maps, shared layouts, fragments, pipeline), but each operand's global
// loads and C's stores use vectors only when that operand's pointer and
// leading dimension allow it at run time, element by element otherwise, so
// it is correct for any alignment. Requires plan.needs_fallback().
KernelPlan lower_fallback(const KernelPlan& plan);

// The stream_k tail entry of a stream_k plan (its main entry's or its
// fallback's): the same kernel, computing k-tile ranges of tiles instead of
// whole tiles; named stream_k_tail_name(plan.name).
KernelPlan lower_stream_k_tail(const KernelPlan& plan);

// The name of the stream_k tail entry of entry `entry_name`.
inline std::string stream_k_tail_name(const std::string& entry_name) {
  return entry_name + "_stream_k";
}

}  // namespace schedc::compiler
