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
  cx.e.line("const unsigned short* bits = reinterpret_cast<const unsigned short*>(src);");
  cx.e.line("unsigned short* dst = reinterpret_cast<unsigned short*>(dst_smem);");
  cx.e.line("const bool row_ok = row < rows;");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int i = 0; i < %d; ++i)", v));
  cx.e.line(
      "dst[i] = row_ok && col + i < cols ? bits[(size_t)row * ld + col + i] : (unsigned "
      "short)0;");
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

void tma_tile_copy(MmaContext& cx) {
  cx.e.comment(
      format("tma %s: k-tile at column k0 -> one stage: A as one (%d, %d) box, B as %d "
             "(%d, %d) boxes",
             origin_note(cx.p.schedule, cx.p.schedule.tma_at).c_str(), cx.m.a.rows, cx.m.a.cols,
             cx.b_panels(), cx.m.b.rows, cx.m.b.panel_cols));
  cx.e.comment("(column panels); `full` completes when all their bytes have landed");
  cx.e.open_scope(
      "__device__ __forceinline__ void tma_copy_tile(const TmaMap& tma_a, const TmaMap& tma_b, "
      "unsigned sa, unsigned sb, unsigned full, int k0, int tile_m0, int tile_n0)");
  cx.e.line(format("mbar_expect_tx(full, %du);  // %d + %d bytes",
                   cx.m.a.stage_bytes + cx.m.b.stage_bytes, cx.m.a.stage_bytes,
                   cx.m.b.stage_bytes));
  cx.e.line("tma_load_2d(sa, tma_a, full, k0, tile_m0);");
  cx.e.line("#pragma unroll");
  cx.e.line(
      format("for (int p = 0; p < %d; ++p) tma_load_2d(sb + p * %du, tma_b, full, tile_n0 + p * "
             "%d, k0);",
             cx.b_panels(), cx.b_panel_bytes(), cx.m.b.panel_cols));
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

}  // namespace

void tile_loaders(MmaContext& cx) {
  copy_chunk_checked(cx);
  tile_loader(cx, "A", cx.m.a, cx.m.copy_a, "M", "K");
  tile_loader(cx, "B", cx.m.b, cx.m.copy_b, "K", "N");
  if (cx.m.tma) tma_tile_copy(cx);
}

bool fast_copies(MmaContext& cx) {
  return fast_copy_ok(cx, cx.m.a, cx.m.copy_a) && fast_copy_ok(cx, cx.m.b, cx.m.copy_b);
}

// Declarations before the main loop (main entry only).
void emit_fast_copy_setup(MmaContext& cx) {
  const auto &ca = cx.m.copy_a, &cb = cx.m.copy_b;
  const int ra = ca.threads / ca.chunks_per_row, rb = cb.threads / cb.chunks_per_row;
  cx.e.comment(
      "copies: thread's chunk column and first row; chunk i is rows + i * (threads / chunks per "
      "row)");
  cx.e.line(format("const int ca_row = threadIdx.x / %d, ca_col = (threadIdx.x %% %d) * %d;",
                   ca.chunks_per_row, ca.chunks_per_row, ca.chunk_elems));
  cx.e.line(format("const int cb_row = threadIdx.x / %d, cb_col = (threadIdx.x %% %d) * %d;",
                   cb.chunks_per_row, cb.chunks_per_row, cb.chunk_elems));
  cx.e.line("const T* ga = A + (size_t)(tile_m0 + ca_row) * lda + ca_col;  // + k_tile * BK");
  cx.e.line("const T* gb = B + (size_t)cb_row * ldb + tile_n0 + cb_col;  // + k_tile * BK * ldb");
  cx.e.line(format("const size_t ga_step = (size_t)%d * lda, gb_step = (size_t)%d * ldb;", ra, rb));
  cx.e.line("const int ca_rows = M - tile_m0 - ca_row;  // chunk i in range: i * step < ca_rows");
  cx.e.line(format(
      "const int cb_bytes = min(max(N - tile_n0 - cb_col, 0), %d) * %d;  // B columns in range",
      cb.chunk_elems, cx.m.elem_bytes));
  cx.e.line(
      format("const unsigned ca_dst = sA_u32 + sA_offset(ca_row, ca_col) * %d, cb_dst = sB_u32 + "
             "sB_offset(cb_row, cb_col) * %d;",
             cx.m.elem_bytes, cx.m.elem_bytes));
}

// Copies of k-tile `kt` into `stage` (expressions), main entry.
void emit_fast_copy(MmaContext& cx, Emitter& e, const std::string& stage, const std::string& kt) {
  const auto &ca = cx.m.copy_a, &cb = cx.m.copy_b;
  const int ra = ca.threads / ca.chunks_per_row, rb = cb.threads / cb.chunks_per_row;
  e.open_scope("");
  e.line(format("const int kt = %s;", kt.c_str()));
  e.line(format("const int a_bytes = min(max(K - kt * BK - ca_col, 0), %d) * %d;", ca.chunk_elems,
                cx.m.elem_bytes));
  e.line("const int b_rows = K - kt * BK - cb_row;  // chunk i in range: i * step < b_rows");
  e.line("const T* pa = ga + kt * BK;");
  e.line("const T* pb = gb + (size_t)kt * BK * ldb;");
  e.line(format("const unsigned da = ca_dst + %s * %du, db = cb_dst + %s * %du;", stage.c_str(),
                cx.m.a.stage_bytes, stage.c_str(), cx.m.b.stage_bytes));
  for (int i = 0; i < ca.iters; ++i) {
    e.line(
        format("{ const int n = %d < ca_rows ? a_bytes : 0; cp_async_16(da + %ldu, n ? pa + %d * "
               "ga_step : A, n); }",
               i * ra, fast_copy_delta(cx, cx.m.a, ca, i), i));
  }
  for (int i = 0; i < cb.iters; ++i) {
    e.line(
        format("{ const int n = %d < b_rows ? cb_bytes : 0; cp_async_16(db + %ldu, n ? pb + %d * "
               "gb_step : B, n); }",
               i * rb, fast_copy_delta(cx, cx.m.b, cb, i), i));
  }
  e.close_scope();
}

}  // namespace schedc::codegen::mma
