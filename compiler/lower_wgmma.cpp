// The Hopper lowering: Schedule (with `wgmma`) -> KernelPlan, as a list of
// small passes over the plan (each a pure function, in the order they run):
//   wgmma_roles     consumer warpgroups, their C tiles and instructions,
//                   the producer (warp_specialize), threads and registers
//   wgmma_operands  the shared stages of A and B as TMA writes them (each
//                   k- or mn-major as its layout in memory) and
//                   the descriptor strides wgmma reads them with
//   wgmma_pipeline  stages, mbarriers and the shared-memory total
// How each layout is read (registers, transposed A) is wgmma_form's
// decision (compiler/wgmma_plan.h).
// codegen/emit_wgmma.cpp prints the result.
#include "compiler/lower_wgmma.h"

#include <algorithm>

#include "compiler/analyze.h"
#include "compiler/lower.h"
#include "compiler/stream_k.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {

KernelPlan wgmma_roles(KernelPlan p) {
  const Schedule& s = p.schedule;
  const MmaSpec& spec = *s.mma;
  WgmmaPlan w;
  w.type = spec.type;
  w.elem_bytes = size_of(s.dtype);
  w.inst_m = spec.m;
  w.inst_n = spec.n;
  w.inst_k = spec.k;
  w.wg_m = s.warp->m;
  w.wg_n = s.warp->n;
  // Which operand goes through registers, if any (compiler/wgmma_plan.h, wgmma_form).
  const WgmmaForm form = wgmma_form(w.type, s.a_col, s.b_col);
  w.swapped = form.swapped;
  w.a_in_registers = form.a_in_registers;
  w.a_transposed = form.a_transposed;
  w.b_transposed = form.b_transposed;
  w.c_elem_bytes = c_size_of(s);
  // The instruction's rows (inst_m) run along C's rows, or its columns when swapped.
  const int along_m = w.swapped ? w.inst_n : w.inst_m, along_n = w.swapped ? w.inst_m : w.inst_n;
  SCHEDC_INTERNAL_ASSERT(w.inst_m == 64 && w.inst_n > 0 && w.wg_m % along_m == 0 &&
                             w.wg_n % along_n == 0 && p.block_m % w.wg_m == 0 &&
                             p.block_n % w.wg_n == 0 && p.block_k % w.inst_k == 0,
                         "wgmma tiles: analyze should have checked them");
  w.consumers_m = p.block_m / w.wg_m;
  w.consumers_n = p.block_n / w.wg_n;
  w.m_insts = w.swapped ? w.wg_n / w.inst_m : w.wg_m / w.inst_m;
  w.n_insts = w.swapped ? w.wg_m / w.inst_n : w.wg_n / w.inst_n;
  w.k_steps = p.block_k / w.inst_k;
  w.accumulators = w.wg_m * w.wg_n / 128;
  w.warp_specialize = s.warp_specialize;
  w.pingpong = s.pingpong;
  w.cluster_m = s.cluster_m;
  w.cluster_n = s.cluster_n;
  w.persistent = s.persistent;
  w.tma_store = s.tma_store;
  w.c_col = s.c_col;
  p.block_threads = 128 * w.warpgroups();
  // setmaxnreg: the producer keeps 40 registers (it only issues TMA); the
  // consumers share the rest of the block's register pool, in steps of 8.
  // The pool is what the block got at launch (Target::register_pool; ptxas compiles a kernel that
  // uses setmaxnreg to all of its registers per thread), not the whole 64K register file, and
  // setmaxnreg.inc waits until the pool holds what it asks for: asking for more hangs the kernel.
  // Seen: 4 consumers asked for 112 of a 640-thread block's 96 a thread (a pool of 61,440), and the
  // first candidate of a tune never finished.
  if (s.conv) {
    // The producer's threads copy A (WgmmaConvCopy): each keeps two words
    // per row it copies (the window origin's offset and (h0, w0)) for a tile.
    WgmmaConvCopy c;
    c.vec = 16 / w.elem_bytes;
    c.chunks = p.block_k * w.elem_bytes / 16;
    c.row_step = 128 / c.chunks;
    c.rows = wgmma_conv_copy_rows(p.block_m, p.block_k * w.elem_bytes);
    c.panel_bytes = p.block_m * 128;
    c.arrive_lag = wgmma_conv_arrive_lag(s.stages);
    c.nchw32 = s.conv->layout == ConvLayout::nchw32;
    w.conv = c;
    w.producer_regs = wgmma_conv_producer_regs(p.block_m, p.block_k * w.elem_bytes);
  }
  if (w.warp_specialize) {
    w.launch_regs = p.target.registers_per_thread(p.block_threads * std::max(s.blocks_per_sm, 1));
    const int left =
        p.target.register_pool(p.block_threads, s.blocks_per_sm) - w.producer_regs * 128;
    w.consumer_regs = std::min(240, left / (128 * w.consumers()) / 8 * 8);
  }
  p.wgmma = w;
  return p;
}

// One operand's stage: `mn` x `k` elements, lying as in global memory.
WgmmaOperand make_operand(int mn, int k, int elem_bytes, bool mn_major) {
  WgmmaOperand o;
  o.mn = mn;
  o.k = k;
  o.elem_bytes = elem_bytes;
  o.mn_major = mn_major;
  o.panel_cols = 128 / elem_bytes;
  o.stage_bytes = mn * k * elem_bytes;
  o.sbo_bytes = 1024;                             // 8 rows of 128 bytes
  o.lbo_bytes = mn_major ? o.panel_bytes() : 16;  // K-major swizzled: unused (1 by convention)
  return o;
}

// The stages lie as the operands lie in memory: A row-major and B
// column-major are K-major, A column-major and B row-major MN-major (but a
// tf32 A transposed by the runtime first: wgmma_form).
KernelPlan wgmma_operands(KernelPlan p) {
  WgmmaPlan& w = *p.wgmma;
  const Schedule& s = p.schedule;
  SCHEDC_INTERNAL_ASSERT((p.block_k * w.elem_bytes) % 128 == 0,
                         "wgmma stages hold 128-byte panels of k (analyze checks BK)");
  const WgmmaForm form = wgmma_form(w.type, s.a_col, s.b_col);
  w.a = make_operand(p.block_m, p.block_k, w.elem_bytes, form.a_mn_major);
  w.b = make_operand(p.block_n, p.block_k, w.elem_bytes, form.b_mn_major);
  return p;
}

KernelPlan wgmma_pipeline(KernelPlan p) {
  const Schedule& s = p.schedule;
  WgmmaPlan& w = *p.wgmma;
  w.stages = std::max(2, s.stages);
  // Stage s of A at s * A, of B after all of A's: every stage starts on a
  // 1024-byte boundary (the swizzle key comes from address bits 7-9).
  // `halo only`: A's region is the file's convolution's phase images (a
  // multiple of 1 KB: Schedule::halo_a_bytes), B's stages after it.
  const int a_region = s.halo_only ? int(s.halo_a_bytes) : w.stages * w.a.stage_bytes;
  w.a.offset_bytes = 0;
  w.b.offset_bytes = a_region;
  w.c_offset_bytes = a_region + w.stages * w.b.stage_bytes;
  // 16-bit C: the whole tile; 4-byte C: c_chunk_panels panels of it.
  w.c_chunk_panels = wgmma_c_chunk_panels(w.wg_m, w.wg_n, w.c_elem_bytes, w.consumers(),
                                          w.c_offset_bytes + tma_barrier_bytes(w.stages));
  if (w.c_col) w.c_chunk_panels = w.c_stage_panels();  // (column-major C: 16-bit only)
  w.c_consumer_bytes = w.tma_store ? w.c_stage_rows() * 128 * w.c_chunk_panels : 0;
  w.sector_offset_bytes = w.c_offset_bytes + w.consumers() * w.c_consumer_bytes;
  w.sector_rows = wgmma_sector_rows(s, w.sector_offset_bytes + tma_barrier_bytes(w.stages));
  w.barrier_offset_bytes = w.sector_offset_bytes + w.sector_rows * p.block_n * 4;
  SCHEDC_INTERNAL_ASSERT(
      w.a.stage_bytes % 1024 == 0 && w.b.stage_bytes % 1024 == 0 && a_region % 1024 == 0,
      "wgmma stages must stay 1024-byte aligned");
  p.smem_bytes = w.barrier_offset_bytes + tma_barrier_bytes(w.stages);
  if (const int recv = wgmma_split_recv_bytes(s, p.smem_bytes); recv > 0) {
    w.split_recv_offset_bytes = (p.smem_bytes + 15) / 16 * 16;
    p.smem_bytes = w.split_recv_offset_bytes + recv;
  }
  return p;
}

}  // namespace

KernelPlan lower_wgmma(const Schedule& s, const Target& t) {
  SCHEDC_INTERNAL_ASSERT(s.uses_wgmma() && s.tile && s.warp, "lower_wgmma needs wgmma, tile, warp");
  KernelPlan p = tiled_plan_header(s, t, KernelKind::wgmma);
  p = wgmma_pipeline(wgmma_operands(wgmma_roles(p)));
  // stream_k (compiler/stream_k.h): the module gets a tail entry, below; a
  // k-tile on the tensor cores is short beside the partial sums' round trip.
  p.stream_k = s.stream_k;
  const double speedup = (p.wgmma->type == MmaType::tf32 ? t.tf32_tflops
                          : p.wgmma->type == MmaType::s8 ? t.s8_tops
                                                         : t.f16_tflops) /
                         t.fp32_tflops;
  p.stream_k_slice_cost = int(stream_k_slice_cost(p.block_k, speedup));
  p.stream_k_sum_cost = (p.stream_k_slice_cost + 1) / 2;
  // split_k: pushed into the receive area (wgmma_pipeline placed it), or
  // pulled: CTAs 1.. leave their sums in the stages (analysis checked they fit).
  p.split_k = s.split_k;
  SCHEDC_INTERNAL_ASSERT(p.split_k < 2 || p.wgmma->split_push() ||
                             int64_t(p.block_m) * p.block_n * 4 <= p.wgmma->c_offset_bytes,
                         "split_k's pulled partial sums must fit in the pipeline's stages");
  verify(p);
  return p;
}

KernelPlan lower_wgmma_stream_k_tail(const KernelPlan& main) {
  SCHEDC_INTERNAL_ASSERT(main.wgmma && main.stream_k, "a stream_k tail of a wgmma stream_k plan");
  // Each tail block computes one slice of one tile, so it walks nothing
  // (not persistent), and pingpong's two consumers, each computing a whole
  // tile in turn, become one consumer of that tile. The rest (tile,
  // instruction, stages, epilogue) stays the main entry's.
  Schedule s = main.schedule;
  s.persistent = false;
  s.pingpong = false;
  KernelPlan p = lower_wgmma(s, main.target);
  p.stream_k_tail = true;
  p.name = stream_k_tail_name(main.name);
  verify(p);
  return p;
}

}  // namespace schedc::compiler
