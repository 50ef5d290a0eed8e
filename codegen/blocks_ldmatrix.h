#pragma once
// Building blocks for ldmatrix (sm_75+): a warp loads 1, 2 or 4 8x8 matrices
// of 16-bit elements from shared memory; lane l gives the address of row
// l % 8 of matrix l / 8. Without .trans, lane l receives elements
// (l / 4, 2 * (l % 4) + {0, 1}) of each matrix, the layout of mma's A and
// accumulator fragments; with .trans it receives the transposed pair, the
// layout of mma's B fragment when B is stored k-major rows of n.

#include "codegen/emitter.h"

namespace schedc::codegen {

// ldmatrix_x<count>[_trans](unsigned (&r)[count], unsigned smem_addr), count 1, 2 or 4.
void emit_ldmatrix_helper(Emitter& e, int count, bool trans);

}  // namespace schedc::codegen
