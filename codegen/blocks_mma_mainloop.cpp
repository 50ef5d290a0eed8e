// The mma.sync / WMMA generator's k loops and the body they make
// (codegen/mma_context.h): the cp.async pipeline with double-buffered
// fragments, the TMA + mbarrier pipeline, and the templated gemm body.
#include <string>
#include <vector>

#include "codegen/blocks_cp_async.h"
#include "codegen/mma_context.h"

namespace schedc::codegen::mma {

namespace {

void rasterize(MmaContext& cx) {
  emit_tile_constants(cx.e, cx.p);
  cx.e.line("static_assert(THREADS % 32 == 0, \"whole warps\");");
  emit_block_index(cx.e, cx.p);
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
void main_loop_pipelined(MmaContext& cx) {
  const int S = cx.m.stages, KS = cx.m.k_steps;
  const int a_stage = cx.m.a.stage_bytes / cx.m.elem_bytes,
            b_stage = cx.m.b.stage_bytes / cx.m.elem_bytes;
  // No branch around the copies (so ptxas can interleave them with the mma):
  // a tile past K copies zeros (every chunk's row or column is out of range,
  // src-size 0) into the free stage, which nothing reads afterwards.
  const bool fast = fast_copies(cx);
  auto tile_copy = [&](Emitter& e, const std::string& stage, const std::string& kt) {
    if (fast) {
      e.open_scope("if (kAligned)");
      emit_fast_copy(cx, e, stage, kt);
      e.close_scope();
      e.open_scope("else");
    }
    const std::string k0 = "(" + kt + ") * BK";
    e.line(format("load_tile_A<kAligned>(sA + %s * %d, A, lda, %s);", stage.c_str(), a_stage,
                  cx.a_tile_args(k0).c_str()));
    e.line(format("load_tile_B<kAligned>(sB + %s * %d, B, ldb, %s);", stage.c_str(), b_stage,
                  cx.b_tile_args(k0).c_str()));
    if (fast) e.close_scope();
  };
  auto global_loads = [&](Emitter& e) {
    tile_copy(e, "write_stage", format("k_tile + %d", S - 1));
    e.line("cp_async_commit();");
  };
  cx.e.line("const unsigned sA_u32 = smem_u32(sA), sB_u32 = smem_u32(sB);");
  emit_fragment_bases(cx);
  if (fast) emit_fast_copy_setup(cx);
  cx.e.line(format("unsigned a_frag[2][%d][%d];  // (%d, %d) A fragments%s, two k-steps",
                   cx.m.frags_m, cx.instr->regs_a, cx.m.inst_m, cx.m.inst_k,
                   cx.tf32 ? ", tf32 bits" : ""));
  cx.e.line(format("unsigned b_frag[2][%d][%d];  // (%d, %d) B fragments%s, two k-steps",
                   cx.m.frags_n, cx.instr->regs_b, cx.m.inst_k, cx.m.inst_n,
                   cx.tf32 ? ", tf32 bits" : ""));
  cx.e.line("const int num_k_tiles = (K + BK - 1) / BK;");
  cx.e.comment(format("prologue: tiles 0..%d in flight, one commit group each", S - 2));
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int s = 0; s < %d; ++s)", S - 1));
  cx.e.open_scope("if (s < num_k_tiles)");
  tile_copy(cx.e, "s", "s");
  cx.e.close_scope();
  cx.e.line("cp_async_commit();");
  cx.e.close_scope();
  cx.e.line(format("cp_async_wait<%d>();  // tile 0 has landed (this thread's copies)", S - 2));
  cx.e.line("__syncthreads();  // ... and everyone's");
  load_fragments(cx, cx.e, 0, "sA_u32", "sB_u32", 0);
  cx.e.line("int read_stage = 0;");
  cx.e.line(format("int write_stage = %d;", S - 1));
  cx.e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
  cx.e.line(format("const unsigned sa = sA_u32 + read_stage * %du, sb = sB_u32 + read_stage * %du;",
                   cx.m.a.stage_bytes, cx.m.b.stage_bytes));
  cx.e.line(format("const int next_stage = read_stage == %d ? 0 : read_stage + 1;", S - 1));
  for (int kk = 0; kk < KS; ++kk) {
    cx.e.comment(format("k-step %d: compute on buffer %d", kk, kk % 2));
    if (kk == 0 && KS == 1) global_loads(cx.e);
    if (kk == KS - 1) {
      cx.e.line(format("cp_async_wait<%d>();  // tile k_tile + 1 has landed (this thread's copies)",
                       S - 2));
      cx.e.line(
          "__syncthreads();  // ... and everyone's; every read of the stage loaded next is done");
      cx.e.open_scope("");
      cx.e.comment(
          "after the last tile: reload the current stage (not written) instead of the next");
      cx.e.line("const int ns = k_tile + 1 < num_k_tiles ? next_stage : read_stage;");
      cx.e.line(format("const unsigned na = sA_u32 + ns * %du, nb = sB_u32 + ns * %du;",
                       cx.m.a.stage_bytes, cx.m.b.stage_bytes));
      load_fragments(cx, cx.e, (kk + 1) % 2, "na", "nb", 0);
      cx.e.close_scope();
    } else {
      load_fragments(cx, cx.e, (kk + 1) % 2, "sa", "sb", kk + 1);
    }
    if (kk == 0 && KS > 1) global_loads(cx.e);
    mma_step(cx, cx.e, kk % 2);
  }
  copy_odd_fragments(cx);
  cx.e.line("read_stage = next_stage;");
  cx.e.line(format("write_stage = write_stage == %d ? 0 : write_stage + 1;", S - 1));
  cx.e.close_scope("k_tile");
  cx.e.line("cp_async_wait<0>();  // only empty groups remain; leave nothing in flight");
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
void main_loop_tma(MmaContext& cx) {
  const int S = cx.m.stages, KS = cx.m.k_steps, warps = cx.m.warps_m * cx.m.warps_n;
  const unsigned as = cx.m.a.stage_bytes, bs = cx.m.b.stage_bytes;
  cx.e.line("const unsigned sA_u32 = smem_u32(sA), sB_u32 = smem_u32(sB);");
  cx.e.line(format("const unsigned full_bar = smem_u32(smem + %d), empty_bar = full_bar + %d;",
                   cx.m.barrier_offset_bytes, 8 * S));
  cx.e.open_scope("if (threadIdx.x == 0)");
  cx.e.comment(
      "the 128-byte swizzle is computed from shared addresses: stages must be 1024-byte aligned");
  cx.e.line("if (sA_u32 % 1024 != 0) __trap();");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int s = 0; s < %d; ++s)", S));
  cx.e.line("mbar_init(full_bar + 8 * s, 1);  // thread 0's expect_tx, then the bytes");
  cx.e.line(format("mbar_init(empty_bar + 8 * s, %d);  // one arrival per warp", warps));
  cx.e.close_scope();
  cx.e.line("mbar_init_fence();");
  cx.e.close_scope();
  cx.e.line("__syncthreads();  // the barriers are ready for everyone");
  emit_fragment_bases(cx);
  cx.e.line(format("unsigned a_frag[2][%d][%d];  // (%d, %d) A fragments, two k-steps",
                   cx.m.frags_m, cx.instr->regs_a, cx.m.inst_m, cx.m.inst_k));
  cx.e.line(format("unsigned b_frag[2][%d][%d];  // (%d, %d) B fragments, two k-steps",
                   cx.m.frags_n, cx.instr->regs_b, cx.m.inst_k, cx.m.inst_n));
  cx.e.line("const int num_k_tiles = (K + BK - 1) / BK;");
  cx.e.comment(format("prologue: tiles 0..%d in flight, stage s holds tile s", S - 1));
  cx.e.open_scope("if (threadIdx.x == 0)");
  cx.e.line("#pragma unroll");
  cx.e.open_scope(format("for (int s = 0; s < %d; ++s)", S));
  cx.e.line(
      format("if (s < num_k_tiles) tma_copy_tile(tma_a, tma_b, sA_u32 + s * %du, sB_u32 + s * "
             "%du, full_bar + 8 * s, s * BK, tile_m0, tile_n0%s);",
             as, bs, tma_gemm_arg(cx.p).c_str()));
  cx.e.close_scope();
  cx.e.close_scope();
  cx.e.line("mbar_wait(full_bar, 0);  // tile 0 has landed");
  load_fragments(cx, cx.e, 0, "sA_u32", "sB_u32", 0);
  cx.e.comment(
      "k_tile's stage, and the parity of its barriers' current phase (flips at each wrap)");
  cx.e.line("int stage = 0;");
  cx.e.line("unsigned phase = 0;");
  cx.e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile)");
  cx.e.line(format("const unsigned sa = sA_u32 + stage * %du, sb = sB_u32 + stage * %du;", as, bs));
  cx.e.line(format("const int next_stage = stage == %d ? 0 : stage + 1;", S - 1));
  cx.e.line(format("const unsigned next_phase = stage == %d ? phase ^ 1u : phase;", S - 1));
  cx.e.open_scope(
      format("if (threadIdx.x == 0 && k_tile >= 1 && k_tile + %d < num_k_tiles)", S - 1));
  cx.e.comment(format(
      "the stage of tile k_tile - 1 takes tile k_tile + %d once every warp has read it", S - 1));
  cx.e.line(format("const int ps = stage == 0 ? %d : stage - 1;", S - 1));
  cx.e.line("const unsigned pp = stage == 0 ? phase ^ 1u : phase;");
  cx.e.line("mbar_wait(empty_bar + 8 * ps, pp);");
  cx.e.line(
      format("tma_copy_tile(tma_a, tma_b, sA_u32 + ps * %du, sB_u32 + ps * %du, full_bar + 8 * "
             "ps, (k_tile + %d) * BK, tile_m0, tile_n0%s);",
             as, bs, S - 1, tma_gemm_arg(cx.p).c_str()));
  cx.e.close_scope();
  for (int kk = 0; kk < KS; ++kk) {
    cx.e.comment(format("k-step %d: compute on buffer %d", kk, kk % 2));
    if (kk == KS - 1) {
      cx.e.line("__syncwarp();");
      cx.e.line(
          "if (lane == 0) mbar_arrive(empty_bar + 8 * stage);  // this warp is done reading the "
          "stage");
      cx.e.open_scope("if (k_tile + 1 < num_k_tiles)");
      cx.e.line("mbar_wait(full_bar + 8 * next_stage, next_phase);  // tile k_tile + 1 has landed");
      cx.e.line(
          format("const unsigned na = sA_u32 + next_stage * %du, nb = sB_u32 + next_stage * %du;",
                 as, bs));
      load_fragments(cx, cx.e, (kk + 1) % 2, "na", "nb", 0);
      cx.e.close_scope();
    } else {
      load_fragments(cx, cx.e, (kk + 1) % 2, "sa", "sb", kk + 1);
    }
    mma_step(cx, cx.e, kk % 2);
  }
  copy_odd_fragments(cx);
  cx.e.line("stage = next_stage;");
  cx.e.line("phase = next_phase;");
  cx.e.close_scope("k_tile");
}

}  // namespace

void body(MmaContext& cx, bool pipelined, const char* fn, bool tma) {
  cx.e.line("template <bool kAligned>");
  cx.e.open_scope(
      format("__device__ __forceinline__ void %s(int M, int N, int K, const T* A, int lda, const "
             "T* B, "
             "int ldb, %s* C, int ldc, float alpha, float beta, const float* bias%s%s%s)",
             fn, c_t(cx.p), scale_param(cx.p).c_str(),
             tma ? ", const TmaMap& tma_a, const TmaMap& tma_b" : "", cx.conv_param().c_str()));
  cx.e.line(format("extern __shared__ __align__(%d) unsigned char smem[];", tma ? 1024 : 128));
  cx.e.line(format("T* sA = reinterpret_cast<T*>(smem);  // [%d stages] (%d, %d) A tiles",
                   cx.m.stages, cx.m.a.rows, cx.m.a.cols));
  cx.e.line(format("T* sB = reinterpret_cast<T*>(smem + %d);  // [%d stages] (%d, %d) B tiles",
                   cx.m.b.offset_bytes, cx.m.stages, cx.m.b.rows, cx.m.b.cols));
  cx.e.line();
  rasterize(cx);
  cx.e.line("const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;");
  cx.e.line(format(
      "const int warp_row0 = (warp / %d) * %d, warp_col0 = (warp %% %d) * %d;  // warp's C tile",
      cx.m.warps_n, cx.m.warp_m, cx.m.warps_n, cx.m.warp_n));
  if (cx.sync) {
    cx.e.line("const int g = lane / 4, tq = lane % 4;  // mma fragment row group, thread in group");
    if (cx.m.b_chunk_permuted) {
      cx.e.comment("tf32 B under the TMA swizzle: lane group g reads chunk g_chunk of a 32-column");
      cx.e.comment("group (0 4 1 5 2 6 3 7), so an 8-lane phase hits 8 different bank groups");
      cx.e.line("const int g_chunk = ((g & 1) << 2) | (g >> 1);");
    }
    const int v = cx.m.a.chunk_elems();
    const int ra = cx.instr->regs_a;
    // Stage (row, col) offsets of the row each lane addresses (compiler::ldmatrix_a_lane /
    // ldmatrix_b_lane): a column-major operand's rows are k (A) or n (B).
    cx.e.comment(
        format("ldmatrix.x%d addresses: lane gives row lane %% 8 of matrix j = lane / 8", ra));
    // (A column-major tf32 A has no ldmatrix: plain 4-byte loads at (g, tq).)
    if (cx.m.ldmatrix_a && cx.m.a_col) {
      cx.e.line(
          format("const int a_ld_row = ((lane %% %d) / 16) * 8 + lane %% 8, a_ld_col = ((lane "
                 "%% %d) / 8 %% 2) * 8;  // k rows of m: .trans",
                 8 * ra, 8 * ra));
    } else if (cx.m.ldmatrix_a) {
      cx.e.line(
          format("const int a_ld_row = ((lane %% %d) / 8 %% 2) * 8 + lane %% 8, a_ld_col = ((lane "
                 "%% %d) / 16) * %d;",
                 8 * ra, 8 * ra, v));
    }
    if (cx.m.ldmatrix_b) {
      const int kb = cx.instr->regs_b, cnt = cx.b_ldmatrix_count();
      if (cx.m.b_col)
        cx.e.line(
            format("const int b_ld_row = ((lane %% %d) / %d) * 8 + lane %% 8, b_ld_col = ((lane "
                   "%% %d) / 8 %% %d) * %d;  // n rows of k",
                   8 * cnt, 8 * kb, 8 * cnt, kb, v));
      else
        cx.e.line(
            format("const int b_ld_row = ((lane %% %d) / 8 %% %d) * 8 + lane %% 8, b_ld_col = "
                   "((lane %% %d) / "
                   "%d) * 8;",
                   8 * cnt, kb, 8 * cnt, 8 * kb));
    }
    const bool integer = cx.m.type == compiler::MmaType::s8;
    cx.e.line(format("%s acc[%d][%d][4];  // (%d, %d) %s accumulators per fragment",
                     integer ? "int" : "float", cx.m.frags_m, cx.m.frags_n, cx.m.inst_m,
                     cx.m.inst_n, integer ? "s32" : "f32"));
    cx.e.line("#pragma unroll");
    cx.e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
    cx.e.line("#pragma unroll");
    cx.e.open_scope(format("for (int ni = 0; ni < %d; ++ni)", cx.m.frags_n));
    cx.e.line("#pragma unroll");
    cx.e.line(integer ? "for (int i = 0; i < 4; ++i) acc[mi][ni][i] = 0;"
                      : "for (int i = 0; i < 4; ++i) acc[mi][ni][i] = 0.0f;");
    cx.e.close_scope();
    cx.e.close_scope();
    if (cx.conv())
      cx.e.line("ConvWalk walk = conv_walk_start(conv, M, tile_m0);  // A's chunks in the input");
  } else {
    cx.e.line(format("wmma::fragment<wmma::accumulator, %s, float> acc[%d][%d];",
                     cx.wmma_shape().c_str(), cx.m.frags_m, cx.m.frags_n));
    cx.e.line("#pragma unroll");
    cx.e.open_scope(format("for (int mi = 0; mi < %d; ++mi)", cx.m.frags_m));
    cx.e.line("#pragma unroll");
    cx.e.line(format("for (int ni = 0; ni < %d; ++ni) wmma::fill_fragment(acc[mi][ni], 0.0f);",
                     cx.m.frags_n));
    cx.e.close_scope();
  }
  cx.e.line();
  if (cx.sync && cx.m.stages >= 2 && pipelined) {
    if (cx.frag.a_addr.empty()) plan_fragment_addresses(cx);
    if (tma)
      main_loop_tma(cx);
    else
      main_loop_pipelined(cx);
    cx.e.line();
    epilogue_mma_sync(cx);
    cx.e.close_scope(fn);
    cx.e.line();
    return;
  }
  cx.e.line("const int num_k_tiles = (K + BK - 1) / BK;");
  const int a_stage = cx.m.a.stage_bytes / cx.m.elem_bytes,
            b_stage = cx.m.b.stage_bytes / cx.m.elem_bytes;
  auto load = [&](Emitter& e, const std::string& stage, const std::string& kt) {
    const std::string k0 = kt + " * BK";
    e.line(format("load_tile_A<kAligned>(sA + %s * %d, A, lda, %s);", stage.c_str(), a_stage,
                  cx.a_tile_args(k0).c_str()));
    e.line(format("load_tile_B<kAligned>(sB + %s * %d, B, ldb, %s);", stage.c_str(), b_stage,
                  cx.b_tile_args(k0).c_str()));
  };
  auto compute = [&](Emitter& e, const std::string& stage) {
    if (cx.sync)
      compute_mma_sync(cx, e, stage);
    else
      compute_wmma(cx, e, stage);
  };
  emit_cp_async_pipeline(cx.e, cx.m.stages, "num_k_tiles", load, compute);
  cx.e.line();
  if (cx.sync)
    epilogue_mma_sync(cx);
  else
    epilogue_wmma(cx);
  cx.e.close_scope(fn);
  cx.e.line();
}

}  // namespace schedc::codegen::mma
