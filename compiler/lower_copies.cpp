// Pass: who moves what. The global -> shared copy map of each operand, the
// width of the shared -> register fragment reads, the epilogue's C width.
#include "compiler/lower_passes.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {

TileCopy copy_for(const KernelPlan& p, Operand op, const SmemLayout& l) {
  TileCopy c;
  c.operand = op;
  c.rows = op == Operand::A ? p.block_m : p.block_k;
  c.cols = op == Operand::A ? p.block_k : p.block_n;
  c.vec = p.vec;
  c.threads = p.block_threads;
  int vecs = c.rows * c.cols / c.vec;
  SCHEDC_INTERNAL_ASSERT(c.cols % c.vec == 0 && vecs % c.threads == 0,
                         "tile copy is not a whole number of vector steps per thread");
  c.iters = vecs / c.threads;
  // A vector along the global row stays contiguous in shared memory unless
  // the layout transposes it; padding must keep rows vector-aligned.
  bool contiguous = !l.transposed && l.row_stride() % c.vec == 0;
  c.smem_vec = contiguous ? c.vec : 1;
  return c;
}

}  // namespace

KernelPlan lower_copies(KernelPlan p) {
  if (p.kind == KernelKind::naive) return p;
  p.copy_a = copy_for(p, Operand::A, p.smem_a);
  p.copy_b = copy_for(p, Operand::B, p.smem_b);

  // Fragments: a piece of A is contiguous in shared memory only when A is
  // k-major (transposed); a piece of B only when B is not transposed.
  int v = p.schedule.vectorize;
  const ThreadMap& t = p.threads;
  p.frag.vec_a =
      (v > 1 && p.smem_a.transposed && t.pm % v == 0 && p.smem_a.row_stride() % v == 0) ? v : 1;
  p.frag.vec_b =
      (v > 1 && !p.smem_b.transposed && t.pn % v == 0 && p.smem_b.row_stride() % v == 0) ? v : 1;

  // Double buffer: fragments in two register slots, step kk+1 read while kk
  // computes; the slots alternate inside a k-tile, so BK must be even for
  // step 0 of the next tile to land in slot 0. Only for register tiles of
  // 128+ elements: on an H200 (2026-11-22, bench/NOTES.md "SIMT") it made
  // 256x128x8 with 16x8 threads 4% faster (86.1% -> 89.7% of cuBLAS at
  // 4096^3) but 128x128x8 with 8x8 threads 3% slower (79.5% -> 77.4%).
  p.frag_double_buffer =
      p.pipeline == Pipeline::double_buffer && p.block_k % 2 == 0 && t.tm * t.tn >= 128;
  // FMA order: the outer loop runs over the shorter side of the register
  // tile (rows on a tie). Measured on an H100 (2026-11-22, bench/NOTES.md
  // "Session 2"): 256x128x16 with 16x8 threads 89.8% -> 92.1% of cuBLAS
  // at 4096^3 with columns outer; 128x256x16 with 8x16 threads 92.4% ->
  // 88.7% with columns outer, 93.3% with rows outer and a serpentine walk of
  // the columns, which the 16x8 tile did not like (92.1% -> 87.9%): so the
  // serpentine only with rows outer, on wide tiles.
  p.fma.order = t.tn < t.tm ? FmaOrder::cols_outer : FmaOrder::rows_outer;
  p.fma.serpentine = p.fma.order == FmaOrder::rows_outer && t.tn > t.tm;
  // store_c4 is the one vector store: float4 rows of a piece.
  p.epilogue.vec = (p.vec == 4 && t.pn % 4 == 0) ? 4 : 1;
  return p;
}

}  // namespace schedc::compiler
