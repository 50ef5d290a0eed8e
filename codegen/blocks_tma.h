#pragma once
// Building blocks for TMA copies (`tma`, sm_90+): the tensor-map argument
// type, mbarrier init / expect-tx / parity wait / arrive, and the 2-D
// cp.async.bulk.tensor load that completes on an mbarrier.

#include "codegen/emitter.h"

namespace schedc::codegen {

// Device helpers: TmaMap (a CUtensorMap's 128 bytes, passed as a
// __grid_constant__ argument), mbar_init, mbar_init_fence, mbar_expect_tx,
// mbar_wait (spin on a phase parity), mbar_arrive, tma_load_2d (`batched`:
// from the block's GEMM, tma_coords).
void emit_tma_helpers(Emitter& e, bool batched);

// How a TMA instruction names its box: a 2-D box at {col, row} of a 2-D map,
// or in a batched module (`batch N`) at {col, row, z} of a 3-D map whose
// third dimension is the batch (codegen/generated_kernel.h): the helpers
// then take the GEMM z as their last parameter (codegen/blocks_common.h,
// tma_gemm_arg). `first` is the asm operand number of col, `z` that of z
// (the input after the others).
struct TmaCoords {
  std::string dims;       // "2d" / "3d": the instruction's .dim
  std::string list;       // "{%3, %4}" / "{%3, %4, %5}"
  std::string z_param;    // "" / ", int z": appended to the helper's parameters
  std::string z_operand;  // "" / `, "r"(z)`: appended to the inputs
};
TmaCoords tma_coords(bool batched, int first, int z);

}  // namespace schedc::codegen
