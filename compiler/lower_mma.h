#pragma once
// The tensor-core lowering (`wmma …` / `mma …`): called by compiler::lower
// when the schedule uses tensor cores. Fills the common KernelPlan fields and
// plan.mma. Requires: s.mma is set and analyze accepted s for t.

#include "compiler/kernel_plan.h"

namespace schedc::compiler {

KernelPlan lower_mma(const Schedule& s, const Target& t);

}  // namespace schedc::compiler
