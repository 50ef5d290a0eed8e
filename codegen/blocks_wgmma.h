#pragma once
// Building blocks of the Hopper kernels (`wgmma`, sm_90a), each printing one
// decision of plan.wgmma (compiler/wgmma_plan.h). emit_wgmma.cpp assembles:
//
//   helpers          descriptors, wgmma fence/commit/wait, the instruction,
//                    setmaxnreg, the TMA copy of one k-tile
//   store_pair       C[row][col..col+1] through the epilogue, pairs or single
//   kernel:          smem, barriers (emit_wgmma_barriers)
//                    producer: TMA copies into free stages (emit_wgmma_producer)
//                    consumer: wgmma on full stages, frees them (emit_wgmma_consumer)
//                    epilogue from the accumulators (emit_wgmma_epilogue)
//   repack kernel    an operand TMA cannot read, copied into aligned scratch
//
// Files: blocks_wgmma.cpp (helpers, barriers, producer, consumer),
// blocks_wgmma_copies.cpp (TMA copies of a k-tile, repack), _epilogue, _tf32
// (an operand in registers), _cluster, _stream_k, _split_k.

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// wgmma_desc (a shared-memory matrix descriptor, 128-byte swizzle),
// wgmma_fence / wgmma_commit / wgmma_wait<N>, the instruction
// wgmma_m64nNkK(acc, desc_a, desc_b) (d += A * B, B transposed: n-major), and
// setmaxnreg_inc<R> / setmaxnreg_dec<R>.
void emit_wgmma_helpers(Emitter& e, const compiler::KernelPlan& plan);

// tma_copy_tile(tma_a, tma_b, sa, sb, full, k0, tile_m0, tile_n0): one k-tile
// into one stage, a box per 128-byte panel (a k-major operand's BK / P
// panels of k, an mn-major one's MN / P).
void emit_wgmma_tma_copy(Emitter& e, const compiler::KernelPlan& plan);

// Inside tma_copy_tile: the TMA loads of operand `op` ('a' or 'b': sa/sb,
// tma_a/tma_b, tile_m0/tile_n0) into its stage: the whole stage, or (cluster)
// this CTA's half (`crank`), multicast to the CTAs of `mask` (an expression:
// the persistent pair's 0x3, or a paired kernel's pair_mask).
enum class WgmmaHalf { whole, multicast_half };
void emit_wgmma_operand_loads(Emitter& e, const compiler::WgmmaOperand& o, char op, WgmmaHalf half,
                              bool batched, const std::string& mask = "0x3");
// A cluster's copy arguments after a copy function's own: this CTA's half
// (`crank`), and for a paired kernel (WgmmaPlan::paired) the CTAs it
// multicasts to (`pair_mask`); none without a cluster.
std::string wgmma_cluster_copy_args(const compiler::KernelPlan& plan);
// "one (R, C) box" or "P (R, C) boxes": an operand's stage for comments.
std::string wgmma_boxes_text(const compiler::WgmmaOperand& o);

// The bytes from a stage's first k-step to k-step `kk` (an expression) of
// operand `o` read by descriptor, k-steps of `inst_k` elements: kk * 32 in
// one 128-byte panel of k; across a k-major stage's panels, the panel
// kk / (P / inst_k) and the step in it. Unrolled loops fold it.
std::string wgmma_k_step_bytes(const compiler::WgmmaOperand& o, int inst_k, const std::string& kk);

// store_pair(C, ldc, M, N, row, col, v0, v1, alpha, beta, bias, pairs): the
// epilogue of two neighbours in a row; a 4-byte pair store when `pairs`
// (C and ldc allow it, checked once per launch), else element by element.
// With WgmmaPlan::direct_quads it emits store_quad too (four adjacent
// columns of a 4-byte C as one 16-byte store).
void emit_wgmma_store_pair(Emitter& e, const compiler::KernelPlan& plan);

// Inside the kernel: `smem`, sA/sB base addresses, full/empty barriers
// initialized by thread 0, and a __syncthreads.
// Thread 0 prefetches the tensor maps first (emit_wgmma_prefetch_maps); after
// the barriers every main entry waits for the grid ahead of it
// (emit_wgmma_dependent_launch: programmatic dependent launch,
// KernelEntry::dependent_launch).
void emit_wgmma_barriers(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_prefetch_maps(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_dependent_launch(Emitter& e, const compiler::KernelPlan& plan);
// Where a block has issued its last copy (the producer's end, or the
// consumers' k loop's without warp_specialize): thread 0 lets the next grid
// launch, when this grid has at most one block an SM and is neither
// persistent nor stream_k's.
void emit_wgmma_launch_dependents(Emitter& e, const compiler::KernelPlan& plan);

// The producer's loop: wait until a stage is free, copy the next k-tile into
// it. With warp_specialize, thread 0 of the producer warpgroup runs it
// all; without, thread 0 fills the pipeline first (`prologue`) and then
// refills one stage per k-tile inside the consumer loop.
void emit_wgmma_producer(Emitter& e, const compiler::KernelPlan& plan);

// Whether the consumers may read A's stage as two panels of 64-byte rows in
// the 64-byte swizzle: the NHWC convolution's, whose launch loads A by two
// im2col copies a k-tile where C is a multiple of BK / 2 only
// (conv.im2col == 2: compiler/conv_im2col.h, im2col_copies). A k-tile's
// rows are 128 bytes there (4 k-steps of 32), so a k-step is half a panel row;
// a k-tile of several 128-byte panels takes one copy a panel or none (C a
// multiple of 128 bytes, else the producer's copies).
inline bool a_in_panels(const compiler::WgmmaPlan& w) {
  return w.conv && !w.conv->nchw32 && !w.registers() && w.a.panels() == 1;
}

// The consumer's k loop: wait for a stage, issue its wgmma steps, commit,
// wait for the previous k-tile's group and free its stage. `consumer` names
// the expression of this warpgroup's consumer index.
void emit_wgmma_consumer(Emitter& e, const compiler::KernelPlan& plan);

// The accumulators to C (predicated at the matrix edges): the tile's stores,
// then the end of the tile scope that emit_wgmma_consumer opened (and, with
// tma_store, the wait for the last store). The stream_k tail puts its
// fix-up between the consumer and the stores.
void emit_wgmma_epilogue(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_tile_stores(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_tile_end(Emitter& e, const compiler::KernelPlan& plan);

// stream_k (codegen/blocks_wgmma_stream_k.cpp), in the tail entry after the
// consumer's k loop: every consumer thread publishes its accumulators as the
// block's partial sums, the block counts its arrival, and in the last of the
// tile's slices to arrive (`bool write_c`) the accumulators become the sum
// of all the tile's slices, in slice order.
void emit_wgmma_stream_k_fixup(Emitter& e, const compiler::KernelPlan& plan);

// The named barrier of the consumer warpgroups alone (ids 1-4 are the
// staging and pingpong barriers; 0 is __syncthreads, which would wait for the
// producer): the stream_k fix-up's and the split_k sum's (never in one kernel).
inline constexpr int kWgmmaConsumersBarrier = 5;

// The wrapper function of one wgmma instruction: wgmma_m64n<N>k<K>.
std::string wgmma_inst_name(const compiler::WgmmaPlan& w);

// `#define NAME(x)`: acc flattened, instruction by instruction, register by
// register (x unrolls to a constant, so acc stays in registers): the
// stream_k fix-up's and the split_k sum's view of the accumulators.
std::string wgmma_acc_macro(const compiler::WgmmaPlan& w, const std::string& name);

// split_k (plan.split_k > 1, codegen/blocks_wgmma_split_k.cpp): the helpers
// (split_rank_of_cta, split_slices_of_cluster, split_arrive / split_wait:
// the cluster barrier in halves, split_load_v4: a remote shared load; where
// the sums are pushed, WgmmaPlan::split_push, split_store_async_v4 and
// split_wait_cluster); at the kernel's start
// split_rank, split_slices, split_tile (the block index of the tile) and the
// CTA's k-tiles [k_first, k_last); beside the barriers (pushed sums only)
// the receive area's offsets (split_recv, split_bar), the parts' barriers'
// init (in thread 0's init) and the start's relaxed cluster arrive (after the
// block's barrier); the producer warpgroup's part in the sum's cluster
// barriers; and after the consumers' k loop the sum itself, which declares
// split_owner (the CTA that stores this consumer's part: split_part %
// split_slices pushed, 0 pulled) and leaves the part's total in the owner's
// acc (the caller stores C where split_rank == split_owner, then, where the
// sums are pulled, has it split_wait() at barrier (2)).
void emit_wgmma_split_k_helpers(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_split_k_slice(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_split_k_smem(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_split_k_barrier_init(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_split_k_start(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_split_k_producer_end(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_split_k_sum(Emitter& e, const compiler::KernelPlan& plan);

// Frees pipeline iteration `x`'s stage (`cond`: a condition prefix, "" or
// "expr && "): one arrival per consumer warp; without warp_specialize,
// thread 0 then refills it.
void emit_wgmma_release(Emitter& e, const compiler::KernelPlan& plan, const std::string& cond,
                        const std::string& x);

// Opens the unrolled loops over a consumer's instructions (i < m_insts,
// j < n_insts) and, inside, `inner` (a loop header over its registers);
// three close_scope close them.
void emit_wgmma_instruction_loops(Emitter& e, const compiler::WgmmaPlan& w,
                                  const std::string& inner);

// The accumulator constraint lines ("+f"(d[r]), 8 a line; "+r" for the
// s32 accumulators of an integer wgmma) of a wgmma asm.
void emit_wgmma_accumulator_operands(Emitter& e, int regs, bool integer);

// tf32 (plan.wgmma->swapped, codegen/blocks_wgmma_tf32.cpp): C^T = B^T A^T.
// The instruction wgmma_m64nNk8(acc, a[4], desc_b) with B^T in registers and
// tf32_from_shared(addr) (a B element rounded to tf32).
void emit_wgmma_tf32_instruction(Emitter& e, const compiler::WgmmaPlan& w);
// Per-thread offsets of its B^T fragment elements in a B stage (bt_off[4]),
// and frag[2][m_insts][4]; before the consumer's tile loop.
void emit_wgmma_tf32_fragments(Emitter& e, const compiler::KernelPlan& plan);
// One k-tile: per k-step, B^T fragments into registers, then the wgmma.
void emit_wgmma_tf32_k_steps(Emitter& e, const compiler::KernelPlan& plan);
// The accumulators (C^T fragments) to C, straight from registers.
void emit_wgmma_tf32_stores(Emitter& e, const compiler::KernelPlan& plan);

// cluster (plan.wgmma->cluster_size() == 2, codegen/blocks_wgmma_cluster.cpp):
// cluster_ctarank, cluster_sync, mbar_arrive_cluster, tma_load_2d_multicast;
// tma_copy_tile(..., crank) multicasting this CTA's half of the shared
// operand; the persistent walk over super-tiles (crank, walk_id, walkers,
// stiles_m/n, my_tiles); and the tile origin of walk step `step`.
void emit_wgmma_cluster_helpers(Emitter& e, bool batched);
void emit_wgmma_cluster_tma_copy(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_cluster_walk(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_cluster_tile(Emitter& e, const compiler::KernelPlan& plan, const std::string& step);

// conv (plan.wgmma->conv, codegen/blocks_wgmma_conv.cpp): ConvArgs, the
// cp.async helpers and tma_copy_filters (B's TMA loads of one k-tile, in
// place of tma_copy_tile); the producer warpgroup's loop, all 128 threads
// copying A's stage from the input through the offset table.
void emit_wgmma_conv_helpers(Emitter& e, const compiler::KernelPlan& plan);
void emit_wgmma_conv_producer(Emitter& e, const compiler::KernelPlan& plan);
// `halo`: the k-tiles' order, channel block by block (each block's taps in
// turn), from the slice's first k-tile `first`: h_first, h_block, h_tap; and
// the step to the next k-tile. `two_taps` (halo_64b): the launch may set
// conv.im2col = 4, where a k-tile is two taps (h_step) of 64-byte pixels.
void emit_halo_k_order(Emitter& e, const std::string& first, bool two_taps);
void emit_halo_k_next(Emitter& e, bool two_taps);
// `halo` on a kernel whose k-tile is one 128-byte panel (a_in_panels): it also
// takes 64-byte pixels, two taps a k-tile (conv.im2col = 4: compiler/
// conv_halo.h, halo_row_bytes; KernelEntry::a_halo_64b).
inline bool halo_64b(const compiler::KernelPlan& p) {
  return p.schedule.halo && a_in_panels(*p.wgmma);
}
// The kernel's test that the launch took the halo: conv.im2col 3, or 3 or 4
// where halo_64b.
inline std::string halo_taken(const compiler::KernelPlan& p) {
  return halo_64b(p) ? "conv.im2col >= 3" : "conv.im2col == 3";
}
// The first accumulator row of this consumer thread within its block's tile
// (non-pingpong consumers): its warpgroup's rows, then 16 a warp, lane / 4.
// The epilogue's row0 is tile_m0 plus it; a halo's h_rows start from it.
std::string consumer_row_in_tile(const compiler::WgmmaPlan& w);
// `halo`: h_rows, each of the consumer thread's accumulator rows' output row
// (M where junk), computed before the k loop; the epilogue's stores use it.
void emit_halo_rows(Emitter& e, const compiler::KernelPlan& plan);

// The origin (tile_m0, tile_n0) of the block's `step`-th tile of its
// persistent walk (clusters: of its rank's tile of the step-th super-tile).
void emit_wgmma_walk_tile(Emitter& e, const compiler::KernelPlan& plan, const std::string& step);

// extern "C" NAME_repack(src, rows, cols, ld, dst, dst_ld): rows x cols
// elements from any pointer and leading dimension to dst, whose rows are
// dst_ld elements (a multiple of 16 bytes) apart and 16-byte aligned; the
// padding is zeroed. 256 threads, one 16-byte chunk of dst each.
void emit_wgmma_repack_kernel(Emitter& e, const compiler::KernelPlan& plan,
                              const std::string& name);

// extern "C" NAME(src, rows, cols, ld, dst, dst_ld): the rows x cols source
// (a column-major A: K rows of M) transposed into dst (cols rows of dst_ld,
// zero past rows), 32 x 8 threads a block, a block per 32 x 32 source tile
// (grid: cols / 32 by dst_ld / 32, rounded up).
void emit_wgmma_transpose_kernel(Emitter& e, const compiler::KernelPlan& plan,
                                 const std::string& name);

}  // namespace schedc::codegen
