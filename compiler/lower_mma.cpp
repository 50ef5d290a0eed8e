// The tensor-core lowering: Schedule (with `wmma` / `mma`) -> KernelPlan.
// Decides warp layout, fragment counts, shared layouts, copy maps and the
// pipeline depth; emit_mma prints them.
#include "compiler/lower_mma.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "compiler/analyze.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {

int div_up(int a, int b) {
  return (a + b - 1) / b;
}

SmemTile make_tile(int rows, int cols, int pad, int elem_bytes, bool swizzle, int xor_shift) {
  SmemTile t;
  t.rows = rows;
  t.cols = cols;
  t.elem_bytes = elem_bytes;
  t.swizzled = swizzle;
  t.xor_shift = swizzle ? xor_shift : 0;
  t.row_stride = swizzle ? cols : cols + pad;
  // cp.async 16-byte copies and ldmatrix / wmma rows need 16-byte aligned rows.
  SCHEDC_INTERNAL_ASSERT((cols * elem_bytes) % 16 == 0,
                         "tensor-core tile rows must be whole 16-byte chunks");
  SCHEDC_INTERNAL_ASSERT((t.row_stride * elem_bytes) % 16 == 0,
                         "`pad` on a tensor-core schedule must keep rows 16-byte aligned (pad * "
                         "element size a multiple of 16 bytes); analyze should have rejected it");
  t.stage_bytes = rows * t.row_stride * elem_bytes;
  return t;
}

CopyMap make_copy(const SmemTile& t, int threads) {
  CopyMap c;
  c.threads = threads;
  c.chunk_elems = t.chunk_elems();
  c.chunks_per_row = t.cols / t.chunk_elems();  // logical rows, panels or not
  c.chunks = t.rows * c.chunks_per_row;
  c.iters = div_up(c.chunks, threads);
  return c;
}

}  // namespace

KernelPlan lower_mma(const Schedule& s, const Target& t) {
  SCHEDC_INTERNAL_ASSERT(s.mma && s.tile && s.warp, "lower_mma needs mma, tile and warp");
  const MmaSpec& spec = *s.mma;
  const BlockTile& bt = *s.tile;
  const WarpTile& wt = *s.warp;

  KernelPlan p = tiled_plan_header(s, t, KernelKind::mma);

  MmaPlan m;
  m.api = spec.api;
  m.type = spec.type;
  m.tf32_rounding = spec.tf32_rounding;
  m.inst_m = spec.m;
  m.inst_n = spec.n;
  m.inst_k = spec.k;
  m.s8_m8n8k16 = spec.s8_m8n8k16;
  m.min_sm = 80;
  m.elem_bytes = size_of(s.dtype);
  m.warp_m = wt.m;
  m.warp_n = wt.n;
  SCHEDC_INTERNAL_ASSERT(bt.m % wt.m == 0 && bt.n % wt.n == 0, "warp tile must divide block tile");
  SCHEDC_INTERNAL_ASSERT(wt.m % spec.m == 0 && wt.n % spec.n == 0 && bt.k % spec.k == 0,
                         "instruction shape must divide warp tile and BK");
  m.warps_m = bt.m / wt.m;
  m.warps_n = bt.n / wt.n;
  m.frags_m = wt.m / spec.m;
  m.frags_n = wt.n / spec.n;
  m.k_steps = bt.k / spec.k;
  p.block_threads = m.warps_m * m.warps_n * 32;

  // `double_buffer` on a tensor-core schedule is a 2-stage cp.async pipeline.
  m.stages = s.stages >= 2 ? s.stages : (s.double_buffer ? 2 : 1);

  const bool sync = spec.api == MmaApi::mma_sync;
  const bool tf32 = spec.type == MmaType::tf32;
  // wmma::load_matrix_sync takes a plain strided layout: no XOR swizzle there.
  const bool swz = s.swizzle_smem && sync;
  // Each stage keeps its operand's layout in memory (SmemTile): a column-major
  // A is k rows of m, a column-major B n rows of k.
  // s8 reads only k-major stages (MmaPlan::a_transposed): a column-major A
  // and a row-major B are read from the runtime's transposed scratch.
  const bool s8 = spec.type == MmaType::s8;
  m.a_transposed = s8 && s.a_col;
  m.b_transposed = s8 && !s.b_col;
  m.a_col = s.a_col && !m.a_transposed;
  m.b_col = s.b_col || m.b_transposed;
  // ldmatrix moves b16: f16/bf16 fragments, and tf32 read along k (one b32 per
  // 8x8 b16 row pair), i.e. a row-major A and a column-major B. A tf32 A with
  // m contiguous would need a transposed 32-bit load, which does not exist: it
  // is read with 4-byte shared loads, as a row-major tf32 B is.
  // s8 (m16n8k32): its stages are k-major (above), and a register's 4
  // consecutive k are what ldmatrix without .trans gives (the bytes of
  // f16's m16n8k16).
  m.ldmatrix_a = sync && !(tf32 && m.a_col);
  m.ldmatrix_b = sync && (!tf32 || m.b_col);
  m.ldmatrix_a_trans = m.ldmatrix_a && m.a_col;
  m.ldmatrix_b_trans = m.ldmatrix_b && !m.b_col;
  // A fragment 16 x k, B fragment k x 8, spread over 32 lanes in 32-bit registers;
  // ldmatrix loads one 8x8 b16 matrix (8 rows of 16 bytes) per register.
  m.regs_a = spec.m * spec.k * m.elem_bytes / (32 * 4);
  m.regs_b = spec.k * spec.n * m.elem_bytes / (32 * 4);
  // As many B fragments per ldmatrix.trans (at most 4 matrices) as divide frags_n.
  m.b_frags_per_ldmatrix = 1;
  for (int per = 4 / std::max(1, m.regs_b); per >= 1; per /= 2)
    if ((wt.n / spec.n) % per == 0) {
      m.b_frags_per_ldmatrix = per;
      break;
    }
  // tf32 B: the widest shared load (16, 8 or 4 bytes) whose fragment group divides frags_n
  // (the pipelined loop of stages >= 2 only).
  m.b_vec = 1;
  if (sync && tf32 && !m.ldmatrix_b && m.stages >= 2)
    for (int vec = 4; vec >= 1; vec /= 2)
      if (m.frags_n % vec == 0) {
        m.b_vec = vec;
        break;
      }
  SCHEDC_INTERNAL_ASSERT(
      !(s.transpose_a || s.transpose_b),
      "`transpose` is not supported with tensor cores; analyze should reject it");

  // tf32 read with 4-byte loads (a row-major B, a column-major A): 4 k rows x
  // 8 m or n per request, so rows that share a chunk pair must land in
  // different chunk pairs (shift 1).
  const int a_shift = tf32 && !m.ldmatrix_a ? 1 : 0;
  const int b_shift = tf32 && !m.ldmatrix_b ? 1 : 0;
  m.a = m.a_col ? make_tile(bt.k, bt.m, s.pad_a, m.elem_bytes, swz, a_shift)
                : make_tile(bt.m, bt.k, s.pad_a, m.elem_bytes, swz, a_shift);
  m.b = m.b_col ? make_tile(bt.n, bt.k, s.pad_b, m.elem_bytes, swz, b_shift)
                : make_tile(bt.k, bt.n, s.pad_b, m.elem_bytes, swz, b_shift);
  // `tma` (analyze checked: mma, stages, swizzle smem, k-contiguous stages of 128-byte rows,
  // the others whole 128-byte panels): a stage longer than 128 bytes (row-major B, column-major
  // A) in 128-byte column panels, one TMA box each. Below sm_90 there is no TMA and the
  // copies stay cp.async; the barrier bytes are kept so that the sizes agree with
  // static_resources on every target.
  m.tma = s.tma && t.sm >= 90;
  if (m.tma) {
    for (SmemTile* st : {&m.a, &m.b}) {
      const bool panels = st == &m.a ? m.a_col : !m.b_col;
      SCHEDC_INTERNAL_ASSERT(
          swz && (panels ? (st->cols * m.elem_bytes) % 128 == 0 && st->rows % 8 == 0
                         : st->cols * m.elem_bytes == 128),
          "tma needs swizzled stages of 128-byte rows or whole 128-byte panels");
      if (panels) st->panel_cols = 128 / m.elem_bytes;
      st->xor_shift = 0;  // the TMA swizzle's key is the 128-byte row
    }
    m.b_chunk_permuted = tf32 && m.b_vec == 4;
    m.min_sm = 90;
  }
  m.a.offset_bytes = 0;
  m.b.offset_bytes = m.stages * m.a.stage_bytes;
  m.pipeline_smem_bytes = m.stages * (m.a.stage_bytes + m.b.stage_bytes);
  m.barrier_offset_bytes = m.pipeline_smem_bytes;
  if (s.tma) m.pipeline_smem_bytes += tma_barrier_bytes(m.stages);
  m.copy_a = make_copy(m.a, p.block_threads);
  m.copy_b = make_copy(m.b, p.block_threads);

  // wmma fragments have no documented element layout, so the epilogue goes
  // through a 16x16 f32 scratch per warp (in the pipeline's memory, after
  // the main loop). That can exceed the pipeline for very small tiles.
  if (!sync) m.epilogue_smem_bytes = m.warps_m * m.warps_n * 16 * 16 * 4;
  p.smem_bytes = std::max(m.pipeline_smem_bytes, m.epilogue_smem_bytes);

  p.mma = m;
  return p;
}

void mma_c_coord(int lane, int i, int& row, int& col) {
  int g = lane / 4, tq = lane % 4;
  row = g + (i / 2) * 8;
  col = 2 * tq + (i % 2);
}

void ldmatrix_a_coord(int lane, int count, int& row, int& chunk) {
  int j = (lane % (8 * count)) / 8;
  row = (j % 2) * 8 + lane % 8;
  chunk = j / 2;
}

void ldmatrix_b_coord(int lane, int count, int kb, int& krow, int& nchunk) {
  int j = (lane % (8 * count)) / 8;
  krow = (j % kb) * 8 + lane % 8;
  nchunk = j / kb;
}

void mma_tf32_b_coord(int lane, int i, int& k, int& n) {
  k = lane % 4 + 4 * i;
  n = lane / 4;
}

void mma_s8_a_coord(int lane, int i, int byte, int& m, int& k) {
  m = lane / 4 + 8 * (i % 2);
  k = 4 * (lane % 4) + byte + 16 * (i / 2);
}

void mma_s8_b_coord(int lane, int i, int byte, int& k, int& n) {
  k = 4 * (lane % 4) + byte + 16 * i;
  n = lane / 4;
}

void mma_tf32_a_coord(int lane, int i, int& m, int& k) {
  m = lane / 4 + 8 * (i % 2);
  k = lane % 4 + 4 * (i / 2);
}

void ldmatrix_a_lane(bool a_col, int lane, int count, int chunk_elems, int& m, int& k) {
  const int j = (lane % (8 * count)) / 8;
  m = (j % 2) * 8 + (a_col ? 0 : lane % 8);
  k = a_col ? (j / 2) * 8 + lane % 8 : (j / 2) * chunk_elems;
}

void ldmatrix_b_lane(bool b_col, int lane, int count, int kb, int chunk_elems, int& k, int& n) {
  const int j = (lane % (8 * count)) / 8;
  k = b_col ? (j % kb) * chunk_elems : (j % kb) * 8 + lane % 8;
  n = (j / kb) * 8 + (b_col ? lane % 8 : 0);
}

}  // namespace schedc::compiler
