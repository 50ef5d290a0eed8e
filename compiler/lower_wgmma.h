#pragma once
// The Hopper lowering (`wgmma …`): called by compiler::lower when the
// schedule uses wgmma. Fills the common KernelPlan fields and plan.wgmma.
// Requires: s.mma->api == wgmma and analyze accepted s for t (sm_90).

#include "compiler/kernel_plan.h"

namespace schedc::compiler {

KernelPlan lower_wgmma(const Schedule& s, const Target& t);

// The stream_k tail entry of a wgmma plan with stream_k: one slice of one
// tile per block, so not persistent and, under pingpong, one consumer.
KernelPlan lower_wgmma_stream_k_tail(const KernelPlan& main);

// The repack kernel of a wgmma module copies an operand whose pointer or
// leading dimension TMA cannot take into a scratch matrix whose rows start
// every wgmma_repack_ld(cols) elements (16-byte multiples).
inline long long wgmma_repack_ld(long long cols, int elem_bytes) {
  const long long per16 = 16 / elem_bytes;
  return (cols + per16 - 1) / per16 * per16;
}

}  // namespace schedc::compiler
