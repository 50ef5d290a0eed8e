#pragma once
// codegen::emit_cuda: KernelPlan -> CUDA C++ source and launch metadata.
// A printer of the plan's decisions, built from the named blocks in
// codegen/blocks_*.h; it decides nothing the plan has not decided.

#include "codegen/generated_kernel.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

GeneratedKernel emit_cuda(const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
