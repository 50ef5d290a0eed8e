#include "codegen/blocks_wgmma.h"

#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_stream_k.h"
#include "codegen/blocks_tma.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

// The accumulators' constraint lines of an inline-asm wgmma (8 a line).
void emit_wgmma_instruction_loops(Emitter& e, const WgmmaPlan& w, const std::string& inner) {
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %d; ++i)", w.m_insts));
  e.line("#pragma unroll");
  e.open_scope(format("for (int j = 0; j < %d; ++j)", w.n_insts));
  e.line("#pragma unroll");
  e.open_scope(inner);
}

std::string wgmma_acc_macro(const WgmmaPlan& w, const std::string& name) {
  const int R = w.inst_n / 2;
  return format("#define %s(x) acc[(x) / %d][(x) / %d %% %d][(x) %% %d]", name.c_str(),
                w.n_insts * R, R, w.n_insts, R);
}

void emit_wgmma_accumulator_operands(Emitter& e, int regs, bool integer) {
  for (int r0 = 0; r0 < regs; r0 += 8) {
    std::string outs = r0 == 0 ? "    : " : "      ";
    for (int r = r0; r < r0 + 8 && r < regs; ++r)
      outs += format(integer ? "\"+r\"(d[%d])" : "\"+f\"(d[%d])", r) + (r + 1 < regs ? ", " : "");
    e.line(outs);
  }
}

namespace {

// bar.sync on a named barrier: tma_store's staging, pingpong's order and the
// sector-staged stores each need it (one definition a module).
const char* const kNamedBarrier =
    R"(__device__ __forceinline__ void named_barrier(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
})";

const char* ptx_type(const WgmmaPlan& w) {
  return w.type == compiler::MmaType::bf16   ? "bf16"
         : w.type == compiler::MmaType::tf32 ? "tf32"
         : w.type == compiler::MmaType::s8   ? "s8"
                                             : "f16";
}

// How an operand lies for the instruction's comment: A (64 x K), B (K x N).
std::string operand_text(const compiler::WgmmaOperand& o, bool is_a, int rows, int cols) {
  const char* major =
      o.mn_major ? (is_a ? "m-major: transposed" : "n-major: transposed") : "k-major";
  return format("%dx%d, %s", rows, cols, major);
}

// The inline-asm wrapper of one wgmma.mma_async: N/2 accumulators in, out.
void emit_instruction(Emitter& e, const WgmmaPlan& w) {
  if (w.registers()) return emit_wgmma_tf32_instruction(e, w);
  const int regs = w.inst_n / 2;
  const bool integer = w.integer();
  e.comment(format("acc += A (%s) * B (%s), both from shared",
                   operand_text(w.a, true, 64, w.inst_k).c_str(),
                   operand_text(w.b, false, w.inst_k, w.inst_n).c_str()));
  e.comment(format("memory by descriptor; acc is the m64n%d %s D fragment (compiler/wgmma_plan.h);",
                   w.inst_n, w.d_type()));
  e.comment("scale_d 0: acc = A * B, its old value unread (a tile's first k-step)");
  e.open_scope(
      format("__device__ __forceinline__ void %s(%s (&d)[%d], unsigned long long "
             "desc_a, unsigned long long desc_b, int scale_d)",
             wgmma_inst_name(w).c_str(), integer ? "int" : "float", regs));
  std::string list;
  for (int r = 0; r < regs; ++r) list += (r ? ", %" : "%") + std::to_string(r);
  e.line("asm volatile(");
  e.line("    \"{\\n.reg .pred p;\\nsetp.ne.b32 p, " + format("%%%d", regs + 2) + ", 0;\\n\"");
  e.line(format("    \"wgmma.mma_async.sync.aligned.m%dn%dk%d.%s.%s.%s \"", w.inst_m, w.inst_n,
                w.inst_k, w.d_type(), ptx_type(w), ptx_type(w)));
  e.line("    \"{" + list + "},\"");
  // scale-a, scale-b 1; the transpose flags (1: MN-major), which tf32 has not
  // (it reads k-major operands only); the integer form has neither.
  const std::string flags = w.type == compiler::MmaType::tf32
                                ? ""
                                : format(", %d, %d", w.a.mn_major ? 1 : 0, w.b.mn_major ? 1 : 0);
  if (integer)
    e.line(format("    \" %%%d, %%%d, p;\\n}\\n\"", regs, regs + 1));
  else
    e.line(format("    \" %%%d, %%%d, p, 1, 1%s;\\n}\\n\"", regs, regs + 1, flags.c_str()));
  emit_wgmma_accumulator_operands(e, regs, integer);
  e.line("    : \"l\"(desc_a), \"l\"(desc_b), \"r\"(scale_d));");
  e.close_scope();
  e.line();
}

}  // namespace

std::string wgmma_inst_name(const WgmmaPlan& w) {
  return format("wgmma_m%dn%dk%d", w.inst_m, w.inst_n, w.inst_k);
}

std::string wgmma_k_step_bytes(const compiler::WgmmaOperand& o, int inst_k, const std::string& kk) {
  const int per_panel = o.panel_cols / inst_k;  // k-steps in a 128-byte panel of k
  if (o.mn_major || o.panels() == 1) return format("%s * %du", kk.c_str(), o.k_bytes(inst_k));
  return format("(%s / %d) * %du + (%s %% %d) * %du", kk.c_str(), per_panel, o.panel_bytes(),
                kk.c_str(), per_panel, o.k_bytes(inst_k));
}

void emit_wgmma_helpers(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.lines(R"(// Shared-memory matrix descriptor (PTX ISA, wgmma): start address, leading and
// stride byte offsets (each >> 4, 14 bits), 128-byte swizzle (mode 1, bits 62-63).
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
         ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}
// Orders this thread's register accesses before the wgmma that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// Closes the wgmma issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N groups of this warpgroup are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// A tensor map's 128 bytes into the cache before the first copy through it needs them.
__device__ __forceinline__ void prefetch_tensormap(const TmaMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&map)) : "memory");
})");
  if (a_in_panels(w))
    e.lines(R"(// The same in the 64-byte swizzle (mode 2): A's stage in two panels of 64-byte rows
// (two im2col copies a k-tile, conv.im2col == 2), 8-row groups 512 bytes apart.
__device__ __forceinline__ unsigned long long wgmma_desc_64b(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (32ull << 32) | (2ull << 62);
})");
  if (w.warp_specialize)
    e.lines(R"(// Register reallocation between warpgroups (needs __launch_bounds__(threads, 1)).
template <int R>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
})");
  // Orders this thread's shared-memory writes (st.shared, cp.async) before the
  // async proxy's reads of them (TMA stores, wgmma).
  const std::string fence =
      R"(// Makes this thread's shared-memory stores visible to TMA (the async proxy).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
)";
  if (w.tma_store) {
    const bool batched = p.schedule.batch > 0;
    const TmaCoords at = tma_coords(batched, 2, 4);
    const std::string store =
        R"(// TMA store of one box from shared memory (the tensor map clips it at the matrix
// edge)" +
        std::string(batched ? "; into GEMM z's C" : "") +
        R"(), its group commit, and the waits for its shared-memory reads / the whole store.
__device__ __forceinline__ void tma_store_2d(const TmaMap& map, unsigned src, int col, int row)" +
        at.z_param + R"() {
  asm volatile("cp.async.bulk.tensor.)" +
        at.dims + R"(.global.shared::cta.bulk_group [%0, )" + at.list + R"(], [%1];\n"
               ::"l"(&map), "r"(src), "r"(col), "r"(row))" +
        at.z_operand + R"( : "memory");
}
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// Four 8x8 b16 matrices to shared memory: lane L gives the address of row L % 8 of
// matrix L / 8 and, in r_q, its two elements of row L / 4 of matrix q.
__device__ __forceinline__ void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}
)";
    const std::string rest =
        std::string(
            "// Barrier `id` (1..15) among `count` threads (a warpgroup, not the block).\n") +
        kNamedBarrier;
    // Column-major C: the staging is m-major, each 8x8 matrix stored transposed.
    const char* trans =
        R"(// The same, each matrix transposed: lane L's address is row L % 8 of matrix L / 8
// as stored, which holds column L % 8 of the registers' matrix.
__device__ __forceinline__ void stmatrix_x4_trans(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}
)";
    e.lines(store + (w.c_col ? trans : "") + fence + rest);
  } else if (w.conv) {  // the producer's cp.async copies, read by wgmma
    e.lines(fence);
  }
  if (w.sector_rows > 0) {  // (never with tma_store or pingpong, which define it too)
    e.comment("Barrier `id` (1..15) among `count` threads: the consumers' (sector-staged stores).");
    e.lines(kNamedBarrier);
  }
  if (w.pingpong) {
    e.comment(
        "Ping-pong order (ids 3 + consumer): one consumer warpgroup arrives, the other waits.");
    if (!w.tma_store) e.lines(kNamedBarrier);
    e.lines(R"(__device__ __forceinline__ void named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
})");
  }
  if (w.cluster_size() > 1) emit_wgmma_cluster_helpers(e, p.schedule.batch > 0);
  if (p.split_k > 1) emit_wgmma_split_k_helpers(e, p);
  e.line();
  emit_instruction(e, w);
}

namespace {

// conv.im2col == 4's second tap of a k-tile (h_tap + 1), or past the last
// tap the last (its filters' columns lie past K: zeros, whatever A holds).
std::string halo_second_tap() {
  return "h_off2 = conv.tap[h_tap + 1 < conv.taps ? h_tap + 1 : h_tap].offset;";
}

// One stage of an operand as its boxes lie: "(BM, BK)" or "P panels of (BK, P)".
std::string stage_text(const compiler::WgmmaOperand& o) {
  return o.mn_major || o.panels() > 1
             ? format("%d panels of (%d, %d)", o.panels(), o.box_rows(), o.box_cols())
             : format("(%d, %d)", o.box_rows(), o.box_cols());
}

}  // namespace

void emit_wgmma_barriers(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.line("extern __shared__ __align__(1024) unsigned char smem[];");
  if (p.schedule.halo_only)
    e.line(
        format("const unsigned sA_u32 = smem_u32(smem);  // A: %d bytes, the phase images "
               "(halo only)",
               w.b.offset_bytes));
  else
    e.line(format("const unsigned sA_u32 = smem_u32(smem);  // [%d stages] %s A%s", w.stages,
                  stage_text(w.a).c_str(), w.a.mn_major ? ", m-major" : ", k-major"));
  e.line(format("const unsigned sB_u32 = sA_u32 + %du;  // [%d stages] %s B%s", w.b.offset_bytes,
                w.stages, stage_text(w.b).c_str(), w.b.mn_major ? "" : ", k-major"));
  e.line(format("const unsigned full_bar = sA_u32 + %du, empty_bar = full_bar + %du;",
                w.barrier_offset_bytes, 8 * w.stages));
  if (p.split_k > 1) emit_wgmma_split_k_smem(e, p);
  if (p.k_sliced())
    e.line(format("const int num_k_tiles = k_last - k_first;  // this %s's, from k-tile k_first",
                  p.stream_k_tail ? "slice" : "CTA"));
  else
    e.line("const int num_k_tiles = (K + BK - 1) / BK;");
  // stream_k: the main entry computes the tiles before sk_whole_tiles (the
  // launch's split), the tail the others.
  std::string tiles = p.stream_k ? "sk_whole_tiles" : "tiles_m * tiles_n";
  if (walks_batch(p)) tiles = "(" + tiles + ") * batch_count";  // every GEMM's, in one walk
  if (w.cluster_size() > 1 && w.persistent) {  // (paired: crank in emit_wgmma_split_k_slice)
    emit_wgmma_cluster_walk(e, p);
    e.line("const int iters = my_tiles * num_k_tiles;  // pipeline iterations, tile after tile");
  } else if (w.persistent) {
    e.comment(
        format("persistent %s: this block computes tiles blockIdx.x, blockIdx.x + gridDim.x, ...",
               origin_note(p.schedule, p.schedule.persistent_at).c_str()));
    e.line("const int my_tiles = (" + tiles +
           " - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x;");
    e.line("const int iters = my_tiles * num_k_tiles;  // pipeline iterations, tile after tile");
  } else {
    e.line("const int iters = num_k_tiles;  // pipeline iterations: one tile");
  }
  e.open_scope("if (threadIdx.x == 0)");
  emit_wgmma_prefetch_maps(e, p);
  e.comment("the 128-byte swizzle is computed from shared addresses: stages must be 1024-aligned");
  e.line("if (sA_u32 % 1024 != 0) __trap();");
  e.line("#pragma unroll");
  e.open_scope(format("for (int s = 0; s < %d; ++s)", w.stages));
  if (w.conv && p.schedule.halo)
    e.line(format(
        "mbar_init(full_bar + 8 * s, %s ? 1 : %d);  // the filters' expect_tx and "
        "the bytes (with the halo thread 0 alone loops), else also the producer's 128 threads",
        halo_taken(p).c_str(), w.full_arrivals()));
  else if (w.conv)
    e.line(
        format("mbar_init(full_bar + 8 * s, %d);  // the filters' expect_tx, the bytes, and the "
               "producer's 128 threads (once A's copies landed%s)",
               w.full_arrivals(), w.conv->nchw32 ? "" : ", or at once when TMA loads A"));
  else
    e.line("mbar_init(full_bar + 8 * s, 1);  // the producer's expect_tx, then the bytes");
  e.line(format("mbar_init(empty_bar + 8 * s, %d);  // one arrival per consumer warp",
                w.empty_arrivals()));
  e.close_scope();
  if (p.split_k > 1) emit_wgmma_split_k_barrier_init(e, p);
  e.line("mbar_init_fence();");
  e.close_scope();
  if (w.cluster_size() > 1)
    e.line(
        "cluster_sync();  // both CTAs' barriers are ready before any multicast or remote arrive");
  else
    e.line("__syncthreads();  // the barriers are ready for everyone");
  if (p.split_k > 1) emit_wgmma_split_k_start(e, p);
  emit_wgmma_dependent_launch(e, p);
}

void emit_wgmma_prefetch_maps(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  e.comment(
      "the tensor maps (kernel parameters, no grid writes them) fetched while the barriers are "
      "set up");
  if (!w.conv)
    e.line("prefetch_tensormap(tma_a);");
  else if (!w.conv->nchw32)
    e.line("if (conv.im2col) prefetch_tensormap(tma_a);  // else A comes by cp.async");
  e.line("prefetch_tensormap(tma_b);");
}

void emit_wgmma_dependent_launch(Emitter& e, const KernelPlan& p) {
  // The stream_k tail waits at its end instead (emit_stream_k_tail_end).
  if (p.stream_k_tail) return;
  e.comment(
      "Programmatic dependent launch (sm_90; docs/runtime.md): the launch may start this grid "
      "before the");
  e.comment(
      "one ahead of it in the stream has finished; everything above touched only shared "
      "memory and");
  e.comment("parameters. Wait for that grid's writes.");
  e.line("asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");");
  if (p.stream_k) emit_stream_k_launch_tail(e, p);
}

void emit_wgmma_launch_dependents(Emitter& e, const KernelPlan& p) {
  // stream_k lets its tail start right after the wait; a persistent grid
  // fills the device and lets the next grid start as its blocks exit.
  if (p.stream_k || p.stream_k_tail || p.wgmma->persistent) return;
  e.comment(
      "Every copy of this block issued: the next grid may launch once every block got here "
      "(a hint;");
  e.comment(
      "its blocks then wait for this grid's end in free slots). Only where this grid leaves "
      "the SMs");
  e.comment(
      "room, at most one block an SM (%nsmid: the SM ids' bound): next to a fuller grid the "
      "waiting");
  e.comment("blocks cost it more than the early start saves (docs/runtime.md).");
  e.open_scope("if (threadIdx.x == 0)");
  e.line("unsigned sms;");
  e.line("asm(\"mov.u32 %0, %%nsmid;\" : \"=r\"(sms));");
  e.line(
      "if (gridDim.x * gridDim.y * gridDim.z <= sms) asm volatile(\"griddepcontrol.launch_"
      "dependents;\");");
  e.close_scope();
}

void emit_wgmma_walk_tile(Emitter& e, const KernelPlan& p, const std::string& step) {
  if (p.wgmma->cluster_size() > 1) return emit_wgmma_cluster_tile(e, p, step);
  if (!walks_batch(p)) {
    e.line("const int tile = blockIdx.x + " + step + " * gridDim.x;");
    emit_tile_origin(e, p, "tile");
    return;
  }
  // A batch in one walk: GEMM after GEMM, each GEMM's tiles in raster order.
  const std::string per_gemm = p.stream_k ? "sk_whole_tiles" : "(tiles_m * tiles_n)";
  e.line("const int walked = blockIdx.x + " + step + " * gridDim.x;");
  e.line("const int gemm = walked / " + per_gemm + ", tile = walked % " + per_gemm + ";");
  e.line(std::string(c_element_type(p)) +
         "* const C = C_batch + (long long)gemm * batch_stride_c;  // this tile's GEMM's");
  emit_tile_origin(e, p, "tile");
}

namespace {

// The copy of pipeline iteration `it` (an expression) into stage `stage`: its
// tile (persistent: the block's (it / num_k_tiles)-th) and k-tile.
void emit_copy(Emitter& e, const KernelPlan& p, const std::string& stage, const std::string& it) {
  const WgmmaPlan& w = *p.wgmma;
  std::string k_tile = p.k_sliced() ? "(k_first + " + it + ")" : "(" + it + ")";
  if (w.persistent) {
    emit_wgmma_walk_tile(e, p, "(" + it + ") / num_k_tiles");
    k_tile = "(" + it + ") % num_k_tiles";
  }
  e.line(
      format("tma_copy_tile(tma_a, tma_b, sA_u32 + %s * %du, sB_u32 + %s * %du, full_bar + 8 * "
             "%s, %s * BK, tile_m0, tile_n0%s);",
             stage.c_str(), w.a.stage_bytes, stage.c_str(), w.b.stage_bytes, stage.c_str(),
             k_tile.c_str(), (wgmma_cluster_copy_args(p) + tma_gemm_arg(p)).c_str()));
}

// Without warp_specialize: once iteration `x`'s stage is free, thread 0 loads
// iteration x + S into it (`cond`: whether an iteration was freed at all).
void emit_refill(Emitter& e, const KernelPlan& p, const std::string& cond, const std::string& x) {
  const int S = p.wgmma->stages;
  e.open_scope(format("if (%sthreadIdx.x == 0 && %s + %d < iters)", cond.c_str(), x.c_str(), S));
  e.line(format("const int ps = %s %% %d;", x.c_str(), S));
  e.line(format("mbar_wait(empty_bar + 8 * ps, (%s / %d) & 1);  // every consumer warp freed it",
                x.c_str(), S));
  emit_copy(e, p, "ps", format("%s + %d", x.c_str(), S));
  e.close_scope();
}

// One k-tile's wgmma with both operands by descriptor, one group; the
// previous k-tile's group done, its stage is freed.
//
// A convolution's descriptors are its k-tile's first ones plus each step's
// offset in 16-byte units (a descriptor's address field is the shared
// address >> 4 in 14 bits, and shared addresses stay below 2^18, so the sum
// never carries out of it): a conv kernel runs a few microseconds with one
// consumer warp a scheduler, where each step's own wgmma_desc is latency
// before its wgmma (H100, the halo candidate at res5 3x3 batch 8: 5.00-5.02
// -> 4.93 us, bench/NOTES.md session 45). GEMM kernels build each one.
void emit_descriptor_k_steps(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const bool bases = w.conv.has_value();
  const bool halo_a = p.schedule.halo && !a_in_panels(w);
  e.line("wgmma_fence();");
  if (bases) {
    e.line(format("const unsigned long long db0 = wgmma_desc(sb, %du, %du);  // the k-tile's first",
                  w.b.lbo_bytes, w.b.sbo_bytes));
    if (halo_a)
      e.line(format(
          "const unsigned long long da0 = wgmma_desc(sa, %du, %du);  // and a_pstep / 16 apart",
          w.a.lbo_bytes, w.a.sbo_bytes));
  }
  e.line("#pragma unroll");
  e.open_scope(format("for (int kk = 0; kk < %d; ++kk)", w.k_steps));
  e.line("#pragma unroll");
  e.open_scope(format("for (int i = 0; i < %d; ++i)", w.m_insts));
  if (halo_64b(p))  // the k-tile's halves from a_desc and a_desc_k2 (the consumer's k loop)
    e.line(
        "const unsigned long long da = (kk / 2 ? a_desc_k2 : a_desc) + i * a_step_i + (kk % 2) * "
        "2u;");
  else if (a_in_panels(w))  // from the stage's first k-step's descriptor (a_desc, in the consumer)
    e.line(
        "const unsigned long long da = a_desc + i * a_step_i + (kk / 2) * a_step_k2 + (kk % 2) "
        "* 2u;");
  else if (halo_a)  // a k-tile's panels: a_pstep apart (the consumer's k loop)
    e.line(format(
        "const unsigned long long da = da0 + (i * %du + (kk %% %d) * %du) / 16u + (kk / %d) * "
        "(a_pstep >> 4);",
        w.a.mn_bytes(w.inst_m), w.a.panel_cols / w.inst_k, w.a.k_bytes(w.inst_k),
        w.a.panel_cols / w.inst_k));
  else
    e.line(format("const unsigned long long da = wgmma_desc(sa + i * %du + %s, %du, %du);",
                  w.a.mn_bytes(w.inst_m), wgmma_k_step_bytes(w.a, w.inst_k, "kk").c_str(),
                  w.a.lbo_bytes, w.a.sbo_bytes));
  e.line("#pragma unroll");
  e.open_scope(format("for (int j = 0; j < %d; ++j)", w.n_insts));
  if (bases)
    e.line(format("const unsigned long long db = db0 + (j * %du + %s) / 16u;",
                  w.b.mn_bytes(w.inst_n), wgmma_k_step_bytes(w.b, w.inst_k, "kk").c_str()));
  else
    e.line(format("const unsigned long long db = wgmma_desc(sb + j * %du + %s, %du, %du);",
                  w.b.mn_bytes(w.inst_n), wgmma_k_step_bytes(w.b, w.inst_k, "kk").c_str(),
                  w.b.lbo_bytes, w.b.sbo_bytes));
  e.line(wgmma_inst_name(w) + "(acc[i][j], da, db, k_tile > 0 || kk > 0);");
  e.close_scope();
  e.close_scope();
  e.close_scope("kk");
  e.line("wgmma_commit();");
  e.comment("the previous iteration's group has finished reading its stage: free it");
  e.line("wgmma_wait<1>();");
  emit_wgmma_release(e, p, "k_tile > 0 && ", "(it - 1)");
}

}  // namespace

// Frees iteration `x`'s stage: one arrival per consumer warp (after its
// warpgroup's wgmma that read it have completed); with a cluster, in each
// CTA of it (paired: only where iteration x + S refills it, so the other
// CTA is still there, waiting for that refill).
void emit_wgmma_release(Emitter& e, const KernelPlan& p, const std::string& cond,
                        const std::string& x) {
  const int S = p.wgmma->stages;
  if (p.wgmma->paired())  // lane r frees it in the tile r of the pair, where it will be refilled
    e.line(format(
        "if (%s%s + %d < iters && threadIdx.x %% 32 < 2) mbar_arrive_cluster(empty_bar + 8 * (%s "
        "%% %d), split_rank + (threadIdx.x %% 32) * split_slices);",
        cond.c_str(), x.c_str(), S, x.c_str(), S));
  else if (p.wgmma->cluster_size() > 1)  // lane r frees the stage in CTA r
    e.line(
        format("if (%sthreadIdx.x %% 32 < 2) mbar_arrive_cluster(empty_bar + 8 * (%s %% %d), "
               "threadIdx.x %% 32);",
               cond.c_str(), x.c_str(), p.wgmma->stages));
  else
    e.line(format("if (%sthreadIdx.x %% 32 == 0) mbar_arrive(empty_bar + 8 * (%s %% %d));",
                  cond.c_str(), x.c_str(), p.wgmma->stages));
  if (!p.wgmma->warp_specialize) emit_refill(e, p, cond, x);
  // wgmma's .sync.aligned instructions need the whole warp converged again
  // after the one-lane branches (seen: an illegal instruction without it).
  e.line("__syncwarp();");
}

void emit_wgmma_producer(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int S = w.stages;
  if (!w.warp_specialize) {
    e.comment(format(
        "prologue: thread 0 puts iterations 0..%d in flight, stage s holds iteration s", S - 1));
    e.open_scope("if (threadIdx.x == 0)");
    e.open_scope(format("for (int s = 0; s < %d && s < iters; ++s)", S));
    emit_copy(e, p, "s", "s");
    e.close_scope();
    e.close_scope();
    return;
  }
  if (w.conv) return emit_wgmma_conv_producer(e, p);
  e.comment(format("producer %s: one thread copies every iteration into its stage (it %% %d)",
                   origin_note(p.schedule, p.schedule.warp_specialize_at).c_str(), S));
  e.comment("once the consumers have freed it");
  e.line(w.setmaxnreg_line(w.producer_regs));
  e.open_scope("if (threadIdx.x == 0)");
  e.open_scope("for (int it = 0; it < iters; ++it)");
  e.line(format("const int stage = it %% %d;", S));
  e.comment(format("the stage's previous iteration (it - %d) freed: phase it / %d - 1", S, S));
  e.line(format("if (it >= %d) mbar_wait(empty_bar + 8 * stage, ((it / %d) + 1) & 1);", S, S));
  emit_copy(e, p, "stage", "it");
  e.close_scope("it");
  e.close_scope();
}

void emit_wgmma_consumer(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int S = w.stages, R = w.inst_n / 2;
  if (w.pingpong)
    e.line(
        format("const int consumer = threadIdx.x / 128 - %d;  // takes the block's tiles "
               "consumer, consumer + 2, ...",
               w.producers()));
  else
    e.line(format("const int consumer = threadIdx.x / 128 - %d;  // this warpgroup's C tile",
                  w.producers()));
  if (w.tma_store) {
    e.comment(format(
        "tma_store: C leaves shared memory by TMA when TMA can write it (16-byte "
        "aligned rows; the runtime encodes tma_c under the same condition), else by the warps"));
    e.comment("(N too: a TMA store writes a row's last 16-byte chunk whole, seen on an H100)");
    e.line(format(
        "const bool c_tma = ldc %% %d == 0 && %s %% %d == 0 && reinterpret_cast<unsigned "
        "long long>(C) %% 16 == 0%s;",
        16 / w.c_elem_bytes, w.c_col ? "M" : "N", 16 / w.c_elem_bytes,
        p.schedule.batch > 0 ? format(" && batch_stride_c %% %d == 0", 16 / w.c_elem_bytes).c_str()
                             : ""));
  }
  if (w.pingpong) {
    if (a_in_panels(w))
      e.line("const bool a_panels = conv.im2col == 2;  // A's stage in two 64-byte-row panels");
    e.line(
        "const unsigned a_base = sA_u32, b_base = sB_u32;  // whole stages: the tile is its own");
  } else {
    if (a_in_panels(w)) {
      e.comment(halo_64b(p) ? "conv.im2col == 2: A's stage is two panels of 64-byte rows, 4: a "
                              "halo of 64-byte rows (64-byte swizzle)"
                            : "conv.im2col == 2: A's stage is two panels of 64-byte rows (64-byte "
                              "swizzle)");
      e.line(halo_64b(p) ? "const bool a_panels = conv.im2col == 2 || conv.im2col == 4;"
                         : "const bool a_panels = conv.im2col == 2;");
      e.line(
          format("const unsigned a_base = sA_u32 + (consumer / %d) * (a_panels ? %du : %du);  "
                 "// its rows of A, stage 0",
                 w.consumers_n, w.a.mn_bytes(w.wg_m) / 2, w.a.mn_bytes(w.wg_m)));
    } else {
      e.line(
          format("const unsigned a_base = sA_u32 + (consumer / %d) * %du;  // its %s of A, stage 0",
                 w.consumers_n, w.a.mn_bytes(w.wg_m), w.a.mn_major ? "panels" : "rows"));
    }
    e.line(format("const unsigned b_base = sB_u32 + (consumer %% %d) * %du;  // its %s of B",
                  w.consumers_n, w.b.mn_bytes(w.wg_n), w.b.mn_major ? "panels" : "rows"));
  }
  if (a_in_panels(w)) {
    SCHEDC_INTERNAL_ASSERT(w.k_steps == 4 && w.a.k_bytes(w.inst_k) == 32 && !w.a.mn_major,
                           "a convolution's k-tile rows are 4 k-steps of 32 bytes, k-major");
    e.comment("A's descriptors, built once (a select per k-step would cost a small tile's issue");
    e.comment("slots): stage 0's first k-step, and in 16-byte units the step to the next");
    e.comment("instruction's rows and to k-step kk + 2 (the next panel, or 64 bytes on)");
    e.line(
        format("const unsigned long long a_desc0 = a_panels ? wgmma_desc_64b(a_base) : "
               "wgmma_desc(a_base, %du, %du);",
               w.a.lbo_bytes, w.a.sbo_bytes));
    e.line(
        format("const unsigned a_step_i = a_panels ? %du : %du, a_step_k2 = a_panels ? %du : %du;",
               w.a.mn_bytes(w.inst_m) / 2 / 16, w.a.mn_bytes(w.inst_m) / 16,
               w.a.stage_bytes / 2 / 16, 2 * w.a.k_bytes(w.inst_k) / 16));
  }
  e.line(format("%s acc[%d][%d][%d];  // %dx%d instructions of m64n%d, %s D fragments",
                accumulator_type(p.dtype), w.m_insts, w.n_insts, R, w.m_insts, w.n_insts, w.inst_n,
                w.d_type()));
  e.comment("(not zeroed: a tile's first k-step writes them whole, scale_d 0; ptxas serialized");
  e.comment("the wgmma of a non-persistent kernel that zeroed them, its warning C7515)");
  if (w.registers()) emit_wgmma_tf32_fragments(e, p);
  if (w.pingpong) {
    e.comment(format("warp_specialize pingpong %s: tiles alternate between the two consumers",
                     origin_note(p.schedule, p.schedule.warp_specialize_at).c_str()));
    e.open_scope("for (int t = consumer; t < my_tiles; t += 2)");
    e.line("int it = t * num_k_tiles;  // the producer's iteration of this tile's first k-tile");
  } else if (w.persistent) {
    e.line("int it = 0;  // pipeline iteration: stage it % S, phase it / S");
    e.open_scope("for (int t = 0; t < my_tiles; ++t)");
    emit_wgmma_walk_tile(e, p, "t");
  } else {
    e.line("int it = 0;  // pipeline iteration: stage it % S, phase it / S");
    e.open_scope("");
  }
  if (w.pingpong) {
    emit_wgmma_walk_tile(e, p, "t");
  }
  if (w.pingpong) {
    e.comment("wait for the turn: the other consumer has issued its tile t - 1 (its waits saw");
    e.comment("every earlier iteration land, so this tile's barrier phases are the current ones)");
    e.line("if (t > 0) named_barrier(3 + consumer, 256);");
  }
  const bool halo = p.schedule.halo;
  if (halo) {
    SCHEDC_INTERNAL_ASSERT(
        w.conv && !w.a.mn_major && !w.registers() && !w.persistent && !w.pingpong,
        "halo: one tile a block, A k-major by descriptor");
    e.comment(
        "halo (conv.im2col == 3): A of a k-tile is its tap's window (conv.tap[h_tap].offset)");
    e.comment("in its channel block's panel of the tile's phase images");
    emit_halo_k_order(e, p.k_sliced() ? "k_first" : "0", halo_64b(p));
    emit_halo_rows(e, p);
    e.comment("the k-tile's window, loaded a k-tile ahead (an indexed load of the tap table,");
    e.comment("before the wait instead of between it and the k-tile's wgmma)");
    e.line("int h_off = conv.tap[h_tap].offset;");
    if (halo_64b(p)) {
      e.comment("conv.im2col == 4: the k-tile's second tap's window (past the last tap, the");
      e.comment("last's: its filters' columns are past K, zeros)");
      e.line("int " + halo_second_tap());
    }
  }
  e.open_scope("for (int k_tile = 0; k_tile < num_k_tiles; ++k_tile, ++it)");
  e.line(format("const int stage = it %% %d;", S));
  e.line(format("mbar_wait(full_bar + 8 * stage, (it / %d) & 1);  // its bytes have landed", S));
  if (a_in_panels(w) && halo) {
    e.line(format(
        "const unsigned long long a_desc = conv.im2col == 3 ? wgmma_desc(a_base + (h_block - "
        "h_first) * conv.halo_region_bytes + h_off, %du, %du) : conv.im2col == 4 ? "
        "wgmma_desc_64b(a_base + h_off) : a_desc0 + stage * %du;",
        w.a.lbo_bytes, w.a.sbo_bytes, w.a.stage_bytes / 16));
    e.comment("k-steps 2 and 3: the k-tile's second 64 bytes (conv.im2col == 4: the next tap's");
    e.comment("window; else 64 bytes on, or the stage's second panel)");
    e.line(
        "const unsigned long long a_desc_k2 = conv.im2col == 4 ? wgmma_desc_64b(a_base + h_off2) "
        ": a_desc + a_step_k2;");
    e.line(format("const unsigned sb = b_base + stage * %du;", w.b.stage_bytes));
  } else if (halo) {
    e.comment(format("halo: the k-tile's %d panels are its block's, a panel's phase images apart",
                     w.a.panels()));
    e.line(
        format("const unsigned sa = conv.im2col == 3 ? a_base + (h_block - h_first) * %du * "
               "conv.halo_region_bytes + h_off : a_base + stage * %du, sb = b_base + "
               "stage * %du;",
               w.a.panels(), w.a.stage_bytes, w.b.stage_bytes));
    e.line(format(
        "const unsigned a_pstep = conv.im2col == 3 ? (unsigned)conv.halo_region_bytes : %du;",
        w.a.panel_bytes()));
  } else if (a_in_panels(w)) {
    e.line(format("const unsigned long long a_desc = a_desc0 + stage * %du;  // its first k-step",
                  w.a.stage_bytes / 16));
    e.line(format("const unsigned sb = b_base + stage * %du;", w.b.stage_bytes));
  } else {
    e.line(format("const unsigned sa = a_base + stage * %du, sb = b_base + stage * %du;",
                  w.a.stage_bytes, w.b.stage_bytes));
  }
  if (w.registers())
    emit_wgmma_tf32_k_steps(e, p);
  else
    emit_descriptor_k_steps(e, p);
  if (halo) {
    emit_halo_k_next(e, halo_64b(p));
    e.line("h_off = conv.tap[h_tap].offset;  // the next k-tile's");
    if (halo_64b(p)) e.line(halo_second_tap() + "  // and its second tap's");
  }
  e.close_scope("k_tile");
  if (w.pingpong) {
    e.comment("every wgmma of this tile issued: the other consumer's turn (tile t + 1)");
    e.line("if (t + 1 < my_tiles) named_barrier_arrive(3 + (consumer ^ 1), 256);");
  }
  e.line("wgmma_wait<0>();");
  e.comment("the tile's last stage");
  emit_wgmma_release(e, p, "", "(it - 1)");
}

}  // namespace schedc::codegen
