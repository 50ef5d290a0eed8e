// Pass: shared-memory layouts of the A and B tiles (transpose, pad, XOR
// swizzle), the pipeline and its buffers (double_buffer, stages) and the
// bytes they take.
#include <algorithm>

#include "compiler/lower_passes.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {

// Largest power of two dividing x (x >= 1).
int pow2_factor(int x) {
  return x & -x;
}

SmemLayout layout_for(const KernelPlan& p, Operand op) {
  const Schedule& s = p.schedule;
  SmemLayout l;
  l.operand = op;
  l.name = op == Operand::A ? "sA" : "sB";
  // Logical tile in global orientation: A is BM x BK, B is BK x BN.
  int rows = op == Operand::A ? p.block_m : p.block_k;
  int cols = op == Operand::A ? p.block_k : p.block_n;
  l.transposed = op == Operand::A ? s.transpose_a : s.transpose_b;
  l.rows = l.transposed ? cols : rows;
  l.row_len = l.transposed ? rows : cols;
  l.pad = op == Operand::A ? s.pad_a : s.pad_b;
  l.buffers = s.double_buffer ? 2 : std::max(s.stages, 1);
  if (s.swizzle_smem) {
    // XOR whole vectors so vector accesses stay contiguous; a group of
    // mask+1 chunks spans at most the 32 banks (128 bytes of f32).
    l.swizzle = true;
    l.unit = s.vectorize;
    int chunks = l.row_len / l.unit;
    int group = std::min(pow2_factor(chunks), 32 / l.unit);
    l.mask = group - 1;
  }
  return l;
}

}  // namespace

KernelPlan lower_smem_layout(KernelPlan p) {
  if (p.kind != KernelKind::tiled) return p;
  const Schedule& s = p.schedule;
  p.pipeline = s.double_buffer ? Pipeline::double_buffer
               : s.stages > 1  ? Pipeline::cp_async
                               : Pipeline::single;
  p.stages = s.double_buffer ? 2 : std::max(s.stages, 1);
  p.smem_a = layout_for(p, Operand::A);
  p.smem_b = layout_for(p, Operand::B);
  p.smem_bytes = (p.smem_a.total_elems() + p.smem_b.total_elems()) * elem_bytes(p.dtype);
  return p;
}

}  // namespace schedc::compiler
