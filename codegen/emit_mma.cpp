// The tensor-core code generator: prints a KernelPlan with plan.mma set as
// one CUDA module with two entries sharing one templated body:
//   <name>           16-byte cp.async copies (A, B, C 16-byte aligned, lda/ldb/ldc
//                    multiples of 16 bytes), pair stores of C;
//   <name>_fallback  element-wise checked loads into the same shared layout,
//                    scalar stores: correct for any pointer and leading dimension.
// The body: block rasterization, N-stage shared pipeline, per-warp fragment
// loops (ldmatrix + mma.sync, or WMMA), predicated epilogue.
#include "codegen/emit_mma.h"

#include <string>
#include <vector>

#include "codegen/blocks_common.h"
#include "codegen/blocks_cp_async.h"
#include "codegen/blocks_ldmatrix.h"
#include "codegen/blocks_mma.h"
#include "codegen/blocks_tma.h"
#include "codegen/emitter.h"
#include "compiler/copy_notes.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::DType;
using compiler::KernelPlan;
using compiler::MmaApi;
using compiler::MmaPlan;
using compiler::MmaType;
using compiler::SmemTile;

namespace {

// Builds the module text; one instance per plan.
class MmaEmitter {
 public:
  MmaEmitter(const KernelPlan& p, std::string name)
      : p_(p), m_(*p.mma), name_(std::move(name)), T_(element_type(p.dtype)) {
    sync_ = m_.api == MmaApi::mma_sync;
    tf32_ = m_.type == MmaType::tf32;
    if (sync_) {
      instr_ = find_mma_instr(m_.api, m_.type, m_.inst_m, m_.inst_n, m_.inst_k);
      SCHEDC_INTERNAL_ASSERT(instr_, "no mma.sync instruction for this type and shape");
      SCHEDC_INTERNAL_ASSERT(instr_->regs_a == m_.regs_a && instr_->regs_b == m_.regs_b,
                             "plan and instruction table disagree on fragment registers");
    } else {
      instr_ = find_mma_instr(m_.api, m_.type, m_.inst_m, m_.inst_n, m_.inst_k);
      SCHEDC_INTERNAL_ASSERT(instr_, "no WMMA fragment for this type and shape");
    }
  }

  std::string run() {
    header();
    helpers();
    tile_loaders();
    epilogue_helpers();
    body(true, "gemm_body", main_uses_tma());
    if (simple_fallback())
      body(false, "gemm_body_simple", false);
    else if (main_uses_tma())
      body(true, "gemm_body_cp_async", false);  // the fallback: no tensor maps, any alignment
    entries();
    return e_.str();
  }

 private:
  const KernelPlan& p_;
  const MmaPlan& m_;
  std::string name_;
  std::string T_;
  bool sync_ = true, tf32_ = false;
  const MmaInstr* instr_ = nullptr;
  Emitter e_;

  int threads() const { return p_.block_threads; }

  void header() {
    emit_module_header(e_, p_);
    e_.comment(format("block tile %dx%dx%d, %d warps of %dx%d (%dx%d), %d threads", p_.block_m,
                      p_.block_n, p_.block_k, m_.warps_m * m_.warps_n, m_.warp_m, m_.warp_n,
                      m_.warps_m, m_.warps_n, threads()));
    e_.comment(format("per warp: %dx%d %s instructions (%s), %d k-steps per tile", m_.frags_m,
                      m_.frags_n, sync_ ? "mma.sync" : "WMMA", instr_->name, m_.k_steps));
    e_.comment(format("shared: %d stage(s) x (%d + %d) bytes = %d bytes (dynamic)", m_.stages,
                      m_.a.stage_bytes, m_.b.stage_bytes, p_.smem_bytes));
    if (!sync_) {
      e_.line("#include <mma.h>");
      e_.line("using namespace nvcuda;");
    }
    e_.line();
    e_.line(format("typedef %s T;", T_.c_str()));
    e_.line();
  }

  void helpers() {
    emit_cp_async_helpers(e_);
    if (m_.tma) emit_tma_helpers(e_);
    emit_smem_offset_fn(e_, "sA_offset", m_.a, "A, k contiguous");
    emit_smem_offset_fn(e_, "sB_offset", m_.b, "B, n contiguous");
    if (!sync_) return;
    if (m_.ldmatrix_a) emit_ldmatrix_helper(e_, instr_->regs_a, false);
    if (m_.ldmatrix_b) emit_ldmatrix_helper(e_, b_ldmatrix_count(), true);
    e_.line();
    if (tf32_) emit_tf32_convert_helper(e_, m_.tf32_rounding);
    if (tf32_ && m_.stages >= 2) emit_lds_helper();
    emit_mma_sync_helper(e_, *instr_);
  }

  // lds_b(addr): m_.b_vec f32 from a shared byte address (tf32 B fragments).
  void emit_lds_helper() {
    const int v = m_.b_vec;
    e_.comment(
        format("%d-byte shared load of %d n-contiguous f32 (tf32 B, %d fragment(s))", 4 * v, v, v));
    if (v == 1) {
      e_.open_scope("__device__ __forceinline__ void lds_b(float (&r)[1], unsigned addr)");
      e_.line("asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(r[0]) : \"r\"(addr));");
    } else if (v == 2) {
      e_.open_scope("__device__ __forceinline__ void lds_b(float (&r)[2], unsigned addr)");
      e_.line(
          "asm volatile(\"ld.shared.v2.f32 {%0, %1}, [%2];\\n\" : \"=f\"(r[0]), \"=f\"(r[1]) : "
          "\"r\"(addr));");
    } else {
      e_.open_scope("__device__ __forceinline__ void lds_b(float (&r)[4], unsigned addr)");
      e_.line(
          "asm volatile(\"ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\\n\" : \"=f\"(r[0]), "
          "\"=f\"(r[1]), \"=f\"(r[2]), \"=f\"(r[3]) : \"r\"(addr));");
    }
    e_.close_scope();
    e_.line();
  }

  int b_frags_per_ldmatrix() const { return m_.b_frags_per_ldmatrix; }
  int b_ldmatrix_count() const { return b_frags_per_ldmatrix() * instr_->regs_b; }

  void copy_chunk_checked() {
    const int v = m_.a.chunk_elems();
    if (m_.elem_bytes == 4) {
      e_.comment(format(
          "fallback copy: %d elements of a row, one 4-byte cp.async each (any f32 address", v));
      e_.comment("is 4-byte aligned), zero-filled past the edge: the pipeline stays asynchronous");
      e_.lines(
          R"(__device__ __forceinline__ void cp_async_4(unsigned dst_smem, const void* src_global, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_smem), "l"(src_global),
               "r"(src_bytes));
})");
      e_.open_scope(
          "__device__ __forceinline__ void copy_chunk_checked(T* dst_smem, const T* src, int ld, "
          "int row, int col, int rows, int cols)");
      e_.line("const unsigned dst = smem_u32(dst_smem);");
      e_.line("const bool row_ok = row < rows;");
      e_.line("#pragma unroll");
      e_.open_scope(format("for (int i = 0; i < %d; ++i)", v));
      e_.line("const bool ok = row_ok && col + i < cols;");
      e_.line("cp_async_4(dst + 4 * i, ok ? src + (size_t)row * ld + col + i : src, ok ? 4 : 0);");
      e_.close_scope();
      e_.close_scope();
      e_.line();
      return;
    }
    e_.comment(
        format("fallback copy: %d elements of a row, each checked and stored as it comes; zero "
               "past the edge",
               v));
    e_.open_scope(
        "__device__ __forceinline__ void copy_chunk_checked(T* dst_smem, const T* src, int ld, "
        "int row, int col, int rows, int cols)");
    e_.line("const unsigned short* bits = reinterpret_cast<const unsigned short*>(src);");
    e_.line("unsigned short* dst = reinterpret_cast<unsigned short*>(dst_smem);");
    e_.line("const bool row_ok = row < rows;");
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int i = 0; i < %d; ++i)", v));
    e_.line(
        "dst[i] = row_ok && col + i < cols ? bits[(size_t)row * ld + col + i] : (unsigned "
        "short)0;");
    e_.close_scope();
    e_.close_scope();
    e_.line();
  }

  void tile_loader(const char* op, const SmemTile& t, const compiler::CopyMap& c,
                   const char* rows_name, const char* cols_name) {
    e_.comment(
        format("(%d, %d) tile of %s at (row0, col0) -> one shared stage: %d 16-byte chunks, %s%d "
               "per thread",
               t.rows, t.cols, op, c.chunks, c.needs_guard() ? "at most " : "", c.iters));
    if (c.needs_guard())
      e_.comment(format(
          "uneven: %s have no chunk in round i = %d and skip it",
          compiler::thread_range(c.chunks - (c.iters - 1) * c.threads, c.threads - 1).c_str(),
          c.iters - 1));
    e_.line("template <bool kAligned>");
    e_.open_scope(
        format("__device__ __forceinline__ void load_tile_%s(T* s%s_stage, const T* g%s, int ld, "
               "int %s, int %s, int row0, int col0)",
               op, op, op, rows_name, cols_name));
    e_.open_scope("if (!kAligned)");
    e_.comment(
        "fallback: a rolled loop (unrolled element-wise copies would hold too many registers)");
    e_.line("#pragma unroll 1");
    e_.open_scope(format("for (int i = 0; i < %d; ++i)", c.iters));
    e_.line(format("const int idx = threadIdx.x + i * %d;", c.threads));
    if (c.needs_guard()) e_.line(format("if (idx >= %d) break;", c.chunks));
    e_.line(format("const int row = idx / %d, col = (idx %% %d) * %d;", c.chunks_per_row,
                   c.chunks_per_row, c.chunk_elems));
    e_.line(
        format("copy_chunk_checked(s%s_stage + s%s_offset(row, col), g%s, ld, row0 + row, col0 + "
               "col, %s, %s);",
               op, op, op, rows_name, cols_name));
    e_.close_scope();
    e_.line("return;");
    e_.close_scope();
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int i = 0; i < %d; ++i)", c.iters));
    e_.line(format("const int idx = threadIdx.x + i * %d;", c.threads));
    if (c.needs_guard()) e_.line(format("if (idx >= %d) break;", c.chunks));
    e_.line(format("const int row = idx / %d, col = (idx %% %d) * %d;", c.chunks_per_row,
                   c.chunks_per_row, c.chunk_elems));
    e_.line(format("T* dst = s%s_stage + s%s_offset(row, col);", op, op));
    e_.open_scope("if (kAligned)");
    e_.comment(
        "bytes past the matrix edge are zero-filled; none are read from an out-of-range row");
    e_.line(format("const int valid = row0 + row < %s ? min(max(%s - (col0 + col), 0), %d) : 0;",
                   rows_name, cols_name, c.chunk_elems));
    e_.line(format("const T* src = valid > 0 ? g%s + (size_t)(row0 + row) * ld + col0 + col : g%s;",
                   op, op));
    e_.line(format("cp_async_16(smem_u32(dst), src, valid * %d);", m_.elem_bytes));
    e_.close_scope();
    e_.open_scope("else");
    e_.line(format("copy_chunk_checked(dst, g%s, ld, row0 + row, col0 + col, %s, %s);", op,
                   rows_name, cols_name));
    e_.close_scope();
    e_.close_scope();
    e_.close_scope();
    e_.line();
  }

  void tile_loaders() {
    copy_chunk_checked();
    tile_loader("A", m_.a, m_.copy_a, "M", "K");
    tile_loader("B", m_.b, m_.copy_b, "K", "N");
    if (m_.tma) tma_tile_copy();
  }

  // ---- `tma`: one thread copies a k-tile with TMA boxes ----------------------
  int b_panels() const { return m_.b.cols / m_.b.panel_cols; }
  int b_panel_bytes() const { return m_.b.rows * m_.b.panel_cols * m_.elem_bytes; }
  void tma_tile_copy() {
    e_.comment(
        format("tma %s: k-tile at column k0 -> one stage: A as one (%d, %d) box, B as %d "
               "(%d, %d) boxes",
               origin_note(p_.schedule, p_.schedule.tma_at).c_str(), m_.a.rows, m_.a.cols,
               b_panels(), m_.b.rows, m_.b.panel_cols));
    e_.comment("(column panels); `full` completes when all their bytes have landed");
    e_.open_scope(
        "__device__ __forceinline__ void tma_copy_tile(const TmaMap& tma_a, const TmaMap& tma_b, "
        "unsigned sa, unsigned sb, unsigned full, int k0, int tile_m0, int tile_n0)");
    e_.line(format("mbar_expect_tx(full, %du);  // %d + %d bytes",
                   m_.a.stage_bytes + m_.b.stage_bytes, m_.a.stage_bytes, m_.b.stage_bytes));
    e_.line("tma_load_2d(sa, tma_a, full, k0, tile_m0);");
    e_.line("#pragma unroll");
    e_.line(
        format("for (int p = 0; p < %d; ++p) tma_load_2d(sb + p * %du, tma_b, full, tile_n0 + p * "
               "%d, k0);",
               b_panels(), b_panel_bytes(), m_.b.panel_cols));
    e_.close_scope();
    e_.line();
  }

  void epilogue_helpers() {
    emit_epilogue_helpers(e_, p_);
    e_.comment(
        "C[row][col], C[row][col + 1] (col even) through epilogue_value; out-of-range ones "
        "skipped");
    e_.line("template <bool kAligned>");
    e_.open_scope(
        "__device__ __forceinline__ void store_c_pair(T* C, int ldc, int M, int N, int row, int "
        "col, "
        "float v0, float v1, float alpha, float beta, const float* bias)");
    e_.line("if (row >= M) return;");
    e_.line("T* dst = C + (size_t)row * ldc + col;");
    e_.open_scope("if (kAligned && col + 1 < N)");
    e_.line("const float r0 = epilogue_value(v0, dst, col, alpha, beta, bias);");
    e_.line("const float r1 = epilogue_value(v1, dst + 1, col + 1, alpha, beta, bias);");
    if (p_.dtype == DType::f16)
      e_.line("*reinterpret_cast<__half2*>(dst) = __floats2half2_rn(r0, r1);");
    else if (p_.dtype == DType::bf16)
      e_.line("*reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(r0, r1);");
    else
      e_.line("*reinterpret_cast<float2*>(dst) = make_float2(r0, r1);");
    e_.line("return;");
    e_.close_scope();
    e_.line("if (col < N) store_c(dst, col, v0, alpha, beta, bias);");
    e_.line("if (col + 1 < N) store_c(dst + 1, col + 1, v1, alpha, beta, bias);");
    e_.close_scope();
    e_.line();
    if (m_.b_vec == 4 && p_.dtype == DType::f32) {
      e_.comment("C[row][col .. col + 3] (col a multiple of 4): one 16-byte store when aligned");
      e_.line("template <bool kAligned>");
      e_.open_scope(
          "__device__ __forceinline__ void store_c_quad(T* C, int ldc, int M, int N, int row, int "
          "col, "
          "float v0, float v1, float v2, float v3, float alpha, float beta, const float* bias)");
      e_.line("if (row >= M) return;");
      e_.open_scope("if (kAligned && col + 3 < N)");
      e_.line("T* dst = C + (size_t)row * ldc + col;");
      e_.line(
          "*reinterpret_cast<float4*>(dst) = make_float4(epilogue_value(v0, dst, col, alpha, beta, "
          "bias), "
          "epilogue_value(v1, dst + 1, col + 1, alpha, beta, bias), epilogue_value(v2, dst + 2, "
          "col + 2, "
          "alpha, beta, bias), epilogue_value(v3, dst + 3, col + 3, alpha, beta, bias));");
      e_.line("return;");
      e_.close_scope();
      e_.line("store_c_pair<kAligned>(C, ldc, M, N, row, col, v0, v1, alpha, beta, bias);");
      e_.line("store_c_pair<kAligned>(C, ldc, M, N, row, col + 2, v2, v3, alpha, beta, bias);");
      e_.close_scope();
      e_.line();
    }
  }

  void rasterize() {
    emit_tile_constants(e_, p_);
    e_.line("static_assert(THREADS % 32 == 0, \"whole warps\");");
    emit_block_index(e_, p_);
  }

  void compute_mma_sync(Emitter& e, const std::string& stage) {
    const int v = m_.a.chunk_elems();
    const int ik = m_.inst_k;
    e.line(format("const T* sA_stage = sA + %s * %d;", stage.c_str(),
                  m_.a.stage_bytes / m_.elem_bytes));
    e.line(format("const T* sB_stage = sB + %s * %d;", stage.c_str(),
                  m_.b.stage_bytes / m_.elem_bytes));
    e.line("#pragma unroll");
    e.open_scope(format("for (int kk = 0; kk < %d; ++kk)", m_.k_steps));
    e.line(format("unsigned a_frag[%d][%d];  // (%d, %d) A fragments%s", m_.frags_m, instr_->regs_a,
                  m_.inst_m, ik, tf32_ ? ", tf32 bits" : ""));
    e.line(format("unsigned b_frag[%d][%d];  // (%d, %d) B fragments%s", m_.frags_n, instr_->regs_b,
                  ik, m_.inst_n, tf32_ ? ", tf32 bits" : ""));
    e.line("#pragma unroll");
    e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e.line(format(
        "ldmatrix_x%d(a_frag[mi], smem_u32(sA_stage + sA_offset(warp_row0 + mi * 16 + a_ld_row, "
        "kk * %d + a_ld_col)));",
        instr_->regs_a, ik));
    if (tf32_) {
      e.line("#pragma unroll");
      e.line(
          format("for (int r = 0; r < %d; ++r) a_frag[mi][r] = "
                 "f32_to_tf32(__uint_as_float(a_frag[mi][r]));",
                 instr_->regs_a));
    }
    e.close_scope();
    if (m_.ldmatrix_b) {
      const int per = b_frags_per_ldmatrix(), rb = instr_->regs_b, cnt = per * rb;
      e.line("#pragma unroll");
      e.open_scope(format("for (int ni = 0; ni < %d; ni += %d)", m_.frags_n, per));
      e.line(format("unsigned r[%d];  // %d B fragment(s), k-major rows transposed by ldmatrix",
                    cnt, per));
      e.line(
          format("ldmatrix_x%d_trans(r, smem_u32(sB_stage + sB_offset(kk * %d + b_ld_row, "
                 "warp_col0 + ni * 8 "
                 "+ b_ld_col)));",
                 cnt, ik));
      for (int q = 0; q < per; ++q)
        for (int i = 0; i < rb; ++i)
          e.line(format("b_frag[ni + %d][%d] = r[%d];", q, i, q * rb + i));
      e.close_scope();
    } else {
      // tf32 B: b_i = B[k = tq + 4i][n = g], one 4-byte shared load each.
      e.line("#pragma unroll");
      e.open_scope(format("for (int ni = 0; ni < %d; ++ni)", m_.frags_n));
      for (int i = 0; i < instr_->regs_b; ++i)
        e.line(
            format("b_frag[ni][%d] = f32_to_tf32(sB_stage[sB_offset(kk * %d + tq + %d, warp_col0 + "
                   "ni * 8 + g)]);",
                   i, ik, 4 * i));
      e.close_scope();
    }
    e.line("#pragma unroll");
    e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e.line("#pragma unroll");
    e.line(
        format("for (int ni = 0; ni < %d; ++ni) mma_%dx%dx%d(acc[mi][ni], a_frag[mi], b_frag[ni]);",
               m_.frags_n, instr_->m, instr_->n, instr_->k));
    e.close_scope();
    e.close_scope("kk");
    (void)v;
  }

  std::string wmma_type() const {
    if (m_.type == MmaType::tf32) return "wmma::precision::tf32";
    if (m_.type == MmaType::bf16) return "__nv_bfloat16";
    return "half";
  }
  std::string wmma_shape() const { return format("%d, %d, %d", m_.inst_m, m_.inst_n, m_.inst_k); }

  void compute_wmma(Emitter& e, const std::string& stage) {
    e.line(format("const T* sA_stage = sA + %s * %d;", stage.c_str(),
                  m_.a.stage_bytes / m_.elem_bytes));
    e.line(format("const T* sB_stage = sB + %s * %d;", stage.c_str(),
                  m_.b.stage_bytes / m_.elem_bytes));
    e.line("#pragma unroll");
    e.open_scope(format("for (int kk = 0; kk < %d; ++kk)", m_.k_steps));
    e.line(format("wmma::fragment<wmma::matrix_a, %s, %s, wmma::row_major> a_frag[%d];",
                  wmma_shape().c_str(), wmma_type().c_str(), m_.frags_m));
    e.line(format("wmma::fragment<wmma::matrix_b, %s, %s, wmma::row_major> b_frag[%d];",
                  wmma_shape().c_str(), wmma_type().c_str(), m_.frags_n));
    e.line("#pragma unroll");
    e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e.line(
        format("wmma::load_matrix_sync(a_frag[mi], sA_stage + sA_offset(warp_row0 + mi * %d, kk * "
               "%d), %d);",
               m_.inst_m, m_.inst_k, m_.a.row_stride));
    if (tf32_) {
      e.line("#pragma unroll");
      e.line(
          "for (int t = 0; t < a_frag[mi].num_elements; ++t) a_frag[mi].x[t] = "
          "wmma::__float_to_tf32(a_frag[mi].x[t]);");
    }
    e.close_scope();
    e.line("#pragma unroll");
    e.open_scope(format("for (int ni = 0; ni < %d; ++ni)", m_.frags_n));
    e.line(
        format("wmma::load_matrix_sync(b_frag[ni], sB_stage + sB_offset(kk * %d, warp_col0 + ni * "
               "%d), %d);",
               m_.inst_k, m_.inst_n, m_.b.row_stride));
    if (tf32_) {
      e.line("#pragma unroll");
      e.line(
          "for (int t = 0; t < b_frag[ni].num_elements; ++t) b_frag[ni].x[t] = "
          "wmma::__float_to_tf32(b_frag[ni].x[t]);");
    }
    e.close_scope();
    e.line("#pragma unroll");
    e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e.line("#pragma unroll");
    e.line(format(
        "for (int ni = 0; ni < %d; ++ni) wmma::mma_sync(acc[mi][ni], a_frag[mi], b_frag[ni], "
        "acc[mi][ni]);",
        m_.frags_n));
    e.close_scope();
    e.close_scope("kk");
  }

  void epilogue_mma_sync() {
    const int P = m_.b_vec;
    if (P > 1) {
      e_.comment(
          format("epilogue: accumulator i of fragment ni is row g + 8 * (i / 2), column %d * (2 * "
                 "tq + i %% 2)",
                 P));
      e_.comment(
          format("+ ni %% %d of its group of %d fragments (%d columns): lanes store %d consecutive "
                 "columns",
                 P, P, 8 * P, P));
      e_.line("#pragma unroll");
      e_.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
      e_.line("#pragma unroll");
      e_.open_scope(format("for (int q = 0; q < %d; ++q)", m_.frags_n / P));
      e_.line("#pragma unroll");
      e_.open_scope("for (int i = 0; i < 4; ++i)");
      e_.line("const int row = tile_m0 + warp_row0 + mi * 16 + g + 8 * (i / 2);");
      if (m_.b_chunk_permuted) {
        e_.line(
            "const int c = 2 * tq + i % 2;  // fragment column, stored at chunk (c & 1) * 4 + c / "
            "2");
        e_.line(format(
            "const int col = tile_n0 + warp_col0 + q * %d + %d * (((c & 1) << 2) | (c >> 1));",
            8 * P, P));
      } else {
        e_.line(format("const int col = tile_n0 + warp_col0 + q * %d + %d * (2 * tq + i %% 2);",
                       8 * P, P));
      }
      if (P == 4)
        e_.line(
            "store_c_quad<kAligned>(C, ldc, M, N, row, col, acc[mi][4 * q][i], acc[mi][4 * q + "
            "1][i], "
            "acc[mi][4 * q + 2][i], acc[mi][4 * q + 3][i], alpha, beta, bias);");
      else
        e_.line(
            "store_c_pair<kAligned>(C, ldc, M, N, row, col, acc[mi][2 * q][i], acc[mi][2 * q + "
            "1][i], "
            "alpha, beta, bias);");
      e_.close_scope();
      e_.close_scope();
      e_.close_scope();
      return;
    }
    e_.comment("epilogue: accumulator i of a 16x8 fragment is (g + 8 * (i / 2), 2 * tq + i % 2)");
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int ni = 0; ni < %d; ++ni)", m_.frags_n));
    e_.line("#pragma unroll");
    e_.open_scope("for (int h = 0; h < 2; ++h)");
    e_.line("const int row = tile_m0 + warp_row0 + mi * 16 + g + 8 * h;");
    e_.line("const int col = tile_n0 + warp_col0 + ni * 8 + 2 * tq;");
    e_.line(
        "store_c_pair<kAligned>(C, ldc, M, N, row, col, acc[mi][ni][2 * h], acc[mi][ni][2 * h + "
        "1], "
        "alpha, beta, bias);");
    e_.close_scope();
    e_.close_scope();
    e_.close_scope();
  }

  void epilogue_wmma() {
    const int fm = m_.inst_m, fn = m_.inst_n;
    e_.comment("epilogue: WMMA accumulators have no documented layout; each warp stores one");
    e_.comment(
        format("(%d, %d) fragment at a time to its own f32 scratch in the (now idle) shared memory",
               fm, fn));
    e_.line("__syncthreads();  // every warp is done reading the pipeline stages");
    e_.line(format("float* scratch = reinterpret_cast<float*>(smem) + warp * %d;", fm * fn));
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int ni = 0; ni < %d; ++ni)", m_.frags_n));
    e_.line(format("wmma::store_matrix_sync(scratch, acc[mi][ni], %d, wmma::mem_row_major);", fn));
    e_.line("__syncwarp();");
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int pair = lane; pair < %d; pair += 32)", fm * fn / 2));
    e_.line(format("const int r = (2 * pair) / %d, c = (2 * pair) %% %d;", fn, fn));
    e_.line(format("const int row = tile_m0 + warp_row0 + mi * %d + r;", fm));
    e_.line(format("const int col = tile_n0 + warp_col0 + ni * %d + c;", fn));
    e_.line(
        "store_c_pair<kAligned>(C, ldc, M, N, row, col, scratch[2 * pair], scratch[2 * pair + 1], "
        "alpha, "
        "beta, bias);");
    e_.close_scope();
    e_.line("__syncwarp();  // scratch is reused by the next fragment");
    e_.close_scope();
    e_.close_scope();
  }

  // ---- main-entry copies with per-thread precomputed addresses ---------------
  // When every thread keeps one chunk column across its chunks (threads a
  // multiple of chunks per row) and the shared offset of chunk i is the one of
  // chunk 0 plus a constant, a thread's copies of a tile are one global pointer
  // (advanced by the tile step), a row bound and constant shared offsets.
  bool fast_copy_ok(const SmemTile& t, const compiler::CopyMap& c) const {
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
  long fast_copy_delta(const SmemTile& t, const compiler::CopyMap& c, int i) const {
    int r0 = 0, c0 = 0, ri = 0, ci = 0;
    c.chunk(0, 0, r0, c0);
    c.chunk(0, i, ri, ci);
    return (long(t.offset(ri, ci)) - t.offset(r0, c0)) * m_.elem_bytes;
  }
  bool fast_copies() const {
    return fast_copy_ok(m_.a, m_.copy_a) && fast_copy_ok(m_.b, m_.copy_b);
  }
  // Declarations before the main loop (main entry only).
  void emit_fast_copy_setup() {
    const auto &ca = m_.copy_a, &cb = m_.copy_b;
    const int ra = ca.threads / ca.chunks_per_row, rb = cb.threads / cb.chunks_per_row;
    e_.comment(
        "copies: thread's chunk column and first row; chunk i is rows + i * (threads / chunks per "
        "row)");
    e_.line(format("const int ca_row = threadIdx.x / %d, ca_col = (threadIdx.x %% %d) * %d;",
                   ca.chunks_per_row, ca.chunks_per_row, ca.chunk_elems));
    e_.line(format("const int cb_row = threadIdx.x / %d, cb_col = (threadIdx.x %% %d) * %d;",
                   cb.chunks_per_row, cb.chunks_per_row, cb.chunk_elems));
    e_.line("const T* ga = A + (size_t)(tile_m0 + ca_row) * lda + ca_col;  // + k_tile * BK");
    e_.line("const T* gb = B + (size_t)cb_row * ldb + tile_n0 + cb_col;  // + k_tile * BK * ldb");
    e_.line(format("const size_t ga_step = (size_t)%d * lda, gb_step = (size_t)%d * ldb;", ra, rb));
    e_.line("const int ca_rows = M - tile_m0 - ca_row;  // chunk i in range: i * step < ca_rows");
    e_.line(format(
        "const int cb_bytes = min(max(N - tile_n0 - cb_col, 0), %d) * %d;  // B columns in range",
        cb.chunk_elems, m_.elem_bytes));
    e_.line(
        format("const unsigned ca_dst = sA_u32 + sA_offset(ca_row, ca_col) * %d, cb_dst = sB_u32 + "
               "sB_offset(cb_row, cb_col) * %d;",
               m_.elem_bytes, m_.elem_bytes));
  }
  // Copies of k-tile `kt` into `stage` (expressions), main entry.
  void emit_fast_copy(Emitter& e, const std::string& stage, const std::string& kt) {
    const auto &ca = m_.copy_a, &cb = m_.copy_b;
    const int ra = ca.threads / ca.chunks_per_row, rb = cb.threads / cb.chunks_per_row;
    e.open_scope("");
    e.line(format("const int kt = %s;", kt.c_str()));
    e.line(format("const int a_bytes = min(max(K - kt * BK - ca_col, 0), %d) * %d;", ca.chunk_elems,
                  m_.elem_bytes));
    e.line("const int b_rows = K - kt * BK - cb_row;  // chunk i in range: i * step < b_rows");
    e.line("const T* pa = ga + kt * BK;");
    e.line("const T* pb = gb + (size_t)kt * BK * ldb;");
    e.line(format("const unsigned da = ca_dst + %s * %du, db = cb_dst + %s * %du;", stage.c_str(),
                  m_.a.stage_bytes, stage.c_str(), m_.b.stage_bytes));
    for (int i = 0; i < ca.iters; ++i) {
      e.line(
          format("{ const int n = %d < ca_rows ? a_bytes : 0; cp_async_16(da + %ldu, n ? pa + %d * "
                 "ga_step : A, n); }",
                 i * ra, fast_copy_delta(m_.a, ca, i), i));
    }
    for (int i = 0; i < cb.iters; ++i) {
      e.line(
          format("{ const int n = %d < b_rows ? cb_bytes : 0; cp_async_16(db + %ldu, n ? pb + %d * "
                 "gb_step : B, n); }",
                 i * rb, fast_copy_delta(m_.b, cb, i), i));
    }
    e.close_scope();
  }

  // ---- mma.sync with stages >= 2: fragment double buffering -------------------
  //
  // Per-thread shared byte offsets of every fragment load, computed once before
  // the main loop. Offsets that differ from an earlier one by the same constant
  // for every thread of the block reuse it (`base + constant`, an immediate in
  // the load), so only a handful of registers hold addresses.
  struct OffsetBases {
    std::string prefix;
    std::vector<std::vector<long>> vals;
    std::vector<std::string> exprs;
    std::string get(const std::vector<long>& v, const std::string& expr) {
      for (size_t j = 0; j < vals.size(); ++j) {
        const long d = v[0] - vals[j][0];
        bool same = true;
        for (size_t t = 0; t < v.size() && same; ++t) same = v[t] - vals[j][t] == d;
        if (same)
          return d ? format("%s%zu + %ldu", prefix.c_str(), j, d)
                   : format("%s%zu", prefix.c_str(), j);
      }
      vals.push_back(v);
      exprs.push_back(expr);
      return format("%s%zu", prefix.c_str(), vals.size() - 1);
    }
  };
  OffsetBases a_bases_{"a_off", {}, {}}, b_bases_{"b_off", {}, {}};
  std::vector<std::vector<std::string>> a_addr_;  // [kk][mi]
  std::vector<std::vector<std::string>> b_addr_;  // [kk][load]: ldmatrix group or (group, i)

  struct ThreadCoord {
    int warp_row0, warp_col0, g, tq, a_ld_row, a_ld_col, b_ld_row, b_ld_col;
  };
  std::vector<ThreadCoord> thread_coords() const {
    std::vector<ThreadCoord> out;
    const int v = m_.a.chunk_elems(), ra = instr_->regs_a;
    const int kb = instr_->regs_b, cnt = m_.ldmatrix_b ? b_ldmatrix_count() : 1;
    for (int t = 0; t < threads(); ++t) {
      const int w = t / 32, l = t % 32;
      ThreadCoord c;
      c.warp_row0 = (w / m_.warps_n) * m_.warp_m;
      c.warp_col0 = (w % m_.warps_n) * m_.warp_n;
      c.g = l / 4;
      c.tq = l % 4;
      c.a_ld_row = ((l % (8 * ra)) / 8 % 2) * 8 + l % 8;
      c.a_ld_col = ((l % (8 * ra)) / 16) * v;
      c.b_ld_row = ((l % (8 * cnt)) / 8 % kb) * 8 + l % 8;
      c.b_ld_col = ((l % (8 * cnt)) / (8 * kb)) * 8;
      out.push_back(c);
    }
    return out;
  }

  void plan_fragment_addresses() {
    const auto tc = thread_coords();
    const int ik = m_.inst_k, eb = m_.elem_bytes;
    a_addr_.assign(m_.k_steps, {});
    b_addr_.assign(m_.k_steps, {});
    for (int kk = 0; kk < m_.k_steps; ++kk) {
      for (int mi = 0; mi < m_.frags_m; ++mi) {
        std::vector<long> v;
        for (const auto& c : tc)
          v.push_back(
              long(m_.a.offset(c.warp_row0 + mi * m_.inst_m + c.a_ld_row, kk * ik + c.a_ld_col)) *
              eb);
        a_addr_[kk].push_back(
            a_bases_.get(v, format("sA_offset(warp_row0 + %d + a_ld_row, %d + a_ld_col) * %d",
                                   mi * m_.inst_m, kk * ik, eb)));
      }
      if (m_.ldmatrix_b) {
        for (int ni = 0; ni < m_.frags_n; ni += b_frags_per_ldmatrix()) {
          std::vector<long> v;
          for (const auto& c : tc)
            v.push_back(long(m_.b.offset(kk * ik + c.b_ld_row, c.warp_col0 + ni * 8 + c.b_ld_col)) *
                        eb);
          b_addr_[kk].push_back(
              b_bases_.get(v, format("sB_offset(%d + b_ld_row, warp_col0 + %d + b_ld_col) * %d",
                                     kk * ik, ni * 8, eb)));
        }
      } else {
        const int P = m_.b_vec;
        for (int q = 0; q < m_.frags_n / P; ++q)
          for (int i = 0; i < instr_->regs_b; ++i) {
            std::vector<long> v;
            for (const auto& c : tc) {
              const int gc = m_.b_chunk_permuted ? compiler::tf32_b_lane_chunk(c.g) : c.g;
              v.push_back(
                  long(m_.b.offset(kk * ik + c.tq + 4 * i, c.warp_col0 + q * 8 * P + P * gc)) * eb);
            }
            b_addr_[kk].push_back(b_bases_.get(
                v, format("sB_offset(%d + tq, warp_col0 + %d + %d * %s) * %d", kk * ik + 4 * i,
                          q * 8 * P, P, m_.b_chunk_permuted ? "g_chunk" : "g", eb)));
          }
      }
    }
  }

  void emit_fragment_bases() {
    e_.comment("shared byte offsets of this thread's fragment loads (stage 0); the others are");
    e_.comment("these plus constants");
    for (size_t j = 0; j < a_bases_.exprs.size(); ++j)
      e_.line(format("const unsigned a_off%zu = %s;", j, a_bases_.exprs[j].c_str()));
    for (size_t j = 0; j < b_bases_.exprs.size(); ++j)
      e_.line(format("const unsigned b_off%zu = %s;", j, b_bases_.exprs[j].c_str()));
  }

  // Loads the fragments of k-step `kk` from the stage at shared addresses (sa, sb)
  // into fragment buffer `buf`.
  void load_fragments(Emitter& e, int buf, const std::string& sa, const std::string& sb, int kk) {
    for (int mi = 0; mi < m_.frags_m; ++mi) {
      e.line(format("ldmatrix_x%d(a_frag[%d][%d], %s + %s);", instr_->regs_a, buf, mi, sa.c_str(),
                    a_addr_[kk][mi].c_str()));
      if (tf32_)
        for (int r = 0; r < instr_->regs_a; ++r)
          e.line(format("a_frag[%d][%d][%d] = f32_to_tf32(__uint_as_float(a_frag[%d][%d][%d]));",
                        buf, mi, r, buf, mi, r));
    }
    if (m_.ldmatrix_b) {
      const int per = b_frags_per_ldmatrix(), rb = instr_->regs_b, cnt = per * rb;
      int n = 0;
      for (int ni = 0; ni < m_.frags_n; ni += per, ++n) {
        e.open_scope("");
        e.line(format("unsigned r[%d];", cnt));
        e.line(format("ldmatrix_x%d_trans(r, %s + %s);", cnt, sb.c_str(), b_addr_[kk][n].c_str()));
        for (int q = 0; q < per; ++q)
          for (int i = 0; i < rb; ++i)
            e.line(format("b_frag[%d][%d][%d] = r[%d];", buf, ni + q, i, q * rb + i));
        e.close_scope();
      }
    } else {
      const int P = m_.b_vec, rb = instr_->regs_b;
      int n = 0;
      for (int q = 0; q < m_.frags_n / P; ++q)
        for (int i = 0; i < rb; ++i, ++n) {
          e.open_scope("");
          e.line(format("float r[%d];", P));
          e.line(format("lds_b(r, %s + %s);", sb.c_str(), b_addr_[kk][n].c_str()));
          for (int j = 0; j < P; ++j)
            e.line(format("b_frag[%d][%d][%d] = f32_to_tf32(r[%d]);", buf, q * P + j, i, j));
          e.close_scope();
        }
    }
  }

  void mma_step(Emitter& e, int buf) {
    e.line("#pragma unroll");
    e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
    e.line("#pragma unroll");
    e.line(
        format("for (int ni = 0; ni < %d; ++ni) mma_%dx%dx%d(acc[mi][ni], a_frag[%d][mi], "
               "b_frag[%d][ni]);",
               m_.frags_n, instr_->m, instr_->n, instr_->k, buf, buf));
    e.close_scope();
  }

  // The pipeline (S = stages, KS = k-steps per tile):
  //   prologue: tiles 0..S-2 in flight; wait for tile 0; barrier; fragments of k-step 0
  //   for k_tile, for kk (unrolled):
  //     kk == KS-1: wait for tile k_tile+1, barrier, fragments of its k-step 0
  //     else:       fragments of k-step kk+1 (the other buffer)
  //     kk == 0 (before the barrier when KS == 1): cp.async of tile k_tile+S-1
  //                 into the stage read during k_tile-1
  //     mma on k-step kk's fragments
  // The barrier in k_tile-1 follows every read of the stage that k_tile
  // overwrites, and wait_group<S-2> there covers tile k_tile+1.
  void main_loop_pipelined() {
    const int S = m_.stages, KS = m_.k_steps;
    const int a_stage = m_.a.stage_bytes / m_.elem_bytes,
              b_stage = m_.b.stage_bytes / m_.elem_bytes;
    // No branch around the copies (so ptxas can interleave them with the mma):
    // a tile past K copies zeros (every chunk's row or column is out of range,
    // src-size 0) into the free stage, which nothing reads afterwards.
    const bool fast = fast_copies();
    auto tile_copy = [&](Emitter& e, const std::string& stage, const std::string& kt) {
      if (fast) {
        e.open_scope("if (kAligned)");
        emit_fast_copy(e, stage, kt);
        e.close_scope();
        e.open_scope("else");
      }
      e.line(format("load_tile_A<kAligned>(sA + %s * %d, A, lda, M, K, tile_m0, (%s) * BK);",
                    stage.c_str(), a_stage, kt.c_str()));
      e.line(format("load_tile_B<kAligned>(sB + %s * %d, B, ldb, K, N, (%s) * BK, tile_n0);",
                    stage.c_str(), b_stage, kt.c_str()));
      if (fast) e.close_scope();
    };
    auto global_loads = [&](Emitter& e) {
      tile_copy(e, "write_stage", format("k_tile + %d", S - 1));
      e.line("cp_async_commit();");
    };
    e_.line("const unsigned sA_u32 = smem_u32(sA), sB_u32 = smem_u32(sB);");
    emit_fragment_bases();
    if (fast) emit_fast_copy_setup();
    e_.line(format("unsigned a_frag[2][%d][%d];  // (%d, %d) A fragments%s, two k-steps",
                   m_.frags_m, instr_->regs_a, m_.inst_m, m_.inst_k, tf32_ ? ", tf32 bits" : ""));
    e_.line(format("unsigned b_frag[2][%d][%d];  // (%d, %d) B fragments%s, two k-steps",
                   m_.frags_n, instr_->regs_b, m_.inst_k, m_.inst_n, tf32_ ? ", tf32 bits" : ""));
    e_.line("const int num_k_tiles = (K + BK - 1) / BK;");
    e_.comment(format("prologue: tiles 0..%d in flight, one commit group each", S - 2));
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int s = 0; s < %d; ++s)", S - 1));
    e_.open_scope("if (s < num_k_tiles)");
    tile_copy(e_, "s", "s");
    e_.close_scope();
    e_.line("cp_async_commit();");
    e_.close_scope();
    e_.line(format("cp_async_wait<%d>();  // tile 0 has landed (this thread's copies)", S - 2));
    e_.line("__syncthreads();  // ... and everyone's");
    load_fragments(e_, 0, "sA_u32", "sB_u32", 0);
    e_.line("int read_stage = 0;");
    e_.line(format("int write_stage = %d;", S - 1));
    e_.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
    e_.line(format("const unsigned sa = sA_u32 + read_stage * %du, sb = sB_u32 + read_stage * %du;",
                   m_.a.stage_bytes, m_.b.stage_bytes));
    e_.line(format("const int next_stage = read_stage == %d ? 0 : read_stage + 1;", S - 1));
    for (int kk = 0; kk < KS; ++kk) {
      e_.comment(format("k-step %d: compute on buffer %d", kk, kk % 2));
      if (kk == 0 && KS == 1) global_loads(e_);
      if (kk == KS - 1) {
        e_.line(format("cp_async_wait<%d>();  // tile k_tile + 1 has landed (this thread's copies)",
                       S - 2));
        e_.line(
            "__syncthreads();  // ... and everyone's; every read of the stage loaded next is done");
        e_.open_scope("");
        e_.comment(
            "after the last tile: reload the current stage (not written) instead of the next");
        e_.line("const int ns = k_tile + 1 < num_k_tiles ? next_stage : read_stage;");
        e_.line(format("const unsigned na = sA_u32 + ns * %du, nb = sB_u32 + ns * %du;",
                       m_.a.stage_bytes, m_.b.stage_bytes));
        load_fragments(e_, (kk + 1) % 2, "na", "nb", 0);
        e_.close_scope();
      } else {
        load_fragments(e_, (kk + 1) % 2, "sa", "sb", kk + 1);
      }
      if (kk == 0 && KS > 1) global_loads(e_);
      mma_step(e_, kk % 2);
    }
    copy_odd_fragments();
    e_.line("read_stage = next_stage;");
    e_.line(format("write_stage = write_stage == %d ? 0 : write_stage + 1;", S - 1));
    e_.close_scope("k_tile");
    e_.line("cp_async_wait<0>();  // only empty groups remain; leave nothing in flight");
  }

  // With an odd number of k-steps the next tile's first fragments are in buffer 1.
  void copy_odd_fragments() {
    if (m_.k_steps % 2 == 1) {
      e_.comment("odd number of k-steps: the next tile's first fragments are in buffer 1");
      e_.line("#pragma unroll");
      e_.line(format(
          "for (int i = 0; i < %d; ++i) a_frag[0][i / %d][i %% %d] = a_frag[1][i / %d][i %% %d];",
          m_.frags_m * instr_->regs_a, instr_->regs_a, instr_->regs_a, instr_->regs_a,
          instr_->regs_a));
      e_.line("#pragma unroll");
      e_.line(format(
          "for (int i = 0; i < %d; ++i) b_frag[0][i / %d][i %% %d] = b_frag[1][i / %d][i %% %d];",
          m_.frags_n * instr_->regs_b, instr_->regs_b, instr_->regs_b, instr_->regs_b,
          instr_->regs_b));
    }
  }

  // `tma` (sm_90+): thread 0 copies whole k-tiles with TMA boxes; per stage an
  // mbarrier `full` (one arrival with the byte count, then the bytes) and
  // `empty` (one arrival per warp once its fragments of the stage are in
  // registers). No __syncthreads in the loop:
  //   prologue: tiles 0..S-1 in flight; wait full[0]; fragments of k-step 0
  //   for k_tile: thread 0 waits empty for the stage of tile k_tile-1 and
  //               copies tile k_tile+S-1 into it
  //               kk < KS-1: fragments of k-step kk+1; mma on kk's
  //               kk == KS-1: arrive on empty; wait full of tile k_tile+1;
  //               its k-step 0 fragments; mma on kk's
  void main_loop_tma() {
    const int S = m_.stages, KS = m_.k_steps, warps = m_.warps_m * m_.warps_n;
    const unsigned as = m_.a.stage_bytes, bs = m_.b.stage_bytes;
    e_.line("const unsigned sA_u32 = smem_u32(sA), sB_u32 = smem_u32(sB);");
    e_.line(format("const unsigned full_bar = smem_u32(smem + %d), empty_bar = full_bar + %d;",
                   m_.barrier_offset_bytes, 8 * S));
    e_.open_scope("if (threadIdx.x == 0)");
    e_.comment(
        "the 128-byte swizzle is computed from shared addresses: stages must be 1024-byte aligned");
    e_.line("if (sA_u32 % 1024 != 0) __trap();");
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int s = 0; s < %d; ++s)", S));
    e_.line("mbar_init(full_bar + 8 * s, 1);  // thread 0's expect_tx, then the bytes");
    e_.line(format("mbar_init(empty_bar + 8 * s, %d);  // one arrival per warp", warps));
    e_.close_scope();
    e_.line("mbar_init_fence();");
    e_.close_scope();
    e_.line("__syncthreads();  // the barriers are ready for everyone");
    emit_fragment_bases();
    e_.line(format("unsigned a_frag[2][%d][%d];  // (%d, %d) A fragments, two k-steps", m_.frags_m,
                   instr_->regs_a, m_.inst_m, m_.inst_k));
    e_.line(format("unsigned b_frag[2][%d][%d];  // (%d, %d) B fragments, two k-steps", m_.frags_n,
                   instr_->regs_b, m_.inst_k, m_.inst_n));
    e_.line("const int num_k_tiles = (K + BK - 1) / BK;");
    e_.comment(format("prologue: tiles 0..%d in flight, stage s holds tile s", S - 1));
    e_.open_scope("if (threadIdx.x == 0)");
    e_.line("#pragma unroll");
    e_.open_scope(format("for (int s = 0; s < %d; ++s)", S));
    e_.line(
        format("if (s < num_k_tiles) tma_copy_tile(tma_a, tma_b, sA_u32 + s * %du, sB_u32 + s * "
               "%du, full_bar + 8 * s, s * BK, tile_m0, tile_n0);",
               as, bs));
    e_.close_scope();
    e_.close_scope();
    e_.line("mbar_wait(full_bar, 0);  // tile 0 has landed");
    load_fragments(e_, 0, "sA_u32", "sB_u32", 0);
    e_.comment(
        "k_tile's stage, and the parity of its barriers' current phase (flips at each wrap)");
    e_.line("int stage = 0;");
    e_.line("unsigned phase = 0;");
    e_.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
    e_.line(format("const unsigned sa = sA_u32 + stage * %du, sb = sB_u32 + stage * %du;", as, bs));
    e_.line(format("const int next_stage = stage == %d ? 0 : stage + 1;", S - 1));
    e_.line(format("const unsigned next_phase = stage == %d ? phase ^ 1u : phase;", S - 1));
    e_.open_scope(
        format("if (threadIdx.x == 0 && k_tile >= 1 && k_tile + %d < num_k_tiles)", S - 1));
    e_.comment(format(
        "the stage of tile k_tile - 1 takes tile k_tile + %d once every warp has read it", S - 1));
    e_.line(format("const int ps = stage == 0 ? %d : stage - 1;", S - 1));
    e_.line("const unsigned pp = stage == 0 ? phase ^ 1u : phase;");
    e_.line("mbar_wait(empty_bar + 8 * ps, pp);");
    e_.line(
        format("tma_copy_tile(tma_a, tma_b, sA_u32 + ps * %du, sB_u32 + ps * %du, full_bar + 8 * "
               "ps, (k_tile + %d) * BK, tile_m0, tile_n0);",
               as, bs, S - 1));
    e_.close_scope();
    for (int kk = 0; kk < KS; ++kk) {
      e_.comment(format("k-step %d: compute on buffer %d", kk, kk % 2));
      if (kk == KS - 1) {
        e_.line("__syncwarp();");
        e_.line(
            "if (lane == 0) mbar_arrive(empty_bar + 8 * stage);  // this warp is done reading the "
            "stage");
        e_.open_scope("if (k_tile + 1 < num_k_tiles)");
        e_.line("mbar_wait(full_bar + 8 * next_stage, next_phase);  // tile k_tile + 1 has landed");
        e_.line(
            format("const unsigned na = sA_u32 + next_stage * %du, nb = sB_u32 + next_stage * %du;",
                   as, bs));
        load_fragments(e_, (kk + 1) % 2, "na", "nb", 0);
        e_.close_scope();
      } else {
        load_fragments(e_, (kk + 1) % 2, "sa", "sb", kk + 1);
      }
      mma_step(e_, kk % 2);
    }
    copy_odd_fragments();
    e_.line("stage = next_stage;");
    e_.line("phase = next_phase;");
    e_.close_scope("k_tile");
  }

  // f16/bf16 fallback entry: the single-buffered fragment loop (its element-wise
  // copies need registers that the double-buffered loop does not leave).
  bool simple_fallback() const { return sync_ && m_.stages >= 2 && !tf32_; }

  bool main_uses_tma() const { return sync_ && m_.stages >= 2 && m_.tma; }
  const char* fallback_body() const {
    return simple_fallback() ? "gemm_body_simple"
           : main_uses_tma() ? "gemm_body_cp_async"
                             : "gemm_body";
  }

  void body(bool pipelined, const char* fn, bool tma) {
    e_.line("template <bool kAligned>");
    e_.open_scope(
        format("__device__ __forceinline__ void %s(int M, int N, int K, const T* A, int lda, const "
               "T* B, "
               "int ldb, T* C, int ldc, float alpha, float beta, const float* bias%s)",
               fn, tma ? ", const TmaMap& tma_a, const TmaMap& tma_b" : ""));
    e_.line(format("extern __shared__ __align__(%d) unsigned char smem[];", tma ? 1024 : 128));
    e_.line(format("T* sA = reinterpret_cast<T*>(smem);  // [%d stages] (%d, %d) A tiles",
                   m_.stages, m_.a.rows, m_.a.cols));
    e_.line(format("T* sB = reinterpret_cast<T*>(smem + %d);  // [%d stages] (%d, %d) B tiles",
                   m_.b.offset_bytes, m_.stages, m_.b.rows, m_.b.cols));
    e_.line();
    rasterize();
    e_.line("const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;");
    e_.line(format(
        "const int warp_row0 = (warp / %d) * %d, warp_col0 = (warp %% %d) * %d;  // warp's C tile",
        m_.warps_n, m_.warp_m, m_.warps_n, m_.warp_n));
    if (sync_) {
      e_.line("const int g = lane / 4, tq = lane % 4;  // mma fragment row group, thread in group");
      if (m_.b_chunk_permuted) {
        e_.comment("tf32 B under the TMA swizzle: lane group g reads chunk g_chunk of a 32-column");
        e_.comment("group (0 4 1 5 2 6 3 7), so an 8-lane phase hits 8 different bank groups");
        e_.line("const int g_chunk = ((g & 1) << 2) | (g >> 1);");
      }
      const int v = m_.a.chunk_elems();
      const int ra = instr_->regs_a;
      e_.comment(
          format("ldmatrix.x%d addresses: lane gives row lane %% 8 of matrix j = lane / 8", ra));
      e_.line(
          format("const int a_ld_row = ((lane %% %d) / 8 %% 2) * 8 + lane %% 8, a_ld_col = ((lane "
                 "%% %d) / 16) * %d;",
                 8 * ra, 8 * ra, v));
      if (m_.ldmatrix_b) {
        const int kb = instr_->regs_b, cnt = b_ldmatrix_count();
        e_.line(
            format("const int b_ld_row = ((lane %% %d) / 8 %% %d) * 8 + lane %% 8, b_ld_col = "
                   "((lane %% %d) / "
                   "%d) * 8;",
                   8 * cnt, kb, 8 * cnt, 8 * kb));
      }
      e_.line(format("float acc[%d][%d][4];  // (%d, %d) f32 accumulators per fragment", m_.frags_m,
                     m_.frags_n, m_.inst_m, m_.inst_n));
      e_.line("#pragma unroll");
      e_.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
      e_.line("#pragma unroll");
      e_.open_scope(format("for (int ni = 0; ni < %d; ++ni)", m_.frags_n));
      e_.line("#pragma unroll");
      e_.line("for (int i = 0; i < 4; ++i) acc[mi][ni][i] = 0.0f;");
      e_.close_scope();
      e_.close_scope();
    } else {
      e_.line(format("wmma::fragment<wmma::accumulator, %s, float> acc[%d][%d];",
                     wmma_shape().c_str(), m_.frags_m, m_.frags_n));
      e_.line("#pragma unroll");
      e_.open_scope(format("for (int mi = 0; mi < %d; ++mi)", m_.frags_m));
      e_.line("#pragma unroll");
      e_.line(format("for (int ni = 0; ni < %d; ++ni) wmma::fill_fragment(acc[mi][ni], 0.0f);",
                     m_.frags_n));
      e_.close_scope();
    }
    e_.line();
    if (sync_ && m_.stages >= 2 && pipelined) {
      if (a_addr_.empty()) plan_fragment_addresses();
      if (tma)
        main_loop_tma();
      else
        main_loop_pipelined();
      e_.line();
      epilogue_mma_sync();
      e_.close_scope(fn);
      e_.line();
      return;
    }
    e_.line("const int num_k_tiles = (K + BK - 1) / BK;");
    const int a_stage = m_.a.stage_bytes / m_.elem_bytes,
              b_stage = m_.b.stage_bytes / m_.elem_bytes;
    auto load = [&](Emitter& e, const std::string& stage, const std::string& kt) {
      e.line(format("load_tile_A<kAligned>(sA + %s * %d, A, lda, M, K, tile_m0, %s * BK);",
                    stage.c_str(), a_stage, kt.c_str()));
      e.line(format("load_tile_B<kAligned>(sB + %s * %d, B, ldb, K, N, %s * BK, tile_n0);",
                    stage.c_str(), b_stage, kt.c_str()));
    };
    auto compute = [&](Emitter& e, const std::string& stage) {
      if (sync_)
        compute_mma_sync(e, stage);
      else
        compute_wmma(e, stage);
    };
    emit_cp_async_pipeline(e_, m_.stages, "num_k_tiles", load, compute);
    e_.line();
    if (sync_)
      epilogue_mma_sync();
    else
      epilogue_wmma();
    e_.close_scope(fn);
    e_.line();
  }

  void entries() {
    const char* call = "(M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias);";
    e_.comment("main entry: A, B, C 16-byte aligned; lda, ldb, ldc multiples of 16 bytes");
    if (main_uses_tma()) {
      e_.comment("tma_a, tma_b: tensor maps of A (M x K) and B (K x N), 128-byte swizzle, encoded");
      e_.comment("by the runtime for each launch");
      emit_kernel_open(
          e_, p_, name_,
          "const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b");
      e_.line("gemm_body<true>(M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias, tma_a, tma_b);");
    } else {
      emit_kernel_open(e_, p_, name_);
      e_.line(format("gemm_body<true>%s", call));
    }
    e_.close_scope();
    e_.line();
    e_.comment("fallback entry: any alignment, any leading dimension");
    emit_kernel_open(e_, p_, name_ + "_fallback");
    e_.line(format("%s<false>%s", fallback_body(), call));
    e_.close_scope();
  }
};

}  // namespace

GeneratedKernel emit_mma(const KernelPlan& plan) {
  SCHEDC_INTERNAL_ASSERT(plan.mma.has_value(), "emit_mma needs a tensor-core plan");
  const MmaPlan& m = *plan.mma;
  GeneratedKernel k;
  const std::string name = plan.name.empty() ? "schedc_gemm" : plan.name;
  k.source = MmaEmitter(plan, name).run();
  k.dtype = compiler::to_string(plan.dtype);
  k.tensor_cores = true;
  k.mma_type = compiler::to_string(m.type);
  k.min_sm = m.min_sm;
  k.needs_cuda_headers = m.api == MmaApi::wmma || plan.dtype != DType::f32;

  KernelEntry e;
  e.name = name;
  e.block = Dim3{uint32_t(plan.block_threads), 1, 1};
  e.dynamic_smem = uint32_t(plan.smem_bytes);
  e.tile_m = uint32_t(plan.block_m);
  e.tile_n = uint32_t(plan.block_n);
  e.swizzle_group = uint32_t(plan.swizzle_group);
  e.align_bytes = 16;
  e.ld_multiple = uint32_t(16 / m.elem_bytes);
  k.fallback = e;
  if (m.tma && m.stages >= 2) {
    e.tma_a = TmaBox{uint32_t(m.a.rows), uint32_t(m.a.cols)};
    e.tma_b = TmaBox{uint32_t(m.b.rows), uint32_t(m.b.panel_cols)};
  }
  k.main = e;
  k.fallback.name = name + "_fallback";
  k.fallback.align_bytes = 0;
  k.fallback.ld_multiple = 1;
  return k;
}

}  // namespace schedc::codegen
