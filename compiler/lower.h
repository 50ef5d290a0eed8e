#pragma once
// compiler::lower: a valid Schedule -> KernelPlan, every decision concrete.
// Requires: `s` came from analyze for `t`. Guarantees: verify(plan) holds.
// The plan does not depend on M, N, K: one kernel serves every shape.

#include "compiler/kernel_plan.h"
#include "compiler/schedule.h"
#include "compiler/target.h"

namespace schedc::compiler {

KernelPlan lower(const Schedule& s, const Target& t);

// The vector-width-1 twin of a vectorized SIMT plan: same tiles and shared
// layouts, scalar global loads and C stores, so it is correct for any
// pointer alignment and leading dimension. Requires plan.needs_fallback().
KernelPlan lower_fallback(const KernelPlan& plan);

}  // namespace schedc::compiler
