// Pass: who moves what. The global -> shared copy map of each operand, the
// width of the shared -> register fragment reads, the epilogue's C width.
#include <algorithm>

#include "compiler/lower_passes.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {

// Largest bank multiplicity among the 4-byte shared stores of warp 0's first
// element copy (1 = conflict-free).
int store_conflict(const TileCopy& c, const SmemLayout& l) {
  int per_bank[32] = {};
  int worst = 0;
  for (int t = 0; t < 32 && t < c.threads && c.active(t, 0); ++t) {
    auto [r, col] = c.coord(t, 0);
    auto [lr, lc] = c.logical(r, col);
    worst = std::max(worst, ++per_bank[l.offset(lr, lc) % 32]);
  }
  return worst;
}

// The run (elements of a row covered by consecutive threads) of element
// copies. Whole rows (0) unless a warp's stores would put more than two words
// in one bank; then the longest power of two dividing the row with the
// fewest. Two-way conflicts are kept on purpose: on an H100 (2026-11-23,
// bench/NOTES.md "Session 4"), 256x128x16 stages 3 ran at 95.5% of cuBLAS
// with whole rows (two-way) and 93% with conflict-free strips of 8; the
// 128x256x16 tile measured the other way round (92% / 95.4%), so neither
// map wins on its own and whole rows are the simpler default. Runs stay at
// least one 32-byte sector long (`min_run` elements): without padding, the
// conflict-free run of 1 (one k across 32 rows) read 32 sectors per warp copy
// and ran at 28.8 TFLOP/s, a run of 8 (8-way store conflicts, whole sectors)
// at 41.1 (256x128x16 stages 3 without `pad A`, H100, 2026-11-23).
int copy_run(TileCopy c, const SmemLayout& l, int min_run) {
  int best = c.cols, best_conflict = store_conflict(c, l);
  if (best_conflict <= 2) return 0;
  for (int run = c.cols / 2; run >= min_run; run /= 2) {
    c.run = run;
    if (c.cols % run) continue;
    int conflict = store_conflict(c, l);
    if (conflict < best_conflict) best = run, best_conflict = conflict;
  }
  return best == c.cols ? 0 : best;
}

TileCopy copy_for(const KernelPlan& p, Operand op, const SmemLayout& l) {
  TileCopy c;
  c.operand = op;
  c.global_transposed = op == Operand::A ? p.schedule.a_col : p.schedule.b_col;
  c.rows = op == Operand::A ? p.block_m : p.block_k;
  c.cols = op == Operand::A ? p.block_k : p.block_n;
  if (c.global_transposed) std::swap(c.rows, c.cols);
  c.vec = p.vec;
  c.threads = p.block_threads;
  // cp.async cannot transpose a vector: a transposed operand is copied one
  // element per cp.async, threads walking along the k-row first, so that a
  // warp reads a few rows of global memory (few sectors) instead of 16
  // (4 copies per float4 made each warp's copy touch 16 rows: about 15
  // shared-memory wavefronts per copy on an H100, ncu, 256x128x8 stages 3,
  // 2026-11-23): 79% -> 89% of cuBLAS.
  const bool transposes = l.transposed != c.global_transposed;  // memory order != shared order
  if (p.pipeline == Pipeline::cp_async && transposes) {
    c.vec = 1;
    c.run = copy_run(c, l, 32 / elem_bytes(p.dtype));
  }
  SCHEDC_INTERNAL_ASSERT(c.cols % c.vec == 0, "a copy vector crosses a tile row");
  // Threads that do not divide the vectors (a small tile, many threads) are
  // no reason to refuse a schedule: the last iteration is guarded instead,
  // and the threads past the tile's last vector skip it.
  c.iters = (c.vectors() + c.threads - 1) / c.threads;
  // A vector along the global row stays contiguous in shared memory unless
  // the copy transposes it (the shared layout's order is not memory's);
  // padding must keep rows vector-aligned.
  bool contiguous = !transposes && l.row_stride() % c.vec == 0;
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

  // double_buffer and stages: fragments in two register slots, step kk+1
  // read while kk computes (with stages 3 on an H100, 2026-11-23: 65% -> 80%
  // of cuBLAS for 256x128x8); the slots alternate inside a k-tile, so BK must be even for
  // step 0 of the next tile to land in slot 0. Only for register tiles of
  // 128+ elements: on an H200 (2026-11-22, bench/NOTES.md "SIMT") it made
  // 256x128x8 with 16x8 threads 4% faster (86.1% -> 89.7% of cuBLAS at
  // 4096^3) but 128x128x8 with 8x8 threads 3% slower (79.5% -> 77.4%).
  p.frag_double_buffer =
      (p.pipeline == Pipeline::double_buffer || p.pipeline == Pipeline::cp_async) &&
      p.block_k % 2 == 0 && t.tm * t.tn >= 128;
  // Staggered copy issue: after the one barrier per k-step all warps stand at
  // the same step, and with every warp issuing its ~130 copy instructions at
  // step 0, both warps of a scheduler spend those cycles off the FMA pipe
  // together. With the upper half of the warps issuing at step BK/4 (warp w
  // runs on scheduler w % 4, so each scheduler gets one warp of each half),
  // one warp computes while the other copies. H100, 2026-11-23
  // (bench/NOTES.md "Session 5"): sgemm_best 22.13-22.33 -> 21.91-22.12 ms
  // at 8192^3 (+1-2%), 4096^3 within the noise. Spreading the copies over
  // several steps instead (2, 4 or 8 chunks) was slower: 0%, -6%, -12%.
  // (BK < 4 gives step 0: no stagger.)
  if (p.pipeline == Pipeline::cp_async && p.frag_double_buffer && p.block_threads % 256 == 0)
    p.copy_late_step = p.block_k / 4;
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
  // (A column-major C, `layout C col`, is stored element by element: its
  // contiguous side is m, across the rows of a thread's piece.)
  p.epilogue.vec = (p.vec == 4 && t.pn % 4 == 0 && !p.schedule.c_col) ? 4 : 1;
  p.epilogue.whole_groups = p.epilogue.vec > 1;
  return p;
}

}  // namespace schedc::compiler
