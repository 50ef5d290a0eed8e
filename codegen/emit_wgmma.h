#pragma once
// The Hopper code generator: called by codegen::emit_cuda when plan.wgmma is
// set (KernelKind::wgmma).

#include "codegen/generated_kernel.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

GeneratedKernel emit_wgmma(const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
