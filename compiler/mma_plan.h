#pragma once
// The tensor-core part of a KernelPlan (`wmma …` / `mma …`): fragment shapes,
// per-warp fragment counts, shared layouts (padded or XOR-swizzled), the
// global->shared copy maps and the cp.async pipeline depth. Owned by the
// tensor-core lowering (compiler/lower_mma.cpp).
//
// Every map here is a plain function of (thread, iteration) so that unit
// tests walk it on the CPU and codegen prints the same arithmetic.

#include "compiler/schedule.h"

namespace schedc::compiler {

// One operand's tile in shared memory, one pipeline stage of it.
// Each operand is kept as it lies in global memory, its contiguous side
// along the stage's rows: a row-major A as BM x BK (k contiguous), a
// column-major A (`layout A col`) as BK x BM (m contiguous); a row-major B as
// BK x BN (n contiguous), a column-major B as BN x BK (k contiguous). A
// 16-byte cp.async then copies 16 contiguous global bytes to 16 contiguous
// shared bytes. `rows` and `cols` are the stage's, not the operand's.
//
// Swizzled layout (`swizzle smem`): the tile is cut in 16-byte chunks and
// 128-byte lines (8 chunks, all 32 banks). Chunk `c` of row `r` is at linear
// chunk L = r * chunks_per_row + c; inside its line, its slot is XORed with a
// key taken from the row:
//     slot' = (L % 8) ^ ((key_row(r) << xor_shift) % 8)
//     key_row(r) = r / rows_per_line   (rows_per_line = max(1, 8 / chunks_per_row))
// The XOR stays inside one line, so the layout is a bijection and every
// 16-byte chunk stays 16-byte aligned (cp.async and ldmatrix need that).
//
// Panels (`tma`): an operand whose stage rows are longer than 128 bytes (a
// row-major B, a column-major A) is stored as column panels of panel_cols
// elements (128 bytes), each a rows x panel_cols tile of its own, swizzled as
// above with 8 chunks per row (key = row % 8). That is the layout a TMA box
// with the 128-byte swizzle writes (16-byte chunk index ^= 128-byte line
// index % 8).
struct SmemTile {
  int rows = 0, cols = 0;  // logical tile (elements)
  int panel_cols = 0;      // > 0: stored as column panels this wide
  int row_stride = 0;      // elements between rows (cols + pad)
  int elem_bytes = 2;
  bool swizzled = false;
  int xor_shift = 0;     // 0 for ldmatrix operands; 1 for 4-byte tf32 B loads
  int stage_bytes = 0;   // one stage of this operand
  int offset_bytes = 0;  // stage 0 from the start of dynamic shared memory

  int chunk_elems() const { return 16 / elem_bytes; }
  int stored_cols() const { return panel_cols > 0 ? panel_cols : cols; }
  // 16-byte chunks per stored row: a panel's row with panels, else the tile's.
  int chunks_per_row() const { return stored_cols() / chunk_elems(); }
  int rows_per_line() const {
    int r = 8 / chunks_per_row();
    return r < 1 ? 1 : r;
  }
  // Element offset of logical (row, col) inside one stage.
  int offset(int row, int col) const {
    if (panel_cols > 0)
      return (col / panel_cols) * rows * panel_cols + swizzled_offset(row, col % panel_cols);
    if (!swizzled) return row * row_stride + col;
    return swizzled_offset(row, col);
  }
  // Inside one panel (or the whole tile without panels), swizzled.
  int swizzled_offset(int row, int col) const {
    int v = chunk_elems();
    int linear = row * chunks_per_row() + col / v;
    int key = ((row / rows_per_line()) << xor_shift) & 7;
    int slot = (linear & ~7) | ((linear & 7) ^ key);
    return slot * v + col % v;
  }
};

// A global->shared copy of one operand tile in 16-byte chunks: chunk
// `tid + i * threads` (i < iters) of the tile, row-major over chunks; chunks
// past `chunks` are skipped (guard) when threads do not divide them.
struct CopyMap {
  int threads = 0;
  int chunk_elems = 8;  // elements per 16-byte chunk
  int chunks_per_row = 0;
  int chunks = 0;  // in the tile
  int iters = 0;   // ceil(chunks / threads)

  bool needs_guard() const { return chunks % threads != 0; }
  // Returns false when this (thread, iteration) has no chunk.
  bool chunk(int tid, int iter, int& row, int& col) const {
    int idx = tid + iter * threads;
    if (idx >= chunks) return false;
    row = idx / chunks_per_row;
    col = (idx % chunks_per_row) * chunk_elems;
    return true;
  }
};

struct MmaPlan {
  MmaApi api = MmaApi::mma_sync;
  MmaType type = MmaType::f16;
  Tf32Rounding tf32_rounding = Tf32Rounding::nearest;  // tf32 only
  int inst_m = 16, inst_n = 8, inst_k = 16;            // one instruction
  // `mma s8 m8n8k16`: inst_* stay m16n8k32 (fragments, k-steps, ldmatrix), and
  // each such step is four mma.sync m8n8k16 on its registers (codegen/blocks_mma)
  bool s8_m8n8k16 = false;
  int min_sm = 80;  // cp.async, tf32, bf16, m16n8k16; 90 with tma

  int warp_m = 64, warp_n = 64;  // C tile of one warp
  int warps_m = 1, warps_n = 1;  // warps across the block tile
  int frags_m = 1, frags_n = 1;  // instructions per warp tile (m, n)
  int k_steps = 1;               // instructions along BK

  int stages = 1;  // shared buffers; >= 2: cp.async pipeline
  // `tma` on sm_90+: the copies are TMA boxes (a stage of 128-byte rows is one
  // box, a panelled stage one (rows, panel) box per panel: a row-major A one
  // (BM, BK) box, B BN / b.panel_cols (BK, panel) boxes) issued by thread 0;
  // per stage an mbarrier `full` (the stage's bytes have landed) and `empty`
  // (every warp has read it).
  bool tma = false;
  int barrier_offset_bytes = 0;  // the 2 * stages mbarriers (8 bytes each)
  // `layout A col` / `layout B col`: the stage shapes of SmemTile above.
  bool a_col = false, b_col = false;
  bool ldmatrix_a = false;  // ldmatrix.x4 for A fragments (all but a column-major tf32 A)
  bool ldmatrix_b = false;  // ldmatrix.x4 for B fragments (f16/bf16, and a column-major tf32 B)
  // .trans: a column-major f16/bf16 A (k rows of m), a row-major B (k rows of n).
  bool ldmatrix_a_trans = false, ldmatrix_b_trans = false;
  int regs_a = 4, regs_b = 2;    // 32-bit registers per lane per A / B fragment (mma.sync)
  int b_frags_per_ldmatrix = 2;  // B fragments one ldmatrix.trans loads (regs_b each)
  // tf32 B (plain shared loads): one b_vec-wide load (4, 8 or 16 bytes) of n-contiguous
  // elements feeds b_vec n-fragments. Inside a group of b_vec fragments covering
  // 8 * b_vec columns, column c of fragment j is the group's column b_vec * c + j
  // (mma does not care which C column a fragment column is; the epilogue follows).
  int b_vec = 1;
  // tf32 B with `tma` (b_vec 4): the TMA swizzle keys a 128-byte row by row % 8, so
  // lanes g and g+1 of one 8-lane phase (rows tq = 0..3) would meet in a bank;
  // lane g reads the group's chunk tf32_b_lane_chunk(g) instead of chunk g.
  bool b_chunk_permuted = false;
  int elem_bytes = 2;
  // s8: a register of mma's m16n8k32 fragments holds 4 consecutive k, which
  // ldmatrix gives only from a k-major stage (ldmatrix.trans moves 16-bit
  // pairs). As on the wgmma path, the runtime transposes a column-major A
  // into row-major scratch and a row-major B into column-major scratch (the
  // module's `_transpose` entry, before each launch), and the kernel reads
  // those: a_col / b_col above are then the stages' (k-major) layouts.
  bool a_transposed = false, b_transposed = false;

  SmemTile a, b;
  CopyMap copy_a, copy_b;
  int pipeline_smem_bytes = 0;  // stages * (a + b)
  int epilogue_smem_bytes = 0;  // wmma: one 16x16 f32 scratch per warp (reuses the pipeline's)

  // Warp (warp_row, warp_col) of a warp id: row-major over warps_m x warps_n.
  int warp_row(int warp) const { return warp / warps_n; }
  int warp_col(int warp) const { return warp % warps_n; }

  // Stage (row, col) of A(m, k) and of B(k, n), block-tile coordinates: the
  // operand's own with a row-major layout, swapped with a column-major one.
  void a_at(int mm, int kk, int& row, int& col) const {
    row = a_col ? kk : mm;
    col = a_col ? mm : kk;
  }
  void b_at(int kk, int nn, int& row, int& col) const {
    row = b_col ? nn : kk;
    col = b_col ? kk : nn;
  }
  // Element offset of A(m, k) / B(k, n) inside one stage.
  int a_offset(int mm, int kk) const {
    int r, c;
    a_at(mm, kk, r, c);
    return a.offset(r, c);
  }
  int b_offset(int kk, int nn) const {
    int r, c;
    b_at(kk, nn, r, c);
    return b.offset(r, c);
  }
};

// Where lanes' data lives (mma.sync path). All coordinates are inside one
// instruction tile, (row, col) of a 16x8 C tile, or of the A tile (16 x K)
// and B tile (K x 8).

// Accumulator element i (0..3) of `lane`: rows g and g+8, columns 2t, 2t+1.
void mma_c_coord(int lane, int i, int& row, int& col);

// The row and 16-byte chunk whose address `lane` gives to ldmatrix.x<count>
// for an A fragment (16 rows x count/2 chunks): matrix j = (lane % (8 count)) / 8
// is rows (j % 2) * 8.., chunk j / 2 (the a0a1, a2a3, a4a5, a6a7 order of
// mma's A fragment; for tf32 one f32 is a pair of b16).
void ldmatrix_a_coord(int lane, int count, int& row, int& chunk);

// The k row and n chunk whose address `lane` gives to ldmatrix.x<count>.trans
// for count / kb B fragments (kb = 8x8 matrices per fragment along k):
// matrix j = (lane % (8 count)) / 8 is k rows (j % kb) * 8.., n chunk j / kb.
void ldmatrix_b_coord(int lane, int count, int kb, int& krow, int& nchunk);

// tf32 B element i (0..1) of `lane`: k = t + 4i, n = g.
void mma_tf32_b_coord(int lane, int i, int& k, int& n);

// s8 (m16n8k32) byte `byte` (0..3, low to high) of A register i (0..3) of
// `lane`: m = g + 8 (i % 2), k = 4 t + byte + 16 (i / 2); of B register i
// (0..1): k = 4 t + byte + 16 i, n = g (PTX ISA, mma.m16n8k32 .s8). The
// kernel's ldmatrix reads are checked against these on the CPU
// (tests/unit/mma_s8_test.cpp).
void mma_s8_a_coord(int lane, int i, int byte, int& m, int& k);
void mma_s8_b_coord(int lane, int i, int byte, int& k, int& n);

// `mma s8 m8n8k16`: an m16n8k32 step as four m8n8k16, quarter (row half h, k half q) on
// the step's A register a, B register b and D registers d, d + 1. m8n8k16 (.s8, PTX
// ISA) gives lane (g, t) A row g at k 4 t .. 4 t + 3, B column g at the same k, D row g
// at columns 2 t, 2 t + 1: with the coordinates above, rows g + 8 h and k 16 q .. 16 q +
// 15 of the step (tests/unit/mma_s8_test.cpp checks the sum).
struct S8Quarter {
  int a, b, d;
};
inline S8Quarter s8_m8n8k16_quarter(int h, int q) {
  return {h + 2 * q, q, 2 * h};
}

// tf32 A element i (0..regs-1) of `lane`: m = g + 8 (i % 2), k = t + 4 (i / 2)
// (a column-major tf32 A is read with one 4-byte shared load per element).
void mma_tf32_a_coord(int lane, int i, int& m, int& k);

// Both layouts: the 16-byte shared row whose address `lane` gives to the
// ldmatrix of one A fragment (16 x K) or of count / kb B fragments (K x 8
// each), as fragment-local (m, k) / (k, n) of the row's first element; the
// stage address is then MmaPlan::a_offset / b_offset of that element.
//   A row-major (ldmatrix): matrix j = (lane % (8 count)) / 8 has m rows
//     (j % 2) * 8 + lane % 8 and k chunk j / 2 (ldmatrix_a_coord);
//   A column-major (ldmatrix.trans, f16/bf16): the same matrix stored as k
//     rows (j / 2) * 8 + lane % 8 of 8 m from (j % 2) * 8;
//   B row-major (ldmatrix.trans): k rows (j % kb) * 8 + lane % 8 of 8 n from
//     (j / kb) * 8 (ldmatrix_b_coord);
//   B column-major (ldmatrix): n rows (j / kb) * 8 + lane % 8 of the k chunk
//     j % kb (chunk_elems k each; for tf32 one f32 is a pair of b16).
void ldmatrix_a_lane(bool a_col, int lane, int count, int chunk_elems, int& m, int& k);
void ldmatrix_b_lane(bool b_col, int lane, int count, int kb, int chunk_elems, int& k, int& n);

// With b_vec-wide tf32 B loads: the column, inside a group of `vec` n-fragments
// (8 * vec columns), of column `col` (0..7) of fragment `j` (0..vec-1) of the group.
inline int tf32_b_group_col(int vec, int j, int col) {
  return vec * col + j;
}

// With b_chunk_permuted: the 16-byte chunk (0..7) of its 32-column group that lane
// group g reads: g's low bit becomes the chunk's high bit (0 4 1 5 2 6 3 7), so the
// two g of a phase read chunks 4 apart and the XOR with tq (0..3) keeps all 8 apart.
// Fragment column c (0..7) then lives at group column 4 * tf32_b_lane_chunk(c) + j.
inline int tf32_b_lane_chunk(int g) {
  return ((g & 1) << 2) | (g >> 1);
}

}  // namespace schedc::compiler
