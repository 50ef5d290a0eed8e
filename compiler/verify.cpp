// verify(plan): the invariants lowering promises, checked by walking every
// map for every thread. A failure is a schedc bug (InternalError).
#include <string>
#include <vector>

#include "compiler/kernel_plan.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

namespace {

#define VERIFY(cond, msg) SCHEDC_INTERNAL_ASSERT(cond, std::string("verify(plan): ") + (msg))

// Each C element of the block tile is owned by exactly one (thread, i, j).
void verify_thread_map(const KernelPlan& p) {
  const ThreadMap& m = p.threads;
  VERIFY(m.tm % m.pm == 0 && m.tn % m.pn == 0, "piece does not divide the thread tile");
  VERIFY(m.region_m % m.pieces_m() == 0 && m.region_n % m.pieces_n() == 0,
         "pieces do not divide the region");
  VERIFY(m.lanes_m * m.pm == m.piece_stride_m() && m.lanes_n * m.pn == m.piece_stride_n(),
         "lanes do not fill a piece stride");
  if (m.warp_tiled)
    VERIFY(m.threads_per_region() == p.target.warp_size, "warp tile is not one warp");
  std::vector<int> owner(size_t(p.block_m) * p.block_n, 0);
  for (int t = 0; t < p.block_threads; ++t)
    for (int i = 0; i < m.tm; ++i)
      for (int j = 0; j < m.tn; ++j) {
        int r = m.row(t, i), c = m.col(t, j);
        VERIFY(r >= 0 && r < p.block_m && c >= 0 && c < p.block_n, "C element outside the tile");
        ++owner[size_t(r) * p.block_n + c];
      }
  for (int n : owner) VERIFY(n == 1, "a C element is not written by exactly one thread");
}

// Each tile element is loaded once per k-step; its shared slot is in bounds,
// slots are distinct, and vector accesses are contiguous and aligned.
void verify_copy(const KernelPlan& p, const TileCopy& c, const SmemLayout& l) {
  VERIFY(c.threads == p.block_threads, "copy threads");
  VERIFY(c.vec >= 1 && c.cols % c.vec == 0, "copy vector width");
  VERIFY(c.iters == (c.vectors() + c.threads - 1) / c.threads, "copy iterations");
  std::vector<int> loads(size_t(c.rows) * c.cols, 0);
  std::vector<int> slot(size_t(l.buffer_elems()), 0);
  for (int t = 0; t < c.threads; ++t)
    for (int i = 0; i < c.iters; ++i) {
      if (!c.active(t, i)) continue;  // past the last vector: the kernel's guard skips it
      auto [r, col] = c.coord(t, i);
      VERIFY(r >= 0 && r < c.rows && col >= 0 && col + c.vec <= c.cols, "copy outside the tile");
      // Shared memory is addressed by the operand's logical coordinates.
      auto offset = [&](int row, int column) {
        auto [lr, lc] = c.logical(row, column);
        return l.offset(lr, lc);
      };
      int first = offset(r, col);
      if (c.smem_vec > 1) VERIFY(first % c.smem_vec == 0, "shared vector store misaligned");
      for (int e = 0; e < c.vec; ++e) {
        ++loads[size_t(r) * c.cols + col + e];
        int o = offset(r, col + e);
        VERIFY(o >= 0 && o < l.buffer_elems(), "shared index out of bounds");
        if (e % c.smem_vec) VERIFY(o == offset(r, col + e - 1) + 1, "shared vector not contiguous");
        ++slot[size_t(o)];
      }
    }
  for (int n : loads) VERIFY(n == 1, "a tile element is not loaded exactly once per k-step");
  for (int n : slot) VERIFY(n <= 1, "two tile elements share a shared-memory slot");
}

// Fragment reads: every (thread, k, element) reads an in-bounds slot, and a
// vector read covers `vec` contiguous, aligned slots holding the right elements.
void verify_frag(const KernelPlan& p) {
  const ThreadMap& m = p.threads;
  for (int t = 0; t < p.block_threads; ++t)
    for (int k = 0; k < p.block_k; ++k) {
      for (int i = 0; i < m.tm; ++i) {
        int o = p.smem_a.offset(m.row(t, i), k);
        VERIFY(o >= 0 && o < p.smem_a.buffer_elems(), "A fragment read out of bounds");
        int base = i - i % p.frag.vec_a;
        VERIFY(o == p.smem_a.offset(m.row(t, base), k) + i % p.frag.vec_a,
               "A fragment vector not contiguous");
        if (i % p.frag.vec_a == 0) VERIFY(o % p.frag.vec_a == 0, "A fragment vector misaligned");
      }
      for (int j = 0; j < m.tn; ++j) {
        int o = p.smem_b.offset(k, m.col(t, j));
        VERIFY(o >= 0 && o < p.smem_b.buffer_elems(), "B fragment read out of bounds");
        int base = j - j % p.frag.vec_b;
        VERIFY(o == p.smem_b.offset(k, m.col(t, base)) + j % p.frag.vec_b,
               "B fragment vector not contiguous");
        if (j % p.frag.vec_b == 0) VERIFY(o % p.frag.vec_b == 0, "B fragment vector misaligned");
      }
    }
  VERIFY(m.pm % p.frag.vec_a == 0 && m.pn % p.frag.vec_b == 0, "fragment vector crosses a piece");
  VERIFY(m.pn % p.epilogue.vec == 0, "C store vector crosses a piece");
  VERIFY(!p.epilogue.whole_groups || (p.epilogue.vec > 1 && !p.epilogue.check_align),
         "whole C groups: a vector main entry, which checks no alignment itself");
}

// Every C element of the block tile is one accumulator of one thread: to_c
// maps (piece c, instruction (i, j), D's (row, col)) to the tile's (m, n).
template <typename ToC>
void verify_accumulators_cover(const KernelPlan& p, ToC to_c) {
  const WgmmaPlan& w = *p.wgmma;
  std::vector<int> owner(size_t(p.block_m) * p.block_n, 0);
  for (int c = 0; c < w.parts(); ++c)
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < w.m_insts; ++i)
        for (int j = 0; j < w.n_insts; ++j)
          for (int r = 0; r < w.inst_n / 2; ++r) {
            int row = 0, col = 0, m = 0, n = 0;
            wgmma_d_coord(t, r, row, col);
            to_c(c, i, j, row, col, m, n);
            VERIFY(m >= 0 && n >= 0 && m < p.block_m && n < p.block_n,
                   "accumulator outside the tile");
            ++owner[size_t(m) * p.block_n + n];
          }
  for (int n : owner) VERIFY(n == 1, "a C element is not one accumulator of one thread");
}

// The register operand's fragments (tf32: B^T when swapped, A when
// a_in_registers) hold each element of the consumer's rows of it, at k-step
// kk, in exactly one register of one thread.
void verify_register_fragments(const WgmmaPlan& w, int c, int kk) {
  const int rows = w.swapped ? w.wg_n : w.wg_m;
  std::vector<int> held(size_t(w.inst_k) * rows, 0);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < w.m_insts; ++i)
      for (int v = 0; v < 4; ++v) {
        int k = 0, n = 0;
        w.bt_fragment(c, t, i, kk, v, k, n);
        const int nl = n - w.register_row0(c), kl = k - kk * w.inst_k;
        VERIFY(nl >= 0 && nl < rows && kl >= 0 && kl < w.inst_k,
               "register fragment outside the consumer's k-step");
        ++held[size_t(kl) * rows + nl];
      }
  for (int h : held) VERIFY(h == 1, "an element is not one fragment register");
}

// f16/bf16, and tf32 with B column-major: accumulator (row, col) of
// instruction (i, j) is C's (row, col) of the consumer's tile; both operands
// by descriptor, or (a_in_registers) A's fragments from its stage.
void verify_wgmma_operands(const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  verify_accumulators_cover(p, [&](int c, int i, int j, int row, int col, int& m, int& n) {
    m = w.consumer_row0(c) + i * w.inst_m + row;
    n = w.consumer_col0(c) + j * w.inst_n + col;
  });
  for (int c = 0; c < w.consumers(); ++c)
    for (int kk = 0; kk < w.k_steps; ++kk) {
      if (w.a_in_registers) verify_register_fragments(w, c, kk);
      for (int i = 0; i < w.m_insts && !w.a_in_registers; ++i)
        for (int r = 0; r < w.inst_m; ++r)
          for (int k = 0; k < w.inst_k; ++k)
            VERIFY(wgmma_operand_byte(w.a, w.a_start(c, i, kk), r, k) ==
                       w.a.offset(w.consumer_row0(c) + i * w.inst_m + r, kk * w.inst_k + k),
                   "A descriptor reads where TMA wrote");
      for (int j = 0; j < w.n_insts; ++j)
        for (int k = 0; k < w.inst_k; ++k)
          for (int n = 0; n < w.inst_n; ++n)
            VERIFY(wgmma_operand_byte(w.b, w.b_start(c, j, kk), n, k) ==
                       w.b.offset(w.consumer_col0(c) + j * w.inst_n + n, kk * w.inst_k + k),
                   "B descriptor reads where TMA wrote");
    }
}

// tf32 (swapped, compiler/wgmma_plan.h): accumulator (row, col) of
// instruction (i, j) is C's (col, row) of the consumer's tile; A's stage is
// read k-major by descriptor, B's stage element by element into PTX's A
// fragments, each element of the consumer's columns once per k-step.
void verify_wgmma_swapped(const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  verify_accumulators_cover(p, [&](int c, int i, int j, int row, int col, int& m, int& n) {
    m = w.consumer_row0(c) + j * w.inst_n + col;
    n = w.consumer_col0(c) + i * w.inst_m + row;
  });
  for (int c = 0; c < w.consumers(); ++c)
    for (int kk = 0; kk < w.k_steps; ++kk) {
      for (int j = 0; j < w.n_insts; ++j)
        for (int r = 0; r < w.inst_n; ++r)
          for (int k = 0; k < w.inst_k; ++k)
            VERIFY(wgmma_operand_byte(w.a, w.a_operand_start(c, j, kk), r, k) ==
                       w.a.offset(w.consumer_row0(c) + j * w.inst_n + r, kk * w.inst_k + k),
                   "A descriptor reads where TMA wrote");
      verify_register_fragments(w, c, kk);
    }
}

// wgmma: every C element of the block tile is one accumulator of one consumer
// thread; every element wgmma's descriptors read (the PTX canonical layout,
// compiler/wgmma_plan.h) is the byte TMA wrote that element to, for every
// consumer, instruction and k-step; stages and barriers stay aligned.
void verify_wgmma(const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  VERIFY(p.block_threads == 128 * w.warpgroups(), "threads = 128 per warpgroup");
  VERIFY(w.consumers_m * w.wg_m == p.block_m && w.consumers_n * w.wg_n == p.block_n,
         "consumer tiles cover the block tile");
  VERIFY((w.swapped ? w.m_insts * w.inst_m == w.wg_n && w.n_insts * w.inst_n == w.wg_m
                    : w.m_insts * w.inst_m == w.wg_m && w.n_insts * w.inst_n == w.wg_n) &&
             w.k_steps * w.inst_k == p.block_k,
         "instructions cover the warpgroup tile");
  VERIFY(w.accumulators == w.m_insts * w.n_insts * w.inst_n / 2, "accumulators per thread");
  VERIFY(w.a.offset_bytes % 1024 == 0 && w.b.offset_bytes % 1024 == 0 &&
             w.a.stage_bytes % 1024 == 0 && w.b.stage_bytes % 1024 == 0,
         "stages 1024-byte aligned");
  VERIFY(w.c_offset_bytes % 1024 == 0 && w.c_consumer_bytes % 1024 == 0 &&
             w.sector_offset_bytes == w.c_offset_bytes + w.consumers() * w.c_consumer_bytes &&
             w.barrier_offset_bytes == w.sector_offset_bytes + w.sector_rows * p.block_n * 4,
         "C staging after the stages, 1024-byte aligned");
  // Sector-staged stores: rows of the block tile, a bijection onto the
  // staging area, by consumers side by side along N.
  if (w.sector_rows > 0) {
    VERIFY(w.swapped && !w.c_col && !w.pingpong && !w.tma_store && w.consumers_m == 1 &&
               w.inst_n % w.sector_rows == 0 && w.sector_rows % 8 == 0 && p.block_n % 32 == 0,
           "sector-staged stores: swapped tf32, row-major C, whole 8-row groups of an instruction");
    std::vector<int> hit(size_t(w.sector_rows * p.block_n), 0);
    for (int r = 0; r < w.sector_rows; ++r)
      for (int c = 0; c < p.block_n; ++c) {
        const int off = WgmmaPlan::sector_stage_offset(p.block_n, r, c);
        VERIFY(off >= 0 && off < w.sector_rows * p.block_n * 4 && off % 4 == 0,
               "sector staging offset in bounds");
        ++hit[size_t(off / 4)];
      }
    for (int h : hit) VERIFY(h == 1, "sector staging is a bijection");
  }
  // The staging layout, chunk after chunk, is a bijection onto the
  // consumer's tile.
  if (w.tma_store) {
    VERIFY(w.c_chunk_panels > 0 && w.c_stage_panels() % w.c_chunk_panels == 0 &&
               (w.c_chunks() == 1 || !w.c_col),
           "C staged in whole chunks of panels (several: row-major C only)");
    std::vector<int> hit(size_t(w.c_chunks() * w.c_consumer_bytes / w.c_elem_bytes), 0);
    for (int r = 0; r < w.wg_m; ++r)
      for (int c = 0; c < w.wg_n; ++c) {
        const int off = w.c_stage_offset(r, c);
        VERIFY(off >= 0 && off < w.c_chunks() * w.c_consumer_bytes && off % w.c_elem_bytes == 0,
               "C staging offset in bounds");
        ++hit[size_t(off / w.c_elem_bytes)];
      }
    for (int h : hit) VERIFY(h == 1, "C staging is a bijection");
  }
  const int barriers_end = w.barrier_offset_bytes + 16 * w.stages;
  VERIFY(w.barrier_offset_bytes % 8 == 0 &&
             p.smem_bytes == (w.split_push() ? w.split_recv_offset_bytes +
                                                   wgmma_split_recv_bytes(p.schedule, barriers_end)
                                             : barriers_end),
         "barriers after the stages");
  VERIFY(
      !w.split_push() ||
          (p.split_k > 1 && w.split_recv_offset_bytes % 16 == 0 &&
           w.split_recv_offset_bytes >= barriers_end &&
           wgmma_split_recv_bytes(p.schedule, barriers_end) ==
               (8 * wgmma_split_parts_owned(p.schedule) + 15) / 16 * 16 +
                   wgmma_split_parts_owned(p.schedule) * (p.split_k - 1) * p.block_m * p.block_n *
                       4 / wgmma_split_parts(p.schedule) &&
           wgmma_split_parts(p.schedule) * wgmma_split_part_threads(p.schedule) == 128 * w.parts()),
      "split_k's receive area after the barriers: each other CTA's sums of each part a CTA "
      "may own, and the parts' barriers");
  VERIFY(p.smem_bytes <= p.target.smem_per_block_optin, "shared memory over the target's limit");
  VERIFY(
      !w.warp_specialize || w.producer_regs * 128 + w.consumer_regs * 128 * w.consumers() <=
                                p.target.register_pool(p.block_threads, p.schedule.blocks_per_sm),
      "setmaxnreg budget within the block's register pool (more hangs setmaxnreg.inc)");
  VERIFY(!w.pingpong || (w.persistent && w.warp_specialize && w.parts() == 1),
         "pingpong: persistent, specialized, each consumer the whole tile");
  VERIFY(w.cluster_size() == 1 ||
             (w.cluster_size() == 2 && w.warp_specialize && (!w.shares_b() || w.b.halves()) &&
              (!w.shares_a() || w.a.halves()) &&
              (w.persistent || (w.shares_b() && p.split_k > 1 && 2 * p.split_k <= kMaxSplitK &&
                                p.swizzle_group <= 1))),
         "cluster: two CTAs, specialized, the shared operand in two halves; persistent, or paired "
         "on split_k's clusters (2x1, S x 2 CTAs at most 8, a row-major grid)");
  // stream_k: partial sums move as float4 per consumer thread; the tail
  // computes one slice per block, alone (compiler/lower_wgmma.cpp).
  VERIFY(!p.stream_k || (w.cluster_size() == 1 && w.accumulators % 4 == 0),
         "stream_k: no cluster, accumulators in float4s");
  VERIFY(!p.stream_k_tail || (p.stream_k && !w.persistent && !w.pingpong),
         "stream_k tail: one slice per block, cooperative consumers");
  // wgmma reads tf32 by descriptor only k-major; swapped reads B (n-major)
  // into registers and A (k-major) by descriptor.
  VERIFY(w.type != MmaType::tf32 || (w.a.mn_major == w.a_in_registers &&
                                     w.b.mn_major == w.swapped && !(w.swapped && w.a_in_registers)),
         "tf32: descriptors read k-major stages only, one operand at most from registers");
  VERIFY(!w.registers() || w.type == MmaType::tf32, "register operands: tf32 only");
  // s8: both stages k-major, the runtime transposing what is not.
  VERIFY(w.type != MmaType::s8 || (!w.a.mn_major && !w.b.mn_major && !(w.tma_store && w.c_col)),
         "s8: k-major stages, tma_store with row-major C only");
  VERIFY(!w.b_transposed || w.type == MmaType::s8, "a transposed B: s8 only");
  if (w.swapped)
    verify_wgmma_swapped(p);
  else
    verify_wgmma_operands(p);
}

}  // namespace

void verify(const KernelPlan& p) {
  if (p.kind == KernelKind::mma) return;  // the tensor-core lowering checks its own
  if (p.kind == KernelKind::wgmma) return verify_wgmma(p);
  VERIFY(p.block_threads >= 1 && p.block_threads <= p.target.max_threads_per_block,
         "threads per block");
  if (p.kind == KernelKind::naive) {
    VERIFY(p.block_threads == p.block_x * p.block_y, "naive block shape");
    VERIFY(p.smem_bytes == 0, "naive kernel uses no shared memory");
    return;
  }
  VERIFY(p.block_m % p.threads.tm == 0 && p.block_n % p.threads.tn == 0, "thread tile");
  VERIFY(p.block_threads == (p.block_m / p.threads.tm) * (p.block_n / p.threads.tn),
         "threads per block = (BM/TM)*(BN/TN)");
  VERIFY(p.smem_a.buffers == p.smem_b.buffers && p.smem_a.buffers == p.stages &&
             (p.pipeline == Pipeline::single) == (p.stages == 1),
         "buffers");
  VERIFY(p.smem_bytes == (p.smem_a.total_elems() + p.smem_b.total_elems()) * elem_bytes(p.dtype),
         "smem bytes");
  VERIFY(p.smem_bytes <= p.target.smem_per_block_optin, "shared memory over the target's limit");
  VERIFY(p.swizzle_group >= 1, "swizzle group");
  VERIFY(!p.stream_k || p.kind == KernelKind::tiled, "stream_k on a tiled SIMT plan (or wgmma)");
  VERIFY(!p.stream_k_tail || p.stream_k, "a stream_k tail of a stream_k plan");
  // The late half's copies must be committed before the last step's wait,
  // and the two halves must be whole warps.
  VERIFY(p.copy_late_step == 0 ||
             (p.pipeline == Pipeline::cp_async && p.frag_double_buffer &&
              p.copy_late_step < p.block_k - 1 && p.block_threads % (2 * p.target.warp_size) == 0),
         "copy stagger step");
  verify_thread_map(p);
  verify_copy(p, p.copy_a, p.smem_a);
  verify_copy(p, p.copy_b, p.smem_b);
  verify_frag(p);
}

}  // namespace schedc::compiler
