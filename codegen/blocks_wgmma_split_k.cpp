// `split_k N` on the Hopper kernel (codegen/blocks_wgmma.h; compiler/
// kernel_plan.h, split_k): the launch's thread-block cluster of S <= N CTAs
// computes one C tile, each CTA an even share of its k-tiles through the
// usual pipeline; then CTAs 1..S-1 leave their accumulators in their own
// shared memory (the pipeline's stages, read by then), and CTA 0 adds them to
// its own through distributed shared memory, in rank order, and runs the
// epilogue. One kernel, no workspace in global memory, no second launch:
// what a stream_k tail does through L2, inside the cluster.
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_wgmma.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

// Remote 16-byte loads a thread of CTA 0 keeps in flight while it adds up:
// its vectors of every other CTA at once (one round trip for them all, not
// one per CTA) where that is at most this many, else rounds of a chunk of
// each (registers).
constexpr int kSumLoads = 32;

}  // namespace

void emit_wgmma_split_k_helpers(Emitter& e) {
  e.lines(R"(// split_k: this CTA's rank in its cluster (the tile's slices), and the cluster's size.
__device__ __forceinline__ int split_rank_of_cta() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return int(r);
}
__device__ __forceinline__ int split_slices_of_cluster() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return int(r);
}
// The cluster barrier in halves: every thread of every CTA arrives (its shared
// memory writes released), then waits for all of them (acquiring theirs).
__device__ __forceinline__ void split_arrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}
__device__ __forceinline__ void split_wait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}
// Four 32-bit words at shared offset `addr` of CTA `cta` of the cluster.
__device__ __forceinline__ int4 split_load_v4(unsigned addr, int cta) {
  int4 v;
  asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %4, %5;\n"
               "ld.shared::cluster.v4.s32 {%0, %1, %2, %3}, [remote];\n}\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr), "r"(cta) : "memory");
  return v;
})");
}

void emit_wgmma_split_k_slice(Emitter& e, const KernelPlan& p) {
  const compiler::Schedule& s = p.schedule;
  e.comment(format("split_k %d %s: the launch's cluster of split_slices CTAs (at most %d; the",
                   p.split_k, origin_note(s, s.split_k_at).c_str(), p.split_k));
  e.comment("k-tiles where there are fewer) computes one C tile, CTA split_rank its k-tiles");
  e.comment("[k_first, k_last): an even share, none empty, CTA 0's first");
  e.line("const int split_rank = split_rank_of_cta(), split_slices = split_slices_of_cluster();");
  e.line("const int split_tile = blockIdx.x / split_slices;  // as blockIdx.x with one CTA a tile");
  e.line("const int k_tiles_all = (K + BK - 1) / BK;");
  e.line("const int k_first = (split_rank * k_tiles_all + split_slices - 1) / split_slices;");
  e.line("const int k_last = ((split_rank + 1) * k_tiles_all + split_slices - 1) / split_slices;");
}

void emit_wgmma_split_k_producer_end(Emitter& e) {
  e.comment("split_k: every thread of every CTA takes part in the sum's two cluster barriers");
  e.open_scope("if (split_slices > 1)");
  e.line("split_arrive();");
  e.line("split_wait();");
  e.line("split_arrive();");
  e.line("split_wait();");
  e.close_scope();
}

void emit_wgmma_split_k_sum(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int threads = 128 * w.consumers(), vecs = w.accumulators / 4;
  const bool integer = w.integer();
  const std::string V4 = integer ? "int4" : "float4";
  e.comment("split_k: CTAs 1.. leave their accumulators in their own stages (every consumer has");
  e.comment("read its last one: the barrier), the cluster barrier (1) makes them visible, and");
  e.comment("CTA 0 adds them to its own in rank order (the same sum every launch); barrier (2)");
  e.comment("keeps the others' shared memory alive until CTA 0 has read it. A launch of one");
  e.comment("CTA a tile (the runtime's choice where the tiles fill the device) skips it all.");
  e.line(wgmma_acc_macro(w, "SPLIT_ACC"));
  e.open_scope("if (split_slices > 1)");
  e.line(format("const int ctid = threadIdx.x - %d;  // among the %d consumer threads",
                128 * w.producers(), threads));
  e.line(format("asm volatile(\"bar.sync %d, %d;\\n\" ::: \"memory\");", kWgmmaConsumersBarrier,
                threads));
  e.open_scope("if (split_rank != 0)");
  e.comment(format("as %s: number v * %d + ctid, conflict-free", V4.c_str(), threads));
  e.line(V4 + "* mine = reinterpret_cast<" + V4 + "*>(smem);");
  e.line("#pragma unroll");
  e.line(
      format("for (int v = 0; v < %d; ++v) mine[v * %d + ctid] = make_%s(SPLIT_ACC(4 * v), "
             "SPLIT_ACC(4 * v + 1), SPLIT_ACC(4 * v + 2), SPLIT_ACC(4 * v + 3));",
             vecs, threads, V4.c_str()));
  e.close_scope();
  e.line("split_arrive();  // (1)");
  e.line("split_wait();");
  const int others = p.split_k - 1;
  int chunk = 1;  // vectors of each other CTA a round
  while (chunk * 2 <= vecs && chunk * 2 * others <= kSumLoads) chunk *= 2;
  e.open_scope("if (split_rank == 0)");
  e.comment(
      format("a round: %d vector(s) of each other CTA loaded (up to %d loads in flight), then",
             chunk, chunk * others));
  e.comment("added in rank order");
  e.line("#pragma unroll");
  e.open_scope(format("for (int v0 = 0; v0 < %d; v0 += %d)", vecs, chunk));
  e.line(format("int4 x[%d][%d];", others, chunk));
  e.line("#pragma unroll");
  e.open_scope(format("for (int q = 1; q <= %d; ++q)", others));
  e.line("#pragma unroll");
  e.line(
      format("for (int v = 0; v < %d; ++v) if (q < split_slices && v0 + v < %d) x[q - 1][v] = "
             "split_load_v4(sA_u32 + ((v0 + v) * %d + ctid) * 16u, q);",
             chunk, vecs, threads));
  e.close_scope();
  e.line("#pragma unroll");
  e.open_scope(format("for (int q = 1; q <= %d; ++q)", others));
  e.line("#pragma unroll");
  e.open_scope(format("for (int v = 0; v < %d; ++v)", chunk));
  e.line(format("if (q >= split_slices || v0 + v >= %d) continue;", vecs));
  e.line("const int4 y = x[q - 1][v];");
  const char* add = integer ? "SPLIT_ACC(4 * (v0 + v) + %d) += y.%c;"
                            : "SPLIT_ACC(4 * (v0 + v) + %d) += __int_as_float(y.%c);";
  std::string adds;
  for (int c = 0; c < 4; ++c) adds += (c ? " " : "") + format(add, c, "xyzw"[c]);
  e.line(adds);
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.line("split_arrive();  // (2): CTA 0 waits for it after its stores");
  e.line("if (split_rank != 0) split_wait();");
  e.close_scope();
  e.line("#undef SPLIT_ACC");
}

}  // namespace schedc::codegen
