// The mma.sync / WMMA generator's copies, global memory -> shared stages
// (codegen/mma_context.h): the fallback's checked chunk copy, the tile
// loaders of both entries, TMA k-tiles, and the main entry's copies with
// per-thread precomputed addresses.
#include <string>
#include <vector>

#include "codegen/mma_context.h"
#include "compiler/copy_notes.h"

namespace schedc::codegen::mma {

using compiler::SmemTile;

namespace {

void copy_chunk_checked(MmaContext& cx) {
  const int v = cx.m.a.chunk_elems();
  if (cx.m.elem_bytes == 4) {
    cx.e.comment(format(
        "fallback copy: %d elements of a row, one 4-byte cp.async each (any f32 address", v));
    cx.e.comment("is 4-byte aligned), zero-filled past the edge: the pipeline stays asynchronous");
    cx.e.lines(
        R"(__device__ __forceinline__ void cp_async_4(unsigned dst_smem, const void* src_global, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_smem), "l"(src_global),
               "r"(src_bytes));
})");
    cx.e.open_scope(
        "__device__ __forceinline__ void copy_chunk_checked(T* dst_smem, const T* src, int ld, "
        "int row, int col, int rows, int cols)");
    cx.e.line("const unsigned dst = smem_u32(dst_smem);");
    cx.e.line("const bool row_ok = row < rows;");
    cx.e.line("#pragma unroll");
    cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", v));
    cx.e.line("const bool ok = row_ok && col + i < cols;");
    cx.e.line("cp_async_4(dst + 4 * i, ok ? src + (size_t)row * ld + col + i : src, ok ? 4 : 0);");
    cx.e.close_scope();
    cx.e.close_scope();
    cx.e.line();
    return;
  }
  cx.e.comment(
      format("fallback copy: %d elements of a row, each checked and stored as it comes; zero "
             "past the edge",
             v));
  cx.e.open_scope(
      "__device__ __forceinline__ void copy_chunk_checked(T* dst_smem, const T* src, int ld, "
      "int row, int col, int rows, int cols)");
  // The element's bits as an unsigned integer: 2 bytes (f16, bf16) or 1 (s8).
  const std::string U = cx.m.elem_bytes == 1 ? "unsigned char" : "unsigned short";
  cx.e.line(format("const %s* bits = reinterpret_cast<const %s*>(src);", U.c_str(), U.c_str()));
  cx.e.line(format("%s* dst = reinterpret_cast<%s*>(dst_smem);", U.c_str(), U.c_str()));
  cx.e.line("const bool row_ok = row < rows;");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", v));
  cx.e.line(format("dst[i] = row_ok && col + i < cols ? bits[(size_t)row * ld + col + i] : (%s)0;",
                   U.c_str()));
  cx.e.close_scope();
  cx.e.close_scope();
  cx.e.line();
}

void tile_loader(MmaContext& cx, const char* op, const SmemTile& t, const compiler::CopyMap& c,
                 const char* rows_name, const char* cols_name) {
  cx.e.comment(
      format("(%d, %d) tile of %s at (row0, col0) -> one shared stage: %d 16-byte chunks, %s%d "
             "per thread",
             t.rows, t.cols, op, c.chunks, c.needs_guard() ? "at most " : "", c.iters));
  if (c.needs_guard())
    cx.e.comment(
        format("uneven: %s have no chunk in round i = %d and skip it",
               compiler::thread_range(c.chunks - (c.iters - 1) * c.threads, c.threads - 1).c_str(),
               c.iters - 1));
  cx.e.line("template <bool kAligned>");
  cx.e.open_scope(
      format("__device__ __forceinline__ void load_tile_%s(T* s%s_stage, const T* g%s, int ld, "
             "int %s, int %s, int row0, int col0)",
             op, op, op, rows_name, cols_name));
  cx.e.open_scope("if (!kAligned)");
  cx.e.comment(
      "fallback: a rolled loop (unrolled element-wise copies would hold too many registers)");
  cx.e.line("#pragma unroll 1");
  cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", c.iters));
  cx.e.line(format("const int idx = threadIdx.x + i * %d;", c.threads));
  if (c.needs_guard()) cx.e.line(format("if (idx >= %d) break;", c.chunks));
  cx.e.line(format("const int row = idx / %d, col = (idx %% %d) * %d;", c.chunks_per_row,
                   c.chunks_per_row, c.chunk_elems));
  cx.e.line(
      format("copy_chunk_checked(s%s_stage + s%s_offset(row, col), g%s, ld, row0 + row, col0 + "
             "col, %s, %s);",
             op, op, op, rows_name, cols_name));
  cx.e.close_scope();
  cx.e.line("return;");
  cx.e.close_scope();
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", c.iters));
  cx.e.line(format("const int idx = threadIdx.x + i * %d;", c.threads));
  if (c.needs_guard()) cx.e.line(format("if (idx >= %d) break;", c.chunks));
  cx.e.line(format("const int row = idx / %d, col = (idx %% %d) * %d;", c.chunks_per_row,
                   c.chunks_per_row, c.chunk_elems));
  cx.e.line(format("T* dst = s%s_stage + s%s_offset(row, col);", op, op));
  cx.e.open_scope("if (kAligned)");
  cx.e.comment(
      "bytes past the matrix edge are zero-filled; none are read from an out-of-range row");
  cx.e.line(format("const int valid = row0 + row < %s ? min(max(%s - (col0 + col), 0), %d) : 0;",
                   rows_name, cols_name, c.chunk_elems));
  cx.e.line(format("const T* src = valid > 0 ? g%s + (size_t)(row0 + row) * ld + col0 + col : g%s;",
                   op, op));
  cx.e.line(format("cp_async_16(smem_u32(dst), src, valid * %d);", cx.m.elem_bytes));
  cx.e.close_scope();
  cx.e.open_scope("else");
  cx.e.line(format("copy_chunk_checked(dst, g%s, ld, row0 + row, col0 + col, %s, %s);", op,
                   rows_name, cols_name));
  cx.e.close_scope();
  cx.e.close_scope();
  cx.e.close_scope();
  cx.e.line();
}

// One operand's boxes: "one (rows, cols) box" for a stage of 128-byte rows,
// "N (rows, panel) boxes" for column panels.
std::string tma_boxes_text(const SmemTile& t) {
  if (t.panel_cols == 0) return format("one (%d, %d) box", t.rows, t.cols);
  return format("%d (%d, %d) boxes", t.cols / t.panel_cols, t.rows, t.panel_cols);
}

// The TMA loads of one operand's stage at shared address `dst`: box coordinates
// are (column, row) of the operand in memory, k0 along K and `tile0` along M or N.
void tma_operand_loads(MmaContext& cx, const SmemTile& t, const char* dst, const char* map,
                       bool k_along_rows, const char* tile0) {
  const char* z = cx.p.schedule.batch > 0 ? ", z" : "";  // the GEMM of a batch
  if (t.panel_cols == 0) {
    cx.e.line(format(
        "tma_load_2d(%s, %s, full, %s%s);", dst, map,
        k_along_rows ? format("%s, k0", tile0).c_str() : format("k0, %s", tile0).c_str(), z));
    return;
  }
  const int panels = t.cols / t.panel_cols, bytes = t.rows * t.panel_cols * cx.m.elem_bytes;
  cx.e.line("#pragma unroll");
  const std::string x = format("%s + p * %d", k_along_rows ? tile0 : "k0", t.panel_cols);
  cx.e.line(format("for (int p = 0; p < %d; ++p) tma_load_2d(%s + p * %du, %s, full, %s, %s%s);",
                   panels, dst, bytes, map, x.c_str(), k_along_rows ? "k0" : tile0, z));
}

void tma_tile_copy(MmaContext& cx) {
  cx.e.comment(format("tma %s: k-tile at column k0 -> one stage: A as %s, B as %s",
                      origin_note(cx.p.schedule, cx.p.schedule.tma_at).c_str(),
                      tma_boxes_text(cx.m.a).c_str(), tma_boxes_text(cx.m.b).c_str()));
  cx.e.comment("(column panels); `full` completes when all their bytes have landed");
  cx.e.open_scope(
      std::string("__device__ __forceinline__ void tma_copy_tile(const TmaMap& tma_a, const "
                  "TmaMap& tma_b, unsigned sa, unsigned sb, unsigned full, int k0, int tile_m0, "
                  "int tile_n0") +
      (cx.p.schedule.batch > 0 ? ", int z)" : ")"));
  cx.e.line(format("mbar_expect_tx(full, %du);  // %d + %d bytes",
                   cx.m.a.stage_bytes + cx.m.b.stage_bytes, cx.m.a.stage_bytes,
                   cx.m.b.stage_bytes));
  tma_operand_loads(cx, cx.m.a, "sa", "tma_a", cx.m.a_col, "tile_m0");
  tma_operand_loads(cx, cx.m.b, "sb", "tma_b", !cx.m.b_col, "tile_n0");
  cx.e.close_scope();
  cx.e.line();
}

// ---- main-entry copies with per-thread precomputed addresses ---------------
// When every thread keeps one chunk column across its chunks (threads a
// multiple of chunks per row) and the shared offset of chunk i is the one of
// chunk 0 plus a constant, a thread's copies of a tile are one global pointer
// (advanced by the tile step), a row bound and constant shared offsets.
bool fast_copy_ok(MmaContext& cx, const SmemTile& t, const compiler::CopyMap& c) {
  if (c.threads % c.chunks_per_row != 0 || c.needs_guard()) return false;
  for (int i = 1; i < c.iters; ++i) {
    long d0 = 0;
    for (int tid = 0; tid < c.threads; ++tid) {
      int r0 = 0, c0 = 0, ri = 0, ci = 0;
      c.chunk(tid, 0, r0, c0);
      c.chunk(tid, i, ri, ci);
      const long d = long(t.offset(ri, ci)) - t.offset(r0, c0);
      if (tid == 0) d0 = d;
      if (d != d0) return false;
    }
  }
  return true;
}

long fast_copy_delta(MmaContext& cx, const SmemTile& t, const compiler::CopyMap& c, int i) {
  int r0 = 0, c0 = 0, ri = 0, ci = 0;
  c.chunk(0, 0, r0, c0);
  c.chunk(0, i, ri, ci);
  return (long(t.offset(ri, ci)) - t.offset(r0, c0)) * cx.m.elem_bytes;
}

// A convolution's A tile (M x K at (row0, col0)) from the input: each
// 16-byte chunk is one pixel's channels at one filter tap, A(m, kk) with
// m = img·P·Q + oh·Q + ow and, NHWC, kk = tap·C + c (NCHW32: kk = (g·R·S +
// tap)·32 + lane), at the window origin of output pixel m plus the tap's
// offset from the host's table plus the channel; zeros where the tap falls
// in the padding or past M or K. As the wgmma producer does
// (codegen/blocks_wgmma_conv.cpp), a thread keeps its chunks' state in a
// ConvWalk: the window origin of each chunk's row (conv_walk_start, once a
// block tile: the only divisions but one per chunk for its first tap) and
// the tap and channel of its column, moved on BK columns after each k-tile
// (load_tile_A copies k-tiles in order). The input is 16-byte aligned and
// a pixel's channels whole chunks (runtime::check_conv_launch), so both
// entries copy the same way.
void conv_tile_loader(MmaContext& cx) {
  const compiler::CopyMap& c = cx.m.copy_a;
  const bool nchw32 = cx.nchw32();
  // Where THREADS is a multiple of a row's chunks, a thread's chunks share
  // one column: one tap and channel for all (fewer registers).
  const bool one_col = c.threads % c.chunks_per_row == 0;
  const int cols = one_col ? 1 : c.iters;
  const std::string j = one_col ? "[0]" : "[i]";
  cx.e.comment(
      format("conv: a thread's %d chunk(s) of A's stage: row (idx / %d) and column (idx %% "
             "%d) * %d,",
             c.iters, c.chunks_per_row, c.chunks_per_row, c.chunk_elems));
  cx.e.comment(nchw32 ? "idx = threadIdx.x + i * THREADS; the window origin and (h0, w0) of its "
                        "row, its tap and g * H * W * 32 + lane"
                      : "idx = threadIdx.x + i * THREADS; the window origin and (h0, w0) of its "
                        "row, its tap and channel");
  cx.e.lines(format("struct ConvWalk {\n  int origin[%d], hw0[%d], tap[%d], ch[%d];%s\n};", c.iters,
                    c.iters, cols, cols, one_col ? "  // one column" : ""));
  cx.e.open_scope(
      "__device__ __forceinline__ ConvWalk conv_walk_start(const ConvArgs& conv, int M, int "
      "tile_m0)");
  cx.e.line("ConvWalk walk;");
  cx.e.line("const int pq = conv.p * conv.q;");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", c.iters));
  cx.e.line(format("const int idx = threadIdx.x + i * %d;", c.threads));
  cx.e.line(format("const int m = tile_m0 + idx / %d, kk = (idx %% %d) * %d;", c.chunks_per_row,
                   c.chunks_per_row, c.chunk_elems));
  cx.e.comment("a row past M: (h0, w0) = (-32768, -32768), which no tap brings inside");
  emit_conv_row_origin(cx.e, nchw32, "walk.origin[i]", "walk.hw0[i]");
  if (one_col) cx.e.open_scope("if (i == 0)");
  if (nchw32) {
    cx.e.line("const int slot = kk >> 5, g = slot / conv.taps;");
    cx.e.line("walk.tap" + j + " = slot - g * conv.taps;");
    cx.e.line("walk.ch" + j + " = g * conv.h * conv.w * 32 + (kk & 31);");
  } else {
    cx.e.line("walk.tap" + j + " = kk / conv.c;");
    cx.e.line("walk.ch" + j + " = kk - walk.tap" + j + " * conv.c;");
  }
  if (one_col) cx.e.close_scope();
  cx.e.close_scope();
  cx.e.line("return walk;");
  cx.e.close_scope();
  cx.e.line();
  cx.e.comment(format("(%d, %d) tile of the implicit GEMM's A from the %s input (the k-tile after",
                      cx.m.a.rows, cx.m.a.cols, nchw32 ? "NCHW32" : "NHWC"));
  cx.e.comment("the last copied): each chunk through the offset table, zeros in the padding and");
  cx.e.comment("past M and K; then every chunk's tap and channel BK columns on");
  cx.e.line("template <bool kAligned>");
  cx.e.open_scope(
      "__device__ __forceinline__ void load_tile_A(T* sA_stage, const T* gA, int ld, int rows, "
      "int cols, int row0, int col0, const ConvArgs& conv, ConvWalk& walk)");
  if (nchw32)
    cx.e.line("const int plane = conv.h * conv.w * 32, channels_end = (conv.c >> 5) * plane;");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", c.iters));
  cx.e.line(format("const int idx = threadIdx.x + i * %d;", c.threads));
  if (c.needs_guard()) cx.e.line(format("if (idx >= %d) break;", c.chunks));
  cx.e.line(format("const int row = idx / %d, col = (idx %% %d) * %d;", c.chunks_per_row,
                   c.chunks_per_row, c.chunk_elems));
  cx.e.line(nchw32 ? "const bool in_k = walk.ch" + j + " < channels_end;  // else past K: zeros"
                   : "const bool in_k = walk.tap" + j + " < conv.taps;  // else past K: zeros");
  cx.e.line("const ConvTapArg t = conv.tap[in_k ? walk.tap" + j + " : 0];");
  cx.e.line(
      "const int ih = (walk.hw0[i] >> 16) + t.dh, iw = (int)(short)(walk.hw0[i] & 0xFFFF) + "
      "t.dw;");
  cx.e.line(
      "const bool inside = in_k && (unsigned)ih < (unsigned)conv.h && (unsigned)iw < "
      "(unsigned)conv.w;");
  cx.e.line(
      "cp_async_16(smem_u32(sA_stage + sA_offset(row, col)), inside ? gA + (walk.origin[i] + "
      "t.offset + walk.ch" +
      j + ") : gA, inside ? 16 : 0);");
  if (one_col) cx.e.close_scope();  // the chunks; then their one column moves on
  if (nchw32) {
    cx.e.comment("BK / 32 taps on, into the next group's plane past the last");
    cx.e.line(format("walk.tap%s += %d;", j.c_str(), cx.p.block_k / 32));
    cx.e.open_scope("while (walk.tap" + j + " >= conv.taps)");
    cx.e.line("walk.tap" + j + " -= conv.taps;");
    cx.e.line("walk.ch" + j + " += plane;");
    cx.e.close_scope();
  } else {
    cx.e.comment("BK columns on (no division)");
    cx.e.line(format("walk.ch%s += %d;", j.c_str(), cx.p.block_k));
    cx.e.open_scope("while (walk.ch" + j + " >= conv.c)");
    cx.e.line("walk.ch" + j + " -= conv.c;");
    cx.e.line("++walk.tap" + j + ";");
    cx.e.close_scope();
  }
  if (!one_col) cx.e.close_scope();  // the chunks
  cx.e.close_scope();
  cx.e.line();
}

}  // namespace

void tile_loaders(MmaContext& cx) {
  copy_chunk_checked(cx);
  if (cx.conv())
    conv_tile_loader(cx);
  else
    tile_loader(cx, "A", cx.m.a, cx.m.copy_a, cx.m.a_col ? "K" : "M", cx.m.a_col ? "M" : "K");
  tile_loader(cx, "B", cx.m.b, cx.m.copy_b, cx.m.b_col ? "N" : "K", cx.m.b_col ? "K" : "N");
  if (cx.m.tma) tma_tile_copy(cx);
}

bool fast_copies(MmaContext& cx) {
  if (cx.conv()) return false;  // A comes through the offset table (load_tile_A)
  return fast_copy_ok(cx, cx.m.a, cx.m.copy_a) && fast_copy_ok(cx, cx.m.b, cx.m.copy_b);
}

namespace {

// One operand of the main entry's copies (x = "a" / "b"): its tile runs k
// along the stage's columns (a row-major A, a column-major B: the row bound
// is fixed, the bytes in range change with the k-tile) or along its rows (a
// column-major A, a row-major B: the other way round).
struct FastOperand {
  const char* x;      // a, b
  const char* X;      // A, B
  const char* dim;    // M, N: the bound of the tile's other side
  const char* tile0;  // tile_m0, tile_n0
  bool k_in_cols;
  const compiler::CopyMap& c;
  int step_rows() const { return c.threads / c.chunks_per_row; }
};

std::vector<FastOperand> fast_operands(MmaContext& cx) {
  return {{"a", "A", "M", "tile_m0", !cx.m.a_col, cx.m.copy_a},
          {"b", "B", "N", "tile_n0", cx.m.b_col, cx.m.copy_b}};
}

}  // namespace

// Declarations before the main loop (main entry only).
void emit_fast_copy_setup(MmaContext& cx) {
  const auto ops = fast_operands(cx);
  cx.e.comment(
      "copies: thread's chunk column and first row; chunk i is rows + i * (threads / chunks per "
      "row)");
  for (const auto& o : ops)
    cx.e.line(format("const int c%s_row = threadIdx.x / %d, c%s_col = (threadIdx.x %% %d) * %d;",
                     o.x, o.c.chunks_per_row, o.x, o.c.chunks_per_row, o.c.chunk_elems));
  for (const auto& o : ops) {
    if (o.k_in_cols)
      cx.e.line(
          format("const T* g%s = %s + (size_t)(%s + c%s_row) * ld%s + c%s_col;  // + k_tile * BK",
                 o.x, o.X, o.tile0, o.x, o.x, o.x));
    else
      cx.e.line(format(
          "const T* g%s = %s + (size_t)c%s_row * ld%s + %s + c%s_col;  // + k_tile * BK * ld%s",
          o.x, o.X, o.x, o.x, o.tile0, o.x, o.x));
  }
  cx.e.line(format("const size_t ga_step = (size_t)%d * lda, gb_step = (size_t)%d * ldb;",
                   ops[0].step_rows(), ops[1].step_rows()));
  for (const auto& o : ops) {
    if (o.k_in_cols)
      cx.e.line(
          format("const int c%s_rows = %s - %s - c%s_row;  // chunk i in range: i * step < "
                 "c%s_rows",
                 o.x, o.dim, o.tile0, o.x, o.x));
    else
      cx.e.line(format(
          "const int c%s_bytes = min(max(%s - %s - c%s_col, 0), %d) * %d;  // %s columns in range",
          o.x, o.dim, o.tile0, o.x, o.c.chunk_elems, cx.m.elem_bytes, o.X));
  }
  cx.e.line(
      format("const unsigned ca_dst = sA_u32 + sA_offset(ca_row, ca_col) * %d, cb_dst = sB_u32 + "
             "sB_offset(cb_row, cb_col) * %d;",
             cx.m.elem_bytes, cx.m.elem_bytes));
}

// Copies of k-tile `kt` into `stage` (expressions), main entry.
void emit_fast_copy(MmaContext& cx, Emitter& e, const std::string& stage, const std::string& kt) {
  const auto ops = fast_operands(cx);
  e.open_scope("");
  e.line(format("const int kt = %s;", kt.c_str()));
  for (const auto& o : ops) {
    if (o.k_in_cols)
      e.line(format("const int %s_bytes = min(max(K - kt * BK - c%s_col, 0), %d) * %d;", o.x, o.x,
                    o.c.chunk_elems, cx.m.elem_bytes));
    else
      e.line(
          format("const int %s_rows = K - kt * BK - c%s_row;  // chunk i in range: i * step < "
                 "%s_rows",
                 o.x, o.x, o.x));
  }
  for (const auto& o : ops) {
    if (o.k_in_cols)
      e.line(format("const T* p%s = g%s + kt * BK;", o.x, o.x));
    else
      e.line(format("const T* p%s = g%s + (size_t)kt * BK * ld%s;", o.x, o.x, o.x));
  }
  e.line(format("const unsigned da = ca_dst + %s * %du, db = cb_dst + %s * %du;", stage.c_str(),
                cx.m.a.stage_bytes, stage.c_str(), cx.m.b.stage_bytes));
  for (const auto& o : ops) {
    const SmemTile& t = o.x[0] == 'a' ? cx.m.a : cx.m.b;
    for (int i = 0; i < o.c.iters; ++i) {
      const std::string n =
          o.k_in_cols ? format("%d < c%s_rows ? %s_bytes : 0", i * o.step_rows(), o.x, o.x)
                      : format("%d < %s_rows ? c%s_bytes : 0", i * o.step_rows(), o.x, o.x);
      e.line(
          format("{ const int n = %s; cp_async_16(d%s + %ldu, n ? p%s + %d * g%s_step : %s, n); }",
                 n.c_str(), o.x, fast_copy_delta(cx, t, o.c, i), o.x, i, o.x, o.X));
    }
  }
  e.close_scope();
}

}  // namespace schedc::codegen::mma
