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
// every wgmma_repack_ld(cols) elements: whole 128-byte lines. TMA takes any
// 16-byte multiple, but a box row that starts off a 128-byte line costs
// another line: tf32_best at 4096^3 took 0.655 ms with lda = ldb = 4100
// (16400-byte rows) against 0.42 with 4096, and at 4095x4097x1023 a B
// repacked to ldb 4128 ran 2-7 µs faster than to 4100 (H100, session 21).
inline long long wgmma_repack_ld(long long cols, int elem_bytes) {
  const long long per_line = 128 / elem_bytes;
  return (cols + per_line - 1) / per_line * per_line;
}

}  // namespace schedc::compiler
