#pragma once
// The tensor-core part of a KernelPlan (`wmma …` / `mma …`): fragment shapes,
// per-warp fragment counts, ldmatrix use, cp.async pipeline. Owned by the
// tensor-core lowering (compiler/lower_mma.cpp).

namespace schedc::compiler {

struct MmaPlan {
  // Filled in by the tensor-core lowering.
};

}  // namespace schedc::compiler
