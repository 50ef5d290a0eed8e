// The Hopper kernel's epilogue blocks (codegen/blocks_wgmma.h): the
// accumulators of a consumer warpgroup to C, straight from registers or, with
// tma_store, staged in shared memory for TMA stores.
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_wgmma.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

// An NCHW32 convolution's output (WgmmaConvCopy::nchw32): C is not a matrix.
// A `halo` kernel's stores take each of a thread's rows' output row from
// h_rows (emit_halo_rows, before the k loop; M where the row is junk), the
// others `plain`.
std::string c_row(const KernelPlan& p, const std::string& plain, const std::string& index) {
  return p.schedule.halo ? "h_rows[" + index + "]" : plain;
}

bool nchw32_c(const WgmmaPlan& w) {
  return w.conv && w.conv->nchw32;
}

// store_quad: four adjacent columns of one row as one 16-byte store (4-byte
// for an int8 C; see emit_quad_stores); store_quad_plain the same of the
// values as they are (WgmmaPlan::plain_quads).
void emit_store_quad(Emitter& e, const KernelPlan& p) {
  const std::string TC = c_t(p), V = accumulator_type(p.dtype);
  const int bytes = 4 * p.wgmma->c_elem_bytes;
  e.comment(format(
      "C[row][col .. col + 3] through epilogue_value, one %d-byte store: dst %d-byte aligned,",
      bytes, bytes));
  e.comment("the four columns inside C or, with in_c false (past M or N), nothing: no value");
  e.comment("(neither C nor bias read there) and no store.");
  e.open_scope("__device__ __forceinline__ void store_quad(" + TC + "* dst, bool in_c, int col, " +
               V + " v0, " + V + " v1, " + V + " v2, " + V +
               " v3, float alpha, float beta, const float* bias" + scale_param(p) + ")");
  e.line("if (!in_c) return;");
  for (int x = 0; x < 4; ++x)
    e.line(format("const %s r%d = epilogue_value(v%d, dst + %d, col + %d, alpha, beta, bias%s);",
                  V.c_str(), x, x, x, x, scale_arg(p).c_str()));
  if (p.schedule.epilogue.requantize)
    e.line("*reinterpret_cast<char4*>(dst) = make_char4(r0, r1, r2, r3);");
  else if (p.dtype == compiler::DType::s8)
    e.line("*reinterpret_cast<int4*>(dst) = make_int4(r0, r1, r2, r3);");
  else
    e.line("*reinterpret_cast<float4*>(dst) = make_float4(r0, r1, r2, r3);");
  e.close_scope();
  e.line();
  if (!p.wgmma->plain_quads(p.schedule.epilogue)) return;
  e.comment("store_quad where alpha is 1 and beta 0 (`plain`): the values as they are");
  e.open_scope("__device__ __forceinline__ void store_quad_plain(" + TC + "* dst, bool in_c, " + V +
               " v0, " + V + " v1, " + V + " v2, " + V + " v3)");
  e.line(format("if (in_c) *reinterpret_cast<%s4*>(dst) = make_%s4(v0, v1, v2, v3);", V.c_str(),
                V.c_str()));
  e.close_scope();
  e.line();
}

// gather16 (WgmmaPlan::direct_sixteens): the four lanes of a row each hold a
// packed quad (4 int8 columns) of four 16-column groups w0..w3; lane k ends
// with group k's 16 bytes. In round s lane L sends its word of group
// (L - s) % 4 and takes lane (k + s) % 4's word of group k: a 4x4 transpose
// in three shuffles. Lane m's quad is columns 0-3, 8-11, 4-7, 12-15 of its
// group for m = 0, 1, 2, 3 (the pair swap of emit_quad_stores).
void emit_gather16(Emitter& e) {
  e.comment("four int8 (an epilogue_value each) as one word, the first column in the low byte");
  e.open_scope("__device__ __forceinline__ unsigned pack_char4(int r0, int r1, int r2, int r3)");
  e.line(
      "return (unsigned(r0) & 0xffu) | (unsigned(r1) & 0xffu) << 8 | (unsigned(r2) & 0xffu) << 16 "
      "| unsigned(r3) << 24;");
  e.close_scope();
  e.comment("The four lanes of a row hold a quad of each of four 16-column groups (w0..w3);");
  e.comment("lane k = threadIdx.x % 4 returns group k's 16 bytes in column order. Round s: lane L");
  e.comment(
      "sends its word of group (L - s) % 4, lane k takes lane (k + s) % 4's word of group k.");
  e.open_scope(
      "__device__ __forceinline__ int4 gather16(unsigned w0, unsigned w1, unsigned w2, unsigned "
      "w3)");
  e.line("const int k = threadIdx.x % 4, base = threadIdx.x % 32 - k;");
  e.line("unsigned o0 = 0, o1 = 0, o2 = 0, o3 = 0;  // lanes 0..3's words of group k");
  e.line("#pragma unroll");
  e.open_scope("for (int s = 0; s < 4; ++s)");
  e.line("const int from = (k + s) % 4, mine = (k - s + 4) % 4;");
  e.line("const unsigned send = mine == 0 ? w0 : mine == 1 ? w1 : mine == 2 ? w2 : w3;");
  e.line("const unsigned got = s == 0 ? send : __shfl_sync(0xffffffffu, send, base + from);");
  e.line("o0 = from == 0 ? got : o0;");
  e.line("o1 = from == 1 ? got : o1;");
  e.line("o2 = from == 2 ? got : o2;");
  e.line("o3 = from == 3 ? got : o3;");
  e.close_scope();
  e.comment("lane 0 holds columns 0-3, lane 2 4-7, lane 1 8-11, lane 3 12-15");
  e.line("return make_int4(int(o0), int(o2), int(o1), int(o3));");
  e.close_scope();
  e.line();
}

}  // namespace

void emit_wgmma_store_pair(Emitter& e, const KernelPlan& p) {
  if (nchw32_c(*p.wgmma)) emit_c_offset_nchw32(e);
  if (p.wgmma->direct_sixteens()) emit_gather16(e);
  if (p.wgmma->direct_quads()) emit_store_quad(e, p);
  const std::string TC = c_t(p), V = accumulator_type(p.dtype);
  if (p.wgmma->c_col) {  // the pair's two elements lie ldc apart: one at a time
    e.comment("C(row, col), C(row, col + 1) through epilogue_value; out-of-range ones skipped.");
    e.comment(
        "C column-major: (row, col) at col * ldc + row, the pair ldc apart (`pairs` unused).");
    e.open_scope("__device__ __forceinline__ void store_pair(" + TC +
                 "* C, int ldc, int M, int N, int row, int col, " + V + " v0, " + V +
                 " v1, float alpha, float beta, const float* bias" + scale_param(p) +
                 ", bool pairs)");
    e.line("if (row >= M || col >= N) return;");
    e.line(TC + "* dst = C + (size_t)col * ldc + row;");
    e.line("store_c(dst, col, v0, alpha, beta, bias" + scale_arg(p) + ");");
    e.line("if (col + 1 < N) store_c(dst + ldc, col + 1, v1, alpha, beta, bias" + scale_arg(p) +
           ");");
    e.close_scope();
    e.line();
    return;
  }
  e.comment("C[row][col], C[row][col + 1] through epilogue_value; out-of-range ones skipped.");
  e.comment(
      format("`pairs`: C and ldc keep every even column %d-byte aligned (one check per launch).",
             2 * compiler::c_size_of(p.schedule)));
  e.open_scope("__device__ __forceinline__ void store_pair(" + TC +
               "* C, int ldc, int M, int N, int row, int col, " + V + " v0, " + V +
               " v1, float alpha, float beta, const float* bias" + scale_param(p) +
               ", bool pairs)");
  e.line("if (row >= M || col >= N) return;");
  if (nchw32_c(*p.wgmma)) {
    e.comment("NCHW32: C is the row's start, C + c_row_nchw32(row) (c_rows)");
    e.line(TC + "* dst = C + c_col_nchw32(ldc, col);");
  } else {
    e.line(TC + "* dst = C + (size_t)row * ldc + col;");
  }
  e.open_scope("if (pairs && col + 1 < N)");
  e.line("const " + V + " r0 = epilogue_value(v0, dst, col, alpha, beta, bias" + scale_arg(p) +
         ");");
  e.line("const " + V + " r1 = epilogue_value(v1, dst + 1, col + 1, alpha, beta, bias" +
         scale_arg(p) + ");");
  if (p.schedule.epilogue.requantize)
    e.line("*reinterpret_cast<char2*>(dst) = make_char2(r0, r1);");
  else if (p.dtype == compiler::DType::s8)
    e.line("*reinterpret_cast<int2*>(dst) = make_int2(r0, r1);");
  else if (p.dtype == compiler::DType::bf16)
    e.line("*reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(r0, r1);");
  else if (p.dtype == compiler::DType::f32)  // tf32 with both operands k-major
    e.line("*reinterpret_cast<float2*>(dst) = make_float2(r0, r1);");
  else
    e.line("*reinterpret_cast<__half2*>(dst) = __floats2half2_rn(r0, r1);");
  e.line("return;");
  e.close_scope();
  e.line("store_c(dst, col, v0, alpha, beta, bias" + scale_arg(p) + ");");
  e.line("if (col + 1 < N) store_c(dst + 1, col + 1, v1, alpha, beta, bias" + scale_arg(p) + ");");
  e.close_scope();
  e.line();
}

namespace {

// T's two-element vector and the rounding pack of two floats into it.
std::string pair_type(const KernelPlan& p) {
  return p.dtype == compiler::DType::bf16 ? "__nv_bfloat162" : "__half2";
}
std::string pair_pack(const KernelPlan& p) {
  return p.dtype == compiler::DType::bf16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
}

// Opens the unrolled loops over a consumer's accumulator pairs: instruction
// (i, j), register pair (r, r + 1). close_pair_loops closes them.
void open_pair_loops(Emitter& e, const WgmmaPlan& w) {
  emit_wgmma_instruction_loops(e, w, format("for (int r = 0; r < %d; r += 2)", w.inst_n / 2));
}
void close_pair_loops(Emitter& e) {
  for (int i = 0; i < 3; ++i) e.close_scope();
}

// A 4-byte row-major C (s8's int32, tf32's f32) with 16-byte aligned rows,
// where the consumer tile's columns lie inside C or N is a multiple of 4: a
// thread's accumulator pairs are two adjacent columns, so a warp's 8-byte
// stores write 32 bytes of each of 8 rows, which the L2 takes at about half
// the rate of wider ones (H100: a pass of these stores over a 4096x4096
// int32 C cost 25 us inside int8_best, of 16-byte ones 13-16 us). Lanes 2q
// and 2q + 1 swap one pair of each two
// 8-column blocks: the even lane then holds 4 adjacent columns of the first
// block, the odd one of the second, and a quad writes 64 contiguous bytes of
// a row with 16-byte stores. Rows past M and quads past N (N a multiple
// of 4) are skipped store by store, not by the check: a tile over a ragged
// M kept to pairs paid ~0.35 us in the epilogue of a short kernel (H200,
// res5 3x3 at batch 1: 3.90 -> 3.53 us, bench/NOTES.md session 39). Opens
// the check's `if`; emit_direct_stores closes it after its `else`.
// WgmmaPlan::direct_sixteens, inside emit_quad_stores's `if (quads)`: where
// C's rows are also 16-byte aligned, each step takes four 16-column groups
// (two of the quad loop's r steps, both row halves): each lane computes its
// quad of each as the 4-byte path does, packs it (pack_char4), and
// gather16 hands lane k group k: row half k % 2, group k / 2 of the two r
// steps. Opens the `else` the 4-byte quads go in; emit_quad_stores closes it.
// A consumer's accumulators of pair r of block r / 4 (x) and of block
// r / 4 + 1 (y), row half h, for emit_quad_swap.
constexpr const char* kQuadX0 = "acc[i][j][r + 2 * h]";
constexpr const char* kQuadX1 = "acc[i][j][r + 2 * h + 1]";
constexpr const char* kQuadY0 = "acc[i][j][r + 4 + 2 * h]";
constexpr const char* kQuadY1 = "acc[i][j][r + 5 + 2 * h]";

void emit_sixteen_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const bool nchw32 = nchw32_c(w);
  e.comment("(with N a multiple of 16 a group of 16 columns lies inside C or wholly past N)");
  e.line(
      format("const bool rows16 = %sreinterpret_cast<unsigned long long>(C) %% 16 == 0 && "
             "(cols_in || N %% 16 == 0);",
             nchw32 ? "" : "ldc % 16 == 0 && "));
  e.open_scope("if (rows16)");
  e.line("const int k4 = threadIdx.x % 4;");
  emit_wgmma_instruction_loops(e, w, format("for (int g = 0; g < %d; ++g)", w.inst_n / 32));
  e.line("unsigned wd[4];");
  e.line("#pragma unroll");
  e.open_scope("for (int q = 0; q < 4; ++q)");
  e.comment("group q: the quad loop's r = 16 g + 8 (q / 2), row half h = q % 2");
  e.line("const int r = 16 * g + 8 * (q / 2), h = q % 2;");
  emit_quad_swap(e, "int", kQuadX0, kQuadX1, kQuadY0, kQuadY1);
  e.line(format("const int col = col0 + j * %d + 8 * (r / 4) + (odd ? 6 : 0);", w.inst_n));
  e.comment("past M or N: no value (neither C nor bias read there) and, below, no store");
  e.line("const int row = " + c_row(p, "row0 + i * 64 + 8 * h", "2 * i + h") + ";");
  e.line("const bool in_c = row < M && col < N;");
  e.line("const signed char* dst = C + " +
         std::string(nchw32 ? "c_rows[2 * i + h] + c_col_nchw32(ldc, col)"
                            : "(size_t)row * ldc + col") +
         ";");
  const std::string args = ", alpha, beta, bias" + scale_arg(p) + ")";
  e.line("wd[q] = !in_c ? 0u : pack_char4(epilogue_value(odd ? t0 : x0, dst, col" + args +
         ", epilogue_value(odd ? t1 : x1, dst + 1, col + 1" + args +
         ", epilogue_value(odd ? y0 : t0, dst + 2, col + 2" + args +
         ", epilogue_value(odd ? y1 : t1, dst + 3, col + 3" + args + ");");
  e.close_scope("q");
  e.comment("this lane's group: row half k4 % 2, columns 32 g + 16 (k4 / 2) of the instruction's");
  e.line("const int4 v = gather16(wd[0], wd[1], wd[2], wd[3]);");
  e.line(format("const int col = col0 - 2 * k4 + j * %d + 32 * g + 16 * (k4 / 2);", w.inst_n));
  // (a select, not h_rows[2 * i + k4 % 2]: an index known at run time only puts the array on
  // the stack)
  e.line("const int row = " +
         (p.schedule.halo ? std::string("k4 % 2 ? h_rows[2 * i + 1] : h_rows[2 * i]")
                          : std::string("row0 + i * 64 + 8 * (k4 % 2)")) +
         ";");
  if (nchw32)
    e.line(
        "if (row < M && col < N) *reinterpret_cast<int4*>(C + (k4 % 2 ? c_rows[2 * i + 1] : "
        "c_rows[2 * i]) + c_col_nchw32(ldc, col)) = v;");
  else
    e.line("if (row < M && col < N) *reinterpret_cast<int4*>(C + (size_t)row * ldc + col) = v;");
  close_pair_loops(e);
  e.close_scope();
  e.open_scope("else");
}

// The quads' loop: each thread's pairs swapped into quads (emit_quad_swap),
// stored by store_quad, or by store_quad_plain where `plain`.
void emit_quad_loop(Emitter& e, const KernelPlan& p, bool plain) {
  const WgmmaPlan& w = *p.wgmma;
  emit_wgmma_instruction_loops(e, w, format("for (int r = 0; r < %d; r += 8)", w.inst_n / 2));
  e.line("#pragma unroll");
  e.open_scope("for (int h = 0; h < 2; ++h)");
  e.comment("block r / 4's pair (x) and block r / 4 + 1's (y), rows + 8 * h");
  emit_quad_swap(e, accumulator_type(p.dtype), kQuadX0, kQuadX1, kQuadY0, kQuadY1);
  e.line(format("const int row = %s, col = col0 + j * %d + 8 * (r / 4) + (odd ? 6 : 0);",
                c_row(p, "row0 + i * 64 + 8 * h", "2 * i + h").c_str(), w.inst_n));
  e.line(std::string(plain ? "store_quad_plain(C + " : "store_quad(C + ") +
         (nchw32_c(w) ? "c_rows[2 * i + h] + c_col_nchw32(ldc, col)" : "(size_t)row * ldc + col") +
         (plain ? ", row < M && col < N, " : ", row < M && col < N, col, ") +
         "odd ? t0 : x0, odd ? t1 : x1, odd ? y0 : t0, odd ? y1 : t1" +
         (plain ? ");" : ", alpha, beta, bias" + scale_arg(p) + ");"));
  e.close_scope("h");
  close_pair_loops(e);
}

void emit_quad_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int bytes = 4 * w.c_elem_bytes;  // a quad: 16 bytes, 4 of an int8 C
  e.comment(format(
      "%d-byte rows: quads of columns, lanes 2q and 2q + 1 swapping a pair, where the tile's",
      bytes));
  e.comment("columns lie inside C or N is a multiple of 4 (a quad then lies inside C or wholly");
  e.comment("past N); each store checks its row and column (a ragged M or N keeps the quads)");
  e.line(format("const bool cols_in = col0 - 2 * (threadIdx.x %% 4) + %d <= N;", w.wg_n));
  e.line(
      format("const bool quads = %sreinterpret_cast<unsigned long long>(C) %% %d == 0 && "
             "(cols_in || N %% 4 == 0);",
             nchw32_c(w) ? "" : "ldc % 4 == 0 && ", bytes));
  if (w.plain_quads(p.schedule.epilogue)) {
    e.comment("alpha 1 and beta 0: the accumulators as they are (plain_quads)");
    e.open_scope("if (quads && alpha == 1.0f && beta == 0.0f)");
    e.line("const bool odd = threadIdx.x % 2;");
    emit_quad_loop(e, p, true);
    e.close_scope();
    e.open_scope("else if (quads)");
  } else {
    e.open_scope("if (quads)");
  }
  e.line("const bool odd = threadIdx.x % 2;");
  if (w.direct_sixteens()) emit_sixteen_stores(e, p);
  emit_quad_loop(e, p, false);
  if (w.direct_sixteens()) e.close_scope();  // the 4-byte quads' else
  e.close_scope();
  e.open_scope("else");
}

// The accumulators straight to C: pairs (4 bytes; 8 of f32) where C allows
// them, quads of 4-byte columns where WgmmaPlan::direct_quads.
void emit_direct_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const bool quads = w.direct_quads();
  if (nchw32_c(w)) {
    e.comment("NCHW32: the output offset of each of this thread's rows, row0 + 64 i + 8 h");
    e.line(format("int c_rows[%d];", 2 * w.m_insts));
    e.line("#pragma unroll");
    e.line(
        format("for (int x = 0; x < %d; ++x) c_rows[x] = c_row_nchw32(ldc, N, M, row0 + x / 2 * "
               "64 + x %% 2 * 8);",
               2 * w.m_insts));
  }
  if (quads) emit_quad_stores(e, p);
  e.line(format("const bool pairs = %sreinterpret_cast<unsigned long long>(C) %% %d == 0;",
                nchw32_c(w) ? "" : "ldc % 2 == 0 && ", 2 * compiler::c_size_of(p.schedule)));
  open_pair_loops(e, w);
  e.line(
      format("store_pair(%s, ldc, M, N, %s, col0 + j * %d + 8 * "
             "(r / 4), acc[i][j][r], acc[i][j][r + 1], alpha, beta, bias%s, pairs);",
             nchw32_c(w) ? "C + c_rows[2 * i + r / 2 % 2]" : "C",
             c_row(p, "row0 + i * 64 + 8 * (r / 2 % 2)", "2 * i + r / 2 % 2").c_str(), w.inst_n,
             scale_arg(p).c_str()));
  close_pair_loops(e);
  if (quads) e.close_scope();
}

// The staging stores of a consumer tile that lies inside C, with beta 0 (C
// not read): no bounds checks, and stmatrix writes four 8x8 b16 matrices per
// instruction, each thread giving one register (a row pair) of each. The
// pairs of two 8-column blocks, top and bottom 8 rows of the warp's 16, are
// the four matrices; lane L names row L % 8 of matrix L / 8. A fifth of the
// instructions of the checked loop (seen: the epilogue bounded short-K tiles).
void emit_stmatrix_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.comment("inside C and C unread: no checks, stmatrix (four 8x8 matrices: the register pairs");
  e.comment("4c, 4c + 2, 4c + 4, 4c + 6, i.e. rows 0-7 / 8-15 of 8-column blocks c and c + 1)");
  e.open_scope(
      format("if (beta == 0.0f && row0 - lr0 + %d <= M && col0 - lc0 + %d <= N)", w.wg_m, w.wg_n));
  if (w.c_col)
    e.line(
        "const int tm = 16 * (threadIdx.x / 32 % 4) + 8 * (threadIdx.x / 8 % 2), tr = threadIdx.x "
        "% 8, tq = threadIdx.x % 32 / 16;");
  else
    e.line(
        "const int sr = 16 * (threadIdx.x / 32 % 4) + 8 * (threadIdx.x / 8 % 2) + threadIdx.x % 8, "
        "sq = threadIdx.x % 32 / 16;");
  emit_wgmma_instruction_loops(e, w, format("for (int c = 0; c < %d; c += 2)", w.inst_n / 8));
  e.line("unsigned h[4];");
  e.line("#pragma unroll");
  e.open_scope("for (int q = 0; q < 4; ++q)");
  e.line(format("const int r = 4 * c + 2 * q, col = col0 + j * %d + 8 * (r / 4);", w.inst_n));
  e.line(format("const %s v = %s(epilogue_value(acc[i][j][r], C, col, alpha, 0.0f, bias),",
                pair_type(p).c_str(), pair_pack(p).c_str()));
  e.line("    epilogue_value(acc[i][j][r + 1], C, col + 1, alpha, 0.0f, bias));");
  e.line("h[q] = *reinterpret_cast<const unsigned*>(&v);");
  e.close_scope();
  if (w.c_col) {
    // .trans: lane L names row L % 8 (a column n of C) of matrix L / 8, whose
    // 8 elements are 8 rows m of C, contiguous in the m-major staging.
    e.line(format("const int ln = j * %d + 8 * (c + tq) + tr, lm = tm + i * 64;", w.inst_n));
    e.line(format(
        "stmatrix_x4_trans(sC + (lm / 64) * %du + ln * 128u + ((((lm %% 64) / 8) ^ (ln %% 8)) * "
        "16u), h[0], h[1], h[2], h[3]);",
        w.c_stage_rows() * 128));
  } else {
    e.line(format("const int lr = sr + i * 64, lc = j * %d + 8 * (c + sq);", w.inst_n));
    e.line(
        format("stmatrix_x4(sC + (lc / %d) * %du + lr * 128u + ((((lc %% %d) / 8) ^ (lr %% 8)) * "
               "16u), h[0], h[1], h[2], h[3]);",
               w.c_panel_cols(), w.wg_m * 128, w.c_panel_cols()));
  }
  e.close_scope("c");
  e.close_scope();
  e.close_scope();
  e.close_scope();
}

// C rows TMA cannot store (not 16-byte aligned): the warpgroup copies its
// staged tile out, one 64-column panel row per warp at a time, lane l the
// elements 2l and 2l + 1 (one conflict-free shared read; 128 contiguous bytes
// of C per warp), as one 4-byte store where the row allows it, else two.
void emit_staged_copy_out(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int panels = w.c_stage_panels(), rows = w.c_stage_rows();
  e.comment("C not 16-byte aligned: the warps copy the staged tile out, a 64-column row each");
  if (w.c_col) e.comment("(C column-major: a staged row is a column n of C, its elements rows m)");
  e.line("const int lane = threadIdx.x % 32;");
  e.line("#pragma unroll 4");
  e.open_scope(format("for (int x = threadIdx.x / 32 %% 4; x < %d; x += 4)", rows * panels));
  e.line(format("const int q = x / %d, lr = x %% %d;  // panel, row", rows, rows));
  // (row, col): where the staged row lies in C's memory, and its limits.
  const char* row = w.c_col ? "col0 - lc0 + lr" : "row0 - lr0 + lr";
  const char* col = w.c_col ? "row0 - lr0" : "col0 - lc0";
  const char* rows_limit = w.c_col ? "N" : "M";
  const char* cols_limit = w.c_col ? "M" : "N";
  e.line(format("const int row = %s, col = %s + q * %d + 2 * lane;", row, col, w.c_panel_cols()));
  e.line(format("if (row >= %s || col >= %s) continue;", rows_limit, cols_limit));
  e.line("unsigned v;");
  e.line(
      format("asm volatile(\"ld.shared.b32 %%0, [%%1];\\n\" : \"=r\"(v) : \"r\"(sC + q * %du + "
             "lr * 128u + (((lane / 4) ^ (lr %% 8)) * 16u) + (lane %% 4) * 4u));",
             rows * 128));
  e.line("unsigned short* dst = reinterpret_cast<unsigned short*>(C + (size_t)row * ldc + col);");
  e.open_scope(format("if (col + 1 < %s && reinterpret_cast<unsigned long long>(dst) %% 4 == 0)",
                      cols_limit));
  e.line("*reinterpret_cast<unsigned*>(dst) = v;");
  e.close_scope();
  e.open_scope("else");
  e.line("dst[0] = (unsigned short)(v & 0xFFFFu);");
  e.line(format("if (col + 1 < %s) dst[1] = (unsigned short)(v >> 16);", cols_limit));
  e.close_scope();
  e.close_scope("x");
}

// tma_store: the epilogue's values (rounded to T) into this consumer's staging
// area, then one thread stores it with wg_n / 64 TMA boxes (c_tma) or the
// warps copy it out (C rows TMA cannot write).
void emit_staged_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const std::string T2 = pair_type(p), pack = pair_pack(p);
  e.line(
      format("const unsigned sC = sA_u32 + %du + consumer * %du;  // %d panels of (%d, %d), "
             "128-byte swizzle%s",
             w.c_offset_bytes, w.c_consumer_bytes, w.c_stage_panels(), w.c_stage_rows(),
             w.c_panel_cols(), w.c_col ? ", m-major (C column-major)" : ""));
  e.line("const int lead = threadIdx.x % 128 == 0;  // the thread that issues the stores");
  e.comment("the previous tile's store has read the staging area");
  e.line("if (lead) tma_store_wait_read();");
  e.line("named_barrier(1 + consumer, 128);");
  e.line(
      "const int lr0 = 16 * (threadIdx.x / 32 % 4) + threadIdx.x % 32 / 4, lc0 = 2 * (threadIdx.x "
      "% 4);");
  emit_stmatrix_stores(e, p);
  e.open_scope("else");
  open_pair_loops(e, w);
  e.line(format("const int lr = lr0 + i * 64 + 8 * (r / 2 %% 2), lc = lc0 + j * %d + 8 * (r / 4);",
                w.inst_n));
  e.line("const int row = row0 - lr0 + lr, col = col0 - lc0 + lc;");
  e.line(w.c_col ? "const T* c = C + (size_t)col * ldc + row;  // C column-major"
                 : "const T* c = C + (size_t)row * ldc + col;");
  e.comment("outside the matrix: not stored (TMA clips), so not computed (bias, C unread)");
  e.line("const bool in = row < M && col < N;");
  e.line("const float v0 = in ? epilogue_value(acc[i][j][r], c, col, alpha, beta, bias) : 0.0f;");
  e.line(
      format("const float v1 = in && col + 1 < N ? epilogue_value(acc[i][j][r + 1], %s, col + 1, "
             "alpha, beta, bias) : 0.0f;",
             w.c_col ? "c + ldc" : "c + 1"));
  e.line(format("const %s h = %s(v0, v1);", T2.c_str(), pack.c_str()));
  if (w.c_col) {
    e.comment("m-major staging: the pair's two columns are two 128-byte rows");
    e.line("const unsigned hv = *reinterpret_cast<const unsigned*>(&h);");
    e.line("#pragma unroll");
    e.open_scope("for (int x = 0; x < 2; ++x)");
    e.line(
        format("const unsigned off = (lr / 64) * %du + (lc + x) * 128u + ((((lr %% 64) / 8) ^ "
               "((lc + x) %% 8)) * 16u) + (lr %% 8) * 2u;",
               w.c_stage_rows() * 128));
    e.line(
        "asm volatile(\"st.shared.b16 [%0], %1;\\n\" ::\"r\"(sC + off), "
        "\"h\"((unsigned short)(hv >> (16 * x))) : \"memory\");");
    e.close_scope();
  } else {
    e.line(
        format("const unsigned off = (lc / %d) * %du + lr * 128u + ((((lc %% %d) / 8) ^ (lr %% 8)) "
               "* 16u) + (lc %% 8) * 2u;",
               w.c_panel_cols(), w.wg_m * 128, w.c_panel_cols()));
    e.line(
        "asm volatile(\"st.shared.b32 [%0], %1;\\n\" ::\"r\"(sC + off), "
        "\"r\"(*reinterpret_cast<const unsigned*>(&h)) : \"memory\");");
  }
  close_pair_loops(e);
  e.close_scope();
  e.line("fence_proxy_async();  // the stores above are read by TMA next");
  e.line("named_barrier(1 + consumer, 128);");
  e.open_scope("if (c_tma && lead)");
  e.line("#pragma unroll");
  if (w.c_col)  // boxes of C's N x M tensor map: (wg_n, 64) at (m, n)
    e.line(format(
        "for (int q = 0; q < %d; ++q) tma_store_2d(tma_c, sC + q * %du, row0 - lr0 + q * 64, "
        "col0 - lc0%s);",
        w.c_stage_panels(), w.c_stage_rows() * 128, tma_gemm_arg(p).c_str()));
  else
    e.line(
        format("for (int q = 0; q < %d; ++q) tma_store_2d(tma_c, sC + q * %du, col0 - lc0 + q * "
               "%d, row0 - lr0%s);",
               w.wg_n / w.c_panel_cols(), w.wg_m * 128, w.c_panel_cols(), tma_gemm_arg(p).c_str()));
  e.line("tma_store_commit();");
  e.close_scope();
  e.open_scope("else if (!c_tma)");
  emit_staged_copy_out(e, p);
  e.close_scope();
}

// tma_store of a 4-byte C (s8's int32; row-major): the consumer's tile is
// twice a 16-bit one's bytes, too many to stage whole beside the stages, so
// it goes out c_chunk_panels panels (32 columns each) at a time: before
// writing a chunk the staging area's previous store has read it, the
// accumulator pairs of the chunk's columns go in as one 8-byte st.shared
// each (two columns of one 16-byte chunk of the swizzle), then one thread
// stores the chunk's panels with TMA boxes and the warps go on, the store
// running on while they stage the next chunk or compute the next tile. C
// rows TMA cannot write (c_tma false) take the direct stores.
void emit_chunked_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int chunk_cols = w.c_chunk_panels * w.c_panel_cols();
  e.line(
      format("const unsigned sC = sA_u32 + %du + consumer * %du;  // %d panels of (%d, %d) at a "
             "time, 128-byte swizzle",
             w.c_offset_bytes, w.c_consumer_bytes, w.c_chunk_panels, w.wg_m, w.c_panel_cols()));
  e.open_scope("if (c_tma)");
  e.line("const int lead = threadIdx.x % 128 == 0;  // the thread that issues the stores");
  e.line(
      "const int lr0 = 16 * (threadIdx.x / 32 % 4) + threadIdx.x % 32 / 4, lc0 = 2 * (threadIdx.x "
      "% 4);");
  e.line("#pragma unroll");
  e.open_scope(format("for (int g = 0; g < %d; ++g)", w.c_chunks()));
  e.comment("the previous store (of the last chunk, or of the last tile) has read the area");
  e.line("if (lead) tma_store_wait_read();");
  e.line("named_barrier(1 + consumer, 128);");
  open_pair_loops(e, w);
  e.line(format("const int lc = j * %d + 8 * (r / 4);  // this pair's columns: lc + lc0, + 1",
                w.inst_n));
  e.line(format("if (lc / %d != g) continue;  // another chunk's (resolved at compile time)",
                chunk_cols));
  e.line("const int lr = lr0 + i * 64 + 8 * (r / 2 % 2), c = lc % " + std::to_string(chunk_cols) +
         " + lc0;");
  e.line("const int row = row0 - lr0 + lr, col = col0 - lc0 + lc + lc0;");
  e.line("const int* cp = C + (size_t)row * ldc + col;");
  e.comment("outside the matrix: not stored (TMA clips), so not computed (bias, C unread)");
  e.line("const bool in = row < M && col < N;");
  e.line("const int v0 = in ? epilogue_value(acc[i][j][r], cp, col, alpha, beta, bias) : 0;");
  e.line(
      "const int v1 = in && col + 1 < N ? epilogue_value(acc[i][j][r + 1], cp + 1, col + 1, "
      "alpha, beta, bias) : 0;");
  e.line(
      format("const unsigned off = (c / %d) * %du + lr * 128u + ((((c %% %d) / 4) ^ (lr %% 8)) * "
             "16u) + (c %% 4) * 4u;",
             w.c_panel_cols(), w.wg_m * 128, w.c_panel_cols()));
  e.line(
      "asm volatile(\"st.shared.v2.b32 [%0], {%1, %2};\\n\" ::\"r\"(sC + off), \"r\"(v0), "
      "\"r\"(v1) : \"memory\");");
  close_pair_loops(e);
  e.line("fence_proxy_async();  // the stores above are read by TMA next");
  e.line("named_barrier(1 + consumer, 128);");
  e.open_scope("if (lead)");
  e.line("#pragma unroll");
  e.line(format(
      "for (int q = 0; q < %d; ++q) tma_store_2d(tma_c, sC + q * %du, col0 - lc0 + g * %d + q * "
      "%d, "
      "row0 - lr0%s);",
      w.c_chunk_panels, w.wg_m * 128, chunk_cols, w.c_panel_cols(), tma_gemm_arg(p).c_str()));
  e.line("tma_store_commit();");
  e.close_scope();
  e.close_scope("g");
  e.close_scope();
  e.open_scope("else");
  emit_direct_stores(e, p);
  e.close_scope();
}

}  // namespace

std::string consumer_row_in_tile(const WgmmaPlan& w) {
  return format("(consumer / %d) * %d + 16 * (threadIdx.x / 32 %% 4) + threadIdx.x %% 32 / 4",
                w.consumers_n, w.wg_m);
}

void emit_wgmma_tile_stores(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  if (w.swapped) return emit_wgmma_tf32_stores(e, p);
  e.comment(
      "epilogue: register r of instruction (i, j) is row 16 * warp + lane / 4 + 8 * (r / 2 % 2),");
  e.comment("column 8 * (r / 4) + 2 * (lane % 4) + r % 2 of that instruction's tile");
  if (w.pingpong) {
    e.line("const int row0 = tile_m0 + 16 * (threadIdx.x / 32 % 4) + threadIdx.x % 32 / 4;");
    e.line("const int col0 = tile_n0 + 2 * (threadIdx.x % 4);");
  } else {
    if (!p.schedule.halo)  // halo: the rows are h_rows (emit_halo_rows)
      e.line("const int row0 = tile_m0 + " + consumer_row_in_tile(w) + ";");
    e.line(format("const int col0 = tile_n0 + (consumer %% %d) * %d + 2 * (threadIdx.x %% 4);",
                  w.consumers_n, w.wg_n));
  }
  if (w.tma_store) {
    e.comment(format("tma_store %s", origin_note(p.schedule, p.schedule.tma_store_at).c_str()));
    if (w.c_elem_bytes == 4)
      emit_chunked_stores(e, p);
    else
      emit_staged_stores(e, p);
  } else {
    emit_direct_stores(e, p);
  }
}

void emit_wgmma_tile_end(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.close_scope(w.persistent ? "t" : "");  // the tile scope opened by emit_wgmma_consumer
  if (w.tma_store && !w.swapped) {
    e.comment("the last store has finished before the block (and its shared memory) ends");
    e.line("if (c_tma && threadIdx.x % 128 == 0) tma_store_wait();");
  }
}

void emit_wgmma_epilogue(Emitter& e, const KernelPlan& p) {
  emit_wgmma_tile_stores(e, p);
  emit_wgmma_tile_end(e, p);
}

}  // namespace schedc::codegen
