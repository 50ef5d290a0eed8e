// The tensor-core code generator: prints a KernelPlan with plan.mma set as
// one CUDA module with two entries sharing one templated body:
//   <name>           16-byte cp.async copies (A, B, C 16-byte aligned, lda/ldb/ldc
//                    multiples of 16 bytes), pair stores of C;
//   <name>_fallback  element-wise checked loads into the same shared layout,
//                    scalar stores: correct for any pointer and leading dimension;
//   <name>_transpose mma s8 with a column-major A or a row-major B: that
//                    operand transposed into k-major scratch before every launch.
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
#include "codegen/mma_context.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::DType;
using compiler::KernelPlan;
using compiler::MmaApi;
using compiler::MmaPlan;
using compiler::MmaType;

namespace mma {

MmaContext::MmaContext(const KernelPlan& plan, std::string entry_name)
    : p(plan), m(*plan.mma), name(std::move(entry_name)), T(element_type(plan.dtype)) {
  sync = m.api == MmaApi::mma_sync;
  tf32 = m.type == MmaType::tf32;
  if (sync) {
    instr = find_mma_instr(m.api, m.type, m.inst_m, m.inst_n, m.inst_k);
    SCHEDC_INTERNAL_ASSERT(instr, "no mma.sync instruction for this type and shape");
    SCHEDC_INTERNAL_ASSERT(instr->regs_a == m.regs_a && instr->regs_b == m.regs_b,
                           "plan and instruction table disagree on fragment registers");
    if (m.s8_m8n8k16) {
      quarter = find_mma_instr(m.api, m.type, 8, 8, 16);
      SCHEDC_INTERNAL_ASSERT(
          quarter && m.type == MmaType::s8 && m.inst_m == 16 && m.inst_n == 8 && m.inst_k == 32,
          "mma s8 m8n8k16 computes m16n8k32 steps");
    }
  } else {
    instr = find_mma_instr(m.api, m.type, m.inst_m, m.inst_n, m.inst_k);
    SCHEDC_INTERNAL_ASSERT(instr, "no WMMA fragment for this type and shape");
  }
}

}  // namespace mma

namespace {

using namespace mma;

void header(MmaContext& cx) {
  emit_module_header(cx.e, cx.p);
  cx.e.comment(format("block tile %dx%dx%d, %d warps of %dx%d (%dx%d), %d threads", cx.p.block_m,
                      cx.p.block_n, cx.p.block_k, cx.m.warps_m * cx.m.warps_n, cx.m.warp_m,
                      cx.m.warp_n, cx.m.warps_m, cx.m.warps_n, cx.threads()));
  cx.e.comment(format("per warp: %dx%d %s instructions (%s), %d k-steps per tile", cx.m.frags_m,
                      cx.m.frags_n, cx.sync ? "mma.sync" : "WMMA", cx.instr->name, cx.m.k_steps));
  if (cx.quarter)
    cx.e.comment(format("(mma s8 m8n8k16: each %s as four %s)", cx.instr->name, cx.quarter->name));
  cx.e.comment(format("shared: %d stage(s) x (%d + %d) bytes = %d bytes (dynamic)", cx.m.stages,
                      cx.m.a.stage_bytes, cx.m.b.stage_bytes, cx.p.smem_bytes));
  if (!cx.sync) {
    cx.e.line("#include <mma.h>");
    cx.e.line("using namespace nvcuda;");
  }
  cx.e.line();
  cx.e.line(format("typedef %s T;", cx.T.c_str()));
  cx.e.line();
}

void helpers(MmaContext& cx) {
  emit_cp_async_helpers(cx.e);
  if (cx.conv()) emit_conv_args(cx.e, cx.nchw32());
  if (cx.nchw32()) emit_c_offset_nchw32(cx.e);
  if (cx.m.tma) emit_tma_helpers(cx.e, cx.p.schedule.batch > 0);
  emit_smem_offset_fn(
      cx.e, "sA_offset", cx.m.a,
      cx.m.a_col ? "A, m contiguous (column-major A: k rows of m)" : "A, k contiguous");
  emit_smem_offset_fn(
      cx.e, "sB_offset", cx.m.b,
      cx.m.b_col ? "B, k contiguous (column-major B: n rows of k)" : "B, n contiguous");
  if (!cx.sync) return;
  // One helper per (count, .trans): A and B may share one.
  std::vector<std::pair<int, bool>> ldmatrix;
  auto want = [&](int count, bool trans) {
    for (const auto& l : ldmatrix)
      if (l.first == count && l.second == trans) return;
    ldmatrix.push_back({count, trans});
    emit_ldmatrix_helper(cx.e, count, trans);
  };
  if (cx.m.ldmatrix_a) want(cx.instr->regs_a, cx.m.ldmatrix_a_trans);
  if (cx.m.ldmatrix_b) want(cx.b_ldmatrix_count(), cx.m.ldmatrix_b_trans);
  cx.e.line();
  if (cx.tf32) emit_tf32_convert_helper(cx.e, cx.m.tf32_rounding);
  if (cx.tf32 && cx.m.stages >= 2 && !cx.m.ldmatrix_b) emit_lds_helper(cx);
  if (cx.tf32 && cx.m.stages >= 2 && !cx.m.ldmatrix_a) emit_lds_a_helper(cx);
  if (cx.quarter)
    emit_mma_in_quarters_helper(cx.e, *cx.instr, *cx.quarter);
  else
    emit_mma_sync_helper(cx.e, *cx.instr);
}

void entries(MmaContext& cx) {
  const std::string call = "(M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias" + scale_arg(cx.p) +
                           cx.conv_arg() + ");";
  // A convolution module's entries take the geometry and offset table last
  // (codegen/generated_kernel.h).
  const std::string conv_params = cx.conv() ? "const __grid_constant__ ConvArgs conv" : "";
  cx.e.comment("main entry: A, B, C 16-byte aligned; lda, ldb, ldc multiples of 16 bytes");
  emit_entry_guard_open(cx.e, cx.name);
  if (cx.main_uses_tma()) {
    if (cx.m.a_col || cx.m.b_col) {
      cx.e.comment(format("tma_a, tma_b: tensor maps of A (%s) and B (%s), 128-byte swizzle,",
                          cx.m.a_col ? "K rows of M: column-major" : "M x K",
                          cx.m.b_col ? "N rows of K: column-major" : "K x N"));
      cx.e.comment("encoded by the runtime for each launch");
    } else {
      cx.e.comment(
          "tma_a, tma_b: tensor maps of A (M x K) and B (K x N), 128-byte swizzle, encoded");
      cx.e.comment("by the runtime for each launch");
    }
    emit_kernel_open(cx.e, cx.p, cx.name,
                     "const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b");
    cx.e.line("gemm_body<true>(M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias" +
              scale_arg(cx.p) + ", tma_a, tma_b);");
  } else {
    emit_kernel_open(cx.e, cx.p, cx.name, conv_params);
    cx.e.line("gemm_body<true>" + call);
  }
  cx.e.close_scope();
  emit_entry_guard_close(cx.e, cx.name);
  cx.e.line();
  cx.e.comment("fallback entry: any alignment, any leading dimension");
  emit_entry_guard_open(cx.e, cx.name + "_fallback");
  emit_kernel_open(cx.e, cx.p, cx.name + "_fallback", conv_params);
  cx.e.line(std::string(cx.fallback_body()) + "<false>" + call);
  cx.e.close_scope();
  emit_entry_guard_close(cx.e, cx.name + "_fallback");
  if (cx.m.a_transposed || cx.m.b_transposed) {
    cx.e.line();
    emit_entry_guard_open(cx.e, cx.name + "_transpose");
    cx.e.comment("Transpose: an operand mma s8 cannot read where it lies (a register of its");
    cx.e.comment("fragments holds 4 consecutive k, which ldmatrix gives only from k-major stages)");
    cx.e.comment("into scratch before the main or fallback entry runs: a column-major A (K rows");
    cx.e.comment("of M) into M rows of K, a row-major B (K rows of N) into N rows of K; rows");
    cx.e.comment("dst_ld >= K apart, the padding zero.");
    emit_transpose_kernel(cx.e, cx.name + "_transpose");
    emit_entry_guard_close(cx.e, cx.name + "_transpose");
  }
}

// The module: header, helpers, copies, epilogue helpers, the bodies, the entries.
std::string run(MmaContext& cx) {
  header(cx);
  helpers(cx);
  tile_loaders(cx);
  epilogue_helpers(cx);
  body(cx, true, "gemm_body", cx.main_uses_tma());
  if (cx.simple_fallback())
    body(cx, false, "gemm_body_simple", false);
  else if (cx.main_uses_tma())
    body(cx, true, "gemm_body_cp_async", false);  // the fallback: no tensor maps, any alignment
  entries(cx);
  return cx.e.str();
}

}  // namespace
GeneratedKernel emit_mma(const KernelPlan& plan) {
  SCHEDC_INTERNAL_ASSERT(plan.mma.has_value(), "emit_mma needs a tensor-core plan");
  const MmaPlan& m = *plan.mma;
  GeneratedKernel k;
  const std::string name = plan.name.empty() ? "schedc_gemm" : plan.name;
  mma::MmaContext cx(plan, name);
  k.source = run(cx);
  k.entry_guards = true;
  k.dtype = compiler::to_string(plan.dtype);
  k.tensor_cores = true;
  k.mma_type = compiler::to_string(m.type);
  if (plan.schedule.epilogue.requantize) k.c_dtype = "s8";  // an int8 C
  k.channel_scale = plan.schedule.epilogue.scale;
  if (plan.schedule.conv) k.conv = compiler::layout_word(plan.schedule.conv->layout);
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
    // One box per panel (or per stage of 128-byte rows), in each operand's layout: the
    // runtime's maps are (rows, row length) of the operand in memory (Problem::a_rows).
    auto box = [](const compiler::SmemTile& t) {
      return TmaBox{uint32_t(t.rows), uint32_t(t.panel_cols > 0 ? t.panel_cols : t.cols)};
    };
    e.tma_a = box(m.a);
    e.tma_b = box(m.b);
  }
  // A transposed operand (mma s8) is read from the runtime's scratch, aligned
  // by construction: main's preconditions are the other operands'.
  e.aligned[0] = !m.a_transposed;
  e.aligned[1] = !m.b_transposed;
  k.main = e;
  k.fallback.name = name + "_fallback";
  if (m.a_transposed || m.b_transposed) k.transpose = name + "_transpose";
  k.transposes_a = m.a_transposed;
  k.transposes_b = m.b_transposed;
  k.fallback.align_bytes = 0;
  k.fallback.ld_multiple = 1;
  return k;
}

}  // namespace schedc::codegen
