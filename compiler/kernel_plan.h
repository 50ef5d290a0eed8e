#pragma once
// KernelPlan: every decision of a schedule made concrete, as plain data.
// compiler::lower makes it, codegen prints it, tests walk it on the CPU.
// (First version: the SIMT lowering extends this; the tensor-core lowering
// owns MmaPlan.)

#include <optional>

#include "compiler/mma_plan.h"
#include "compiler/schedule.h"
#include "compiler/target.h"

namespace schedc::compiler {

struct KernelPlan {
  Schedule schedule;  // what produced this plan (for comments and spans)
  Target target;
  DType dtype = DType::f32;

  int block_threads = 0;       // threads per block
  int block_m = 1, block_n = 1, block_k = 1;  // C tile per block, K step
  int smem_bytes = 0;          // shared memory per block
  int swizzle_group = 1;       // grouped rasterization

  std::optional<MmaPlan> mma;  // tensor-core path
};

// Checks the plan's invariants; throws dsl::InternalError on a violation.
void verify(const KernelPlan& plan);

}  // namespace schedc::compiler
