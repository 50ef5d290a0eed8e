#pragma once
// The SIMT lowering passes, in the order compiler::lower runs them. Each is a
// pure function of the plan so far (which carries its Schedule and Target)
// and lives in its own file.

#include "compiler/kernel_plan.h"

namespace schedc::compiler {

// lower_tiles.cpp. Requires: plan.schedule valid. Sets kind, name, block
// threads and tile, naive block shape, and the thread -> C map.
KernelPlan lower_tiles(KernelPlan plan);

// lower_smem_layout.cpp. Requires: lower_tiles. Sets the shared layouts of A
// and B (transpose, pad, swizzle, buffers), the pipeline and smem_bytes.
KernelPlan lower_smem_layout(KernelPlan plan);

// lower_copies.cpp. Requires: lower_smem_layout. Sets the global -> shared
// copy maps (vector width plan.vec), the shared -> register fragment widths
// and the epilogue.
KernelPlan lower_copies(KernelPlan plan);

// lower_raster.cpp. Sets the grouped rasterization (`swizzle block N`) and
// whether the k loop is split across blocks (`stream_k`).
KernelPlan lower_raster(KernelPlan plan);

}  // namespace schedc::compiler
