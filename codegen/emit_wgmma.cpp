// The Hopper code generator: prints a KernelPlan with plan.wgmma as one CUDA
// module (sm_90a) from the blocks of codegen/blocks_wgmma.*:
//   <name>         the GEMM: TMA copies into an mbarrier pipeline, wgmma from
//                  shared memory, the epilogue from the accumulators. Needs
//                  A and B 16-byte aligned with lda, ldb multiples of 16
//                  bytes (TMA's rule); C may be anything.
//   <name>_stream_k  with `stream_k`: one slice of one tile of the launch's
//                  last, partial wave per block, summed by the last slice
//                  to arrive (compiler/stream_k.h); the runtime runs it
//                  after <name>, which computes the whole waves' tiles.
//   <name>_repack  copies an operand that breaks that rule into aligned
//                  scratch; the runtime runs it before <name> (and counts
//                  its time), so every shape runs on the tensor cores.
//   <name>_transpose  tf32 with A column-major and B row-major only: A
//                  transposed into row-major scratch before every launch.
#include "codegen/emit_wgmma.h"

#include "codegen/blocks_common.h"
#include "codegen/blocks_stream_k.h"
#include "codegen/blocks_tma.h"
#include "codegen/blocks_wgmma.h"
#include "compiler/lower.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

void emit_header(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  emit_module_header(e, p);
  e.comment(format("block tile %dx%dx%d: %d consumer warpgroup(s) of %dx%d (%dx%d)%s, %d threads",
                   p.block_m, p.block_n, p.block_k, w.consumers(), w.wg_m, w.wg_n, w.consumers_m,
                   w.consumers_n, w.warp_specialize ? " and a producer warpgroup" : "",
                   p.block_threads));
  e.comment(format(
      "per consumer: %dx%d wgmma.m%dn%dk%d per k-step, %d k-steps per k-tile, %d %s "
      "accumulators per thread",
      w.m_insts, w.n_insts, w.inst_m, w.inst_n, w.inst_k, w.k_steps, w.accumulators, w.d_type()));
  const std::string c_staging = w.sector_rows > 0
                                    ? format(" + %d bytes of C staging (%d rows)",
                                             w.sector_rows * p.block_n * 4, w.sector_rows)
                                    : "";
  const std::string split_recv =
      w.split_push()
          ? format(" + %d bytes for split_k's sums (received by the CTA that stores each part)",
                   p.smem_bytes - w.split_recv_offset_bytes)
          : "";
  const std::string pipeline =
      p.schedule.halo_only  // A's region, the phase images, then B's stages
          ? format("A %d bytes (halo only: the phase images) + %d stages x %d bytes",
                   w.b.offset_bytes, w.stages, w.b.stage_bytes)
          : format("%d stages x (%d + %d) bytes", w.stages, w.a.stage_bytes, w.b.stage_bytes);
  e.comment(format("shared: %s%s + %d mbarrier bytes%s = %d bytes (dynamic)", pipeline.c_str(),
                   c_staging.c_str(), 16 * w.stages, split_recv.c_str(), p.smem_bytes));
  e.line();
  e.line(format("typedef %s T;", element_type(p.dtype)));
  e.line();
  e.lines(R"(__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
})");
}

// The parameters after bias: the tensor maps (C's with tma_store, and
// always with stream_k, whose entries take more after it), then with
// stream_k the main entry's tile count or the tail's split and workspace.
std::string entry_params(const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  std::string params = "const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b";
  if (w.tma_store || p.stream_k) params += ", const __grid_constant__ TmaMap tma_c";
  // conv: its geometry and offset table, the last parameter (generated_kernel.h).
  const std::string conv = w.conv ? ", const __grid_constant__ ConvArgs conv" : "";
  if (p.stream_k_tail) return params + ", " + stream_k_params() + conv;
  if (p.stream_k) params += ", int sk_whole_tiles";
  return params + conv;
}

void emit_kernel_start(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.comment(format("tma_a, tma_b: tensor maps of A (%s) and B (%s), 128-byte swizzle, encoded by",
                   w.a.mn_major ? "K x M: column-major" : "M x K",
                   w.b.mn_major ? "K x N" : "N x K: column-major"));
  e.comment(p.schedule.batch > 0
                ? "the runtime for each launch (zeros past the edges); 3-D: the batch's GEMMs "
                  "their third dimension"
                : "the runtime for each launch (zeros past the edges)");
  if (w.tma_store)
    e.comment(
        format("tma_c: C's (%s) tensor map when C is 16-byte aligned with ldc a multiple of 16 "
               "bytes (else unused)",
               w.c_col ? "N x M: column-major" : "M x N"));
  if (p.stream_k && !p.stream_k_tail)
    e.comment("sk_whole_tiles: the tiles this entry computes (the launch's stream_k split)");
  emit_kernel_open(e, p, p.name, entry_params(p), w.warp_specialize ? p.schedule.blocks_per_sm : 0,
                   w.cluster_size() > 1 && !w.paired() ? "__cluster_dims__(2, 1, 1)" : "");
  emit_tile_constants(e, p);
  e.line(format("static_assert(THREADS == %d * 128, \"%d warpgroups\");", w.warpgroups(),
                w.warpgroups()));
}

// Barriers, then the producer and the consumers' k loop (the consumers'
// scope stays open: `else {` under warp_specialize, and the tile's scope).
void emit_pipeline(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  emit_wgmma_barriers(e, p);
  if (w.warp_specialize) {
    e.open_scope("if (threadIdx.x < 128)");
    emit_wgmma_producer(e, p);
    emit_wgmma_launch_dependents(e, p);
    if (p.split_k > 1) emit_wgmma_split_k_producer_end(e, p);
    e.close_scope();
    e.open_scope("else");
    // the consumers' count: above what a thread had at launch (an .inc), or
    // below it where the producer's .inc takes it (WgmmaPlan::launch_regs)
    e.line(w.producer_regs > w.launch_regs ? w.setmaxnreg_line(w.consumer_regs)
                                           : format("setmaxnreg_inc<%d>();", w.consumer_regs));
  } else {
    emit_wgmma_producer(e, p);
  }
  emit_wgmma_consumer(e, p);
  if (!w.warp_specialize) emit_wgmma_launch_dependents(e, p);
}

void emit_main_kernel(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  emit_kernel_start(e, p);
  if (w.persistent) {
    if (p.swizzle_group > 1) {
      e.comment(
          format("swizzle block %d %s: tiles numbered in groups of GROUP tile-rows, column by",
                 p.swizzle_group, origin_note(p.schedule, p.schedule.swizzle_block_at).c_str()));
      e.comment("column inside a group, so tiles computed together share A and B in L2.");
      e.line(format("constexpr int GROUP = %d;", p.swizzle_group));
    } else {
      e.comment("tiles numbered row-major, along N first");
    }
    e.line("const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;");
  } else {
    if (p.split_k > 1) emit_wgmma_split_k_slice(e, p);
    emit_block_index(e, p);
  }
  emit_pipeline(e, p);
  if (p.split_k > 1) {
    emit_wgmma_split_k_sum(e, p);
    e.open_scope("if (split_rank == split_owner)");
    emit_wgmma_tile_stores(e, p);
    // pulled: (2), the others leave once CTA 0 has read their sums
    if (!w.split_push()) e.line("if (split_slices > 1) split_wait();  // (2)");
    e.close_scope();
    emit_wgmma_tile_end(e, p);
  } else {
    emit_wgmma_epilogue(e, p);
  }
  if (w.warp_specialize) e.close_scope();
  // (paired: a stage is freed in the other CTA only where it will be refilled.)
  if (w.cluster_size() > 1 && !w.paired())
    e.line("cluster_sync();  // no CTA leaves while the other may still arrive on its barriers");
  e.close_scope(p.name);
}

// The stream_k tail of `main` (compiler/lower_wgmma.h): one slice of one
// shared tile per block, the fix-up, and the last slice's epilogue.
void emit_wgmma_stream_k_tail_kernel(Emitter& e, const KernelPlan& main) {
  const KernelPlan p = compiler::lower_stream_k_tail(main);
  const WgmmaPlan& w = *p.wgmma;
  emit_kernel_start(e, p);
  emit_stream_k_slice(e, p);
  emit_block_index(e, p);
  emit_pipeline(e, p);
  emit_wgmma_stream_k_fixup(e, p);
  e.open_scope("if (write_c)");
  emit_wgmma_tile_stores(e, p);
  e.close_scope();
  emit_wgmma_tile_end(e, p);
  if (w.warp_specialize) e.close_scope();
  emit_stream_k_tail_end(e, p);
}

}  // namespace

GeneratedKernel emit_wgmma(const KernelPlan& p) {
  SCHEDC_INTERNAL_ASSERT(p.wgmma.has_value(), "emit_wgmma needs a wgmma plan");
  const WgmmaPlan& w = *p.wgmma;
  Emitter e;
  emit_header(e, p);
  emit_tma_helpers(e, p.schedule.batch > 0);
  emit_wgmma_helpers(e, p);
  if (w.conv)
    emit_wgmma_conv_helpers(e, p);
  else
    emit_wgmma_tma_copy(e, p);
  emit_epilogue_helpers(e, p);
  if (!w.swapped) emit_wgmma_store_pair(e, p);
  if (p.stream_k) emit_stream_k_helpers(e, p);
  emit_entry_guard_open(e, p.name);
  emit_main_kernel(e, p);
  emit_entry_guard_close(e, p.name);
  e.line();
  if (p.stream_k) {
    const std::string tail = compiler::lower_stream_k_tail(p).name;
    emit_entry_guard_open(e, tail);
    emit_wgmma_stream_k_tail_kernel(e, p);
    emit_entry_guard_close(e, tail);
    e.line();
  }
  const std::string repack = p.name + "_repack";
  emit_entry_guard_open(e, repack);
  emit_wgmma_repack_kernel(e, p, repack);
  emit_entry_guard_close(e, repack);
  const std::string transpose = p.name + "_transpose";
  if (w.a_transposed || w.b_transposed) {
    e.line();
    emit_entry_guard_open(e, transpose);
    emit_wgmma_transpose_kernel(e, p, transpose);
    emit_entry_guard_close(e, transpose);
  }

  GeneratedKernel k;
  k.source = e.str();
  k.entry_guards = true;
  k.dtype = compiler::to_string(p.dtype);
  k.tensor_cores = true;
  k.mma_type = compiler::to_string(w.type);              // "s8": A, B int8, C int32
  if (p.schedule.epilogue.requantize) k.c_dtype = "s8";  // or int8
  k.channel_scale = p.schedule.epilogue.scale;
  k.min_sm = 90;
  k.arch_specific = true;  // wgmma and setmaxnreg: sm_90a
  k.needs_cuda_headers = true;
  k.main = make_entry(p, p.name);
  k.main.dynamic_smem = uint32_t(p.smem_bytes);
  k.main.align_bytes = 16;
  k.main.ld_multiple = uint32_t(16 / w.elem_bytes);
  k.main.aligned[2] = false;  // C: the epilogue checks its own alignment
  // Each operand's boxes in its layout in memory (a column-major A's map is
  // K rows of M, a column-major B's N rows of K: runtime/launch.cpp).
  k.main.tma_a = TmaBox{uint32_t(w.a.box_rows()), uint32_t(w.a.box_cols())};
  k.main.tma_b = TmaBox{uint32_t(w.b.box_rows()), uint32_t(w.b.box_cols())};
  k.main.persistent = w.persistent;
  k.main.walks_batch = walks_batch(p);
  k.main.cluster_m = uint32_t(w.cluster_m);
  k.main.cluster_n = uint32_t(w.cluster_n);
  k.main.split_k = uint32_t(p.split_k);
  k.main.dependent_launch = true;  // griddepcontrol.wait first (emit_wgmma_dependent_launch)
  // A k-major shared operand: each CTA multicasts half of its rows.
  if (w.shares_a() && !w.a.mn_major) k.main.tma_a.box_rows /= 2;
  if (w.shares_b() && !w.b.mn_major) k.main.tma_b.box_rows /= 2;
  // C's boxes: one staged panel each (of its N x M map when column-major).
  if (w.tma_store) k.main.tma_c = TmaBox{uint32_t(w.c_stage_rows()), uint32_t(w.c_panel_cols())};
  if (p.stream_k) {
    const KernelPlan tail = compiler::lower_stream_k_tail(p);
    k.main.tail_block = Dim3{uint32_t(tail.block_threads), 1, 1};
    k.main.tail_dynamic_smem = uint32_t(tail.smem_bytes);
  }
  k.repack = repack;
  if (w.a_transposed || w.b_transposed) k.transpose = transpose;
  k.transposes_a = w.a_transposed;
  k.transposes_b = w.b_transposed;
  // The NHWC kernel's producer reads A by TMA's im2col mode when the launch
  // can (codegen/blocks_wgmma_conv.cpp; compiler/conv_im2col.h).
  k.main.a_im2col = w.conv && !w.conv->nchw32;
  if (w.conv && p.schedule.halo) {
    k.main.a_halo_bytes = uint32_t(w.b.offset_bytes);  // A's region: its stages, or halo only's
    k.main.halo_only = p.schedule.halo_only;
    k.main.a_halo_64b = halo_64b(p);  // its consumers' two-tap k-tiles: blocks_wgmma.cpp
  }
  if (w.conv)
    k.conv = compiler::layout_word(w.conv->nchw32 ? compiler::ConvLayout::nchw32
                                                  : compiler::ConvLayout::nhwc);
  return k;
}

}  // namespace schedc::codegen
