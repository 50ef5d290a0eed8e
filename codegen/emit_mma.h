#pragma once
// The tensor-core code generator: called by codegen::emit_cuda when
// plan.mma is set.

#include "codegen/generated_kernel.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

GeneratedKernel emit_mma(const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
