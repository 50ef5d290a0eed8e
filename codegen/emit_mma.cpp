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

#include "codegen/blocks_common.h"
#include "codegen/blocks_cp_async.h"
#include "codegen/blocks_ldmatrix.h"
#include "codegen/blocks_mma.h"
#include "codegen/emitter.h"
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
    body();
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
    emit_smem_offset_fn(e_, "sA_offset", m_.a, "A, k contiguous");
    emit_smem_offset_fn(e_, "sB_offset", m_.b, "B, n contiguous");
    if (!sync_) return;
    if (m_.ldmatrix_a) emit_ldmatrix_helper(e_, instr_->regs_a, false);
    if (m_.ldmatrix_b) emit_ldmatrix_helper(e_, b_ldmatrix_count(), true);
    e_.line();
    if (tf32_) emit_tf32_convert_helper(e_);
    emit_mma_sync_helper(e_, *instr_);
  }

  int b_frags_per_ldmatrix() const { return m_.b_frags_per_ldmatrix; }
  int b_ldmatrix_count() const { return b_frags_per_ldmatrix() * instr_->regs_b; }

  void copy_chunk_checked() {
    const int v = m_.a.chunk_elems();
    e_.comment(format("fallback copy: %d elements of a row, each checked; zero past the edge", v));
    e_.open_scope(
        "__device__ __forceinline__ void copy_chunk_checked(T* dst_smem, const T* src, int ld, "
        "int row, int col, int rows, int cols)");
    e_.line("unsigned word[4] = {0u, 0u, 0u, 0u};");
    e_.open_scope("if (row < rows)");
    e_.line("const size_t base = (size_t)row * ld + col;");
    if (m_.elem_bytes == 2) {
      e_.line("const unsigned short* bits = reinterpret_cast<const unsigned short*>(src);");
      e_.line("#pragma unroll");
      e_.open_scope("for (int i = 0; i < 8; ++i)");
      e_.line("if (col + i < cols) word[i / 2] |= unsigned(bits[base + i]) << (16 * (i % 2));");
      e_.close_scope();
    } else {
      e_.line("#pragma unroll");
      e_.open_scope("for (int i = 0; i < 4; ++i)");
      e_.line("if (col + i < cols) word[i] = __float_as_uint(src[base + i]);");
      e_.close_scope();
    }
    e_.close_scope();
    e_.line(
        "*reinterpret_cast<uint4*>(dst_smem) = make_uint4(word[0], word[1], word[2], word[3]);");
    e_.close_scope();
    e_.line();
  }

  void tile_loader(const char* op, const SmemTile& t, const compiler::CopyMap& c,
                   const char* rows_name, const char* cols_name) {
    e_.comment(format(
        "(%d, %d) tile of %s at (row0, col0) -> one shared stage: %d 16-byte chunks, %d per thread",
        t.rows, t.cols, op, c.chunks, c.iters));
    e_.line("template <bool kAligned>");
    e_.open_scope(
        format("__device__ __forceinline__ void load_tile_%s(T* s%s_stage, const T* g%s, int ld, "
               "int %s, int %s, int row0, int col0)",
               op, op, op, rows_name, cols_name));
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

  void body() {
    e_.line("template <bool kAligned>");
    e_.open_scope(
        "__device__ __forceinline__ void gemm_body(int M, int N, int K, const T* A, int lda, const "
        "T* B, "
        "int ldb, T* C, int ldc, float alpha, float beta, const float* bias)");
    e_.line("extern __shared__ __align__(128) unsigned char smem[];");
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
    e_.close_scope("gemm_body");
    e_.line();
  }

  void entries() {
    const char* call = "(M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias);";
    e_.comment("main entry: A, B, C 16-byte aligned; lda, ldb, ldc multiples of 16 bytes");
    emit_kernel_open(e_, p_, name_);
    e_.line(format("gemm_body<true>%s", call));
    e_.close_scope();
    e_.line();
    e_.comment("fallback entry: any alignment, any leading dimension");
    emit_kernel_open(e_, p_, name_ + "_fallback");
    e_.line(format("gemm_body<false>%s", call));
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
  k.main = e;
  k.fallback = e;
  k.fallback.name = name + "_fallback";
  k.fallback.align_bytes = 0;
  k.fallback.ld_multiple = 1;
  return k;
}

}  // namespace schedc::codegen
