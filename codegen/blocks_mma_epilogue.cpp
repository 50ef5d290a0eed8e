// The mma.sync / WMMA generator's epilogue, accumulators -> C
// (codegen/mma_context.h): the pair and quad stores through epilogue_value,
// and the two fragment layouts' store loops.
#include <string>
#include <vector>

#include "codegen/mma_context.h"

namespace schedc::codegen::mma {

using compiler::DType;

namespace {

// An int8 C (`epilogue ... requantize`, row-major) on mma.sync: lanes tq and
// tq ^ 1 swap one pair of each two n-fragments, so each lane holds 4
// adjacent int8 columns and stores them at once (4 bytes instead of 2:
// the wgmma kernel's quads, codegen/blocks_wgmma_epilogue.cpp).
bool int8_quads(const MmaContext& cx) {
  return cx.sync && cx.p.schedule.epilogue.requantize && !cx.p.schedule.c_col && cx.m.b_vec == 1 &&
         cx.m.frags_n % 2 == 0;
}

// C(row, col)'s offset from C in a row-major C, or an NCHW32 convolution's
// output (ldc is then P·Q, the pixels of a plane; codegen/blocks_common.h).
std::string c_offset(const MmaContext& cx) {
  return cx.nchw32() ? "c_row_nchw32(ldc, N, M, row) + c_col_nchw32(ldc, col)"
                     : "(size_t)row * ldc + col";
}

// The mma.sync epilogue's three unrolled loops: fragment rows mi, then
// `var` < `count` (fragments or groups of them), then `inner` (a for
// header); close_store_loops closes them.
void open_store_loops(MmaContext& cx, const char* var, int count, const char* inner) {
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int %s = 0; %s < %d; ++%s)", var, var, count, var));
  cx.e.line("#pragma unroll");
  cx.e.open_scope(inner);
}

void close_store_loops(MmaContext& cx) {
  for (int i = 0; i < 3; ++i) cx.e.close_scope();
}

// store_c_quad: C[row][col .. col + 3] through epilogue_value as one
// vector store where aligned and inside C, else as two store_c_pair: the
// quads of an f32 C with b_vec 4 (float4) and of an int8 C (char4).
void emit_store_c_quad(MmaContext& cx) {
  const bool int8 = cx.p.dtype == DType::s8;
  const std::string what = int8 ? "(col a multiple of 4) through epilogue_value: one 4-byte store"
                                : "(col a multiple of 4): one 16-byte store";
  const std::string TC = c_t(cx.p), V = accumulator_type(cx.p.dtype);
  const std::string vec4 = int8 ? "char4" : "float4", make4 = "make_" + vec4;
  const std::string vectors = "bias" + scale_arg(cx.p);
  cx.e.comment("C[row][col .. col + 3] " + what + " when aligned");
  cx.e.line("template <bool kAligned>");
  cx.e.open_scope("__device__ __forceinline__ void store_c_quad(" + TC +
                  "* C, int ldc, int M, int N, int row, int col, " + V + " v0, " + V + " v1, " + V +
                  " v2, " + V + " v3, float alpha, float beta, const float* bias" +
                  scale_param(cx.p) + ")");
  cx.e.line("if (row >= M) return;");
  cx.e.open_scope("if (kAligned && col + 3 < N)");
  cx.e.line(TC + "* dst = C + " + c_offset(cx) + ";");
  std::string values;
  for (int x = 0; x < 4; ++x)
    values += (x ? ", " : "") +
              format("epilogue_value(v%d, dst%s, col%s, alpha, beta, ", x,
                     x ? format(" + %d", x).c_str() : "", x ? format(" + %d", x).c_str() : "") +
              vectors + ")";
  cx.e.line("*reinterpret_cast<" + vec4 + "*>(dst) = " + make4 + "(" + values + ");");
  cx.e.line("return;");
  cx.e.close_scope();
  cx.e.line("store_c_pair<kAligned>(C, ldc, M, N, row, col, v0, v1, alpha, beta, " + vectors +
            ");");
  cx.e.line("store_c_pair<kAligned>(C, ldc, M, N, row, col + 2, v2, v3, alpha, beta, " + vectors +
            ");");
  cx.e.close_scope();
  cx.e.line();
}

}  // namespace

void epilogue_helpers(MmaContext& cx) {
  emit_epilogue_helpers(cx.e, cx.p);
  // `layout C col`: (row, col) at col * ldc + row. A fragment's neighbours
  // along n lie ldc apart, so each element is stored alone (the store loops
  // below are the row-major ones).
  const bool c_col = cx.p.schedule.c_col;
  if (c_col)
    cx.e.comment(
        "C(row, col), C(row, col + 1) through epilogue_value, out-of-range ones skipped; C is "
        "column-major: the two lie ldc apart");
  else
    cx.e.comment(
        "C[row][col], C[row][col + 1] (col even) through epilogue_value; out-of-range ones "
        "skipped");
  // C's element and the accumulators' type (c_t: T, or int or signed char for s8).
  const std::string TC = c_t(cx.p), V = accumulator_type(cx.p.dtype);
  // The epilogue's vectors as the helpers pass them on (scale: `epilogue ... scale`).
  const std::string vectors = "bias" + scale_arg(cx.p);
  cx.e.line("template <bool kAligned>");
  cx.e.open_scope("__device__ __forceinline__ void store_c_pair(" + TC +
                  "* C, int ldc, int M, int N, int row, int col, " + V + " v0, " + V +
                  " v1, float alpha, float beta, const float* bias" + scale_param(cx.p) + ")");
  cx.e.line("if (row >= M) return;");
  if (c_col) {
    cx.e.line(TC + "* dst = C + (size_t)col * ldc + row;");
    cx.e.line("if (col < N) store_c(dst, col, v0, alpha, beta, " + vectors + ");");
    cx.e.line("if (col + 1 < N) store_c(dst + ldc, col + 1, v1, alpha, beta, " + vectors + ");");
    cx.e.close_scope();
    cx.e.line();
    return;  // no store_c_quad: the store loops take pairs (b_vec 4 stores two)
  }
  cx.e.line(TC + "* dst = C + " + c_offset(cx) + ";");
  cx.e.open_scope("if (kAligned && col + 1 < N)");
  cx.e.line("const " + V + " r0 = epilogue_value(v0, dst, col, alpha, beta, " + vectors + ");");
  cx.e.line("const " + V + " r1 = epilogue_value(v1, dst + 1, col + 1, alpha, beta, " + vectors +
            ");");
  if (cx.p.schedule.epilogue.requantize)
    cx.e.line("*reinterpret_cast<char2*>(dst) = make_char2(r0, r1);");
  else if (cx.p.dtype == DType::s8)
    cx.e.line("*reinterpret_cast<int2*>(dst) = make_int2(r0, r1);");
  else if (cx.p.dtype == DType::f16)
    cx.e.line("*reinterpret_cast<__half2*>(dst) = __floats2half2_rn(r0, r1);");
  else if (cx.p.dtype == DType::bf16)
    cx.e.line("*reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(r0, r1);");
  else
    cx.e.line("*reinterpret_cast<float2*>(dst) = make_float2(r0, r1);");
  cx.e.line("return;");
  cx.e.close_scope();
  cx.e.line("if (col < N) store_c(dst, col, v0, alpha, beta, " + vectors + ");");
  cx.e.line("if (col + 1 < N) store_c(dst + 1, col + 1, v1, alpha, beta, " + vectors + ");");
  cx.e.close_scope();
  cx.e.line();
  if (int8_quads(cx) || (cx.m.b_vec == 4 && cx.p.dtype == DType::f32)) emit_store_c_quad(cx);
}

void epilogue_mma_sync(MmaContext& cx) {
  const int P = cx.m.b_vec;
  if (P > 1) {
    cx.e.comment(
        format("epilogue: accumulator i of fragment ni is row g + 8 * (i / 2), column %d * (2 * "
               "tq + i %% 2)",
               P));
    cx.e.comment(
        format("+ ni %% %d of its group of %d fragments (%d columns): lanes store %d consecutive "
               "columns",
               P, P, 8 * P, P));
    open_store_loops(cx, "q", cx.m.frags_n / P, "for (int i = 0; i < 4; ++i)");
    cx.e.line("const int row = tile_m0 + warp_row0 + mi * 16 + g + 8 * (i / 2);");
    if (cx.m.b_chunk_permuted) {
      cx.e.line(
          "const int c = 2 * tq + i % 2;  // fragment column, stored at chunk (c & 1) * 4 + c / "
          "2");
      cx.e.line(
          format("const int col = tile_n0 + warp_col0 + q * %d + %d * (((c & 1) << 2) | (c >> 1));",
                 8 * P, P));
    } else {
      cx.e.line(format("const int col = tile_n0 + warp_col0 + q * %d + %d * (2 * tq + i %% 2);",
                       8 * P, P));
    }
    if (P == 4 && cx.p.schedule.c_col) {  // column-major C: pairs, element by element
      cx.e.line(
          "store_c_pair<kAligned>(C, ldc, M, N, row, col, acc[mi][4 * q][i], acc[mi][4 * q + "
          "1][i], alpha, beta, bias" +
          scale_arg(cx.p) + ");");
      cx.e.line(
          "store_c_pair<kAligned>(C, ldc, M, N, row, col + 2, acc[mi][4 * q + 2][i], acc[mi][4 * "
          "q + 3][i], alpha, beta, bias" +
          scale_arg(cx.p) + ");");
    } else if (P == 4)
      cx.e.line(
          "store_c_quad<kAligned>(C, ldc, M, N, row, col, acc[mi][4 * q][i], acc[mi][4 * q + "
          "1][i], "
          "acc[mi][4 * q + 2][i], acc[mi][4 * q + 3][i], alpha, beta, bias" +
          scale_arg(cx.p) + ");");
    else
      cx.e.line(
          "store_c_pair<kAligned>(C, ldc, M, N, row, col, acc[mi][2 * q][i], acc[mi][2 * q + "
          "1][i], "
          "alpha, beta, bias" +
          scale_arg(cx.p) + ");");
    close_store_loops(cx);
    return;
  }
  cx.e.comment("epilogue: accumulator i of a 16x8 fragment is (g + 8 * (i / 2), 2 * tq + i % 2)");
  if (int8_quads(cx)) {
    cx.e.comment("int8 C: lanes tq and tq ^ 1 swap a pair of fragments 2q and 2q + 1, so the even");
    cx.e.comment(
        "lane holds 4 adjacent columns of fragment 2q, the odd one of 2q + 1 (4-byte stores)");
    cx.e.line("const bool odd = tq % 2;");
    open_store_loops(cx, "q", cx.m.frags_n / 2, "for (int h = 0; h < 2; ++h)");
    emit_quad_swap(cx.e, "int", "acc[mi][2 * q][2 * h]", "acc[mi][2 * q][2 * h + 1]",
                   "acc[mi][2 * q + 1][2 * h]", "acc[mi][2 * q + 1][2 * h + 1]");
    cx.e.line("const int row = tile_m0 + warp_row0 + mi * 16 + g + 8 * h;");
    cx.e.line(
        "const int col = tile_n0 + warp_col0 + q * 16 + 2 * tq + (odd ? 6 : 0);  // 4-aligned");
    cx.e.line(
        "store_c_quad<kAligned>(C, ldc, M, N, row, col, odd ? t0 : x0, odd ? t1 : x1, odd ? y0 "
        ": t0, odd ? y1 : t1, alpha, beta, bias" +
        scale_arg(cx.p) + ");");
    close_store_loops(cx);
    return;
  }
  open_store_loops(cx, "ni", cx.m.frags_n, "for (int h = 0; h < 2; ++h)");
  cx.e.line("const int row = tile_m0 + warp_row0 + mi * 16 + g + 8 * h;");
  cx.e.line("const int col = tile_n0 + warp_col0 + ni * 8 + 2 * tq;");
  cx.e.line(
      "store_c_pair<kAligned>(C, ldc, M, N, row, col, acc[mi][ni][2 * h], acc[mi][ni][2 * h + "
      "1], "
      "alpha, beta, bias" +
      scale_arg(cx.p) + ");");
  close_store_loops(cx);
}

void epilogue_wmma(MmaContext& cx) {
  const int fm = cx.m.inst_m, fn = cx.m.inst_n;
  cx.e.comment("epilogue: WMMA accumulators have no documented layout; each warp stores one");
  cx.e.comment(
      format("(%d, %d) fragment at a time to its own f32 scratch in the (now idle) shared memory",
             fm, fn));
  cx.e.line("__syncthreads();  // every warp is done reading the pipeline stages");
  cx.e.line(format("float* scratch = reinterpret_cast<float*>(smem) + warp * %d;", fm * fn));
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int ni = 0; ni < %d; ++ni)", cx.m.frags_n));
  cx.e.line(format("wmma::store_matrix_sync(scratch, acc[mi][ni], %d, wmma::mem_row_major);", fn));
  cx.e.line("__syncwarp();");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int pair = lane; pair < %d; pair += 32)", fm * fn / 2));
  cx.e.line(format("const int r = (2 * pair) / %d, c = (2 * pair) %% %d;", fn, fn));
  cx.e.line(format("const int row = tile_m0 + warp_row0 + mi * %d + r;", fm));
  cx.e.line(format("const int col = tile_n0 + warp_col0 + ni * %d + c;", fn));
  cx.e.line(
      "store_c_pair<kAligned>(C, ldc, M, N, row, col, scratch[2 * pair], scratch[2 * pair + 1], "
      "alpha, "
      "beta, bias);");
  cx.e.close_scope();
  cx.e.line("__syncwarp();  // scratch is reused by the next fragment");
  cx.e.close_scope();
  cx.e.close_scope();
}

}  // namespace schedc::codegen::mma
