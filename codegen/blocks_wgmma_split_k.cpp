// `split_k N` on the Hopper kernel (codegen/blocks_wgmma.h; compiler/
// kernel_plan.h, split_k): the launch's thread-block cluster of S <= N CTAs
// computes one C tile, each CTA an even share of its k-tiles through the
// usual pipeline; the partial sums are added in rank order and the epilogue
// runs once. One kernel, no workspace in global memory, no second launch:
// what a stream_k tail does through L2, inside the cluster.
// The sums travel one of two ways (WgmmaPlan::split_push):
// - pushed, where the receive area fits (compiler/wgmma_plan.h,
//   wgmma_split_recv_bytes): the tile's parts (a consumer warp's
//   accumulators each, or a warpgroup's where the warpgroup stores C
//   together: wgmma_split_part_threads) are summed by the CTAs in turn, part
//   g by CTA g % S. Each other CTA's warp (warpgroup) stores its sums of the
//   part straight into the owner's receive area with st.async, whose bytes
//   complete a transaction on the owner's mbarrier of that part (no fence,
//   no reply awaited); the owner's warp (warpgroup) expects those bytes on
//   that barrier, waits there alone, adds from its own shared memory and
//   stores the part. A relaxed cluster arrive at the start, waited on before
//   the first remote store, orders the barriers' initialization before
//   them. Nothing else waits: a sender has nothing another CTA reads and
//   leaves once its stores are issued, and an owner leaves only after every
//   byte sent to it has landed.
// - pulled, else: the others leave their sums in their own stages (read by
//   then), a cluster barrier (1) makes them visible, CTA 0 reads them through
//   distributed shared memory and stores the whole tile, and barrier (2)
//   keeps the others' shared memory alive until it has.
// Pushed against pulled on an H200 (bench/NOTES.md, session 34): res4 3x3
// at batch 1 with 64x32 split_k 3, 1.92x -> 1.95-1.98x of im2col + cuBLAS in
// a graph. The pushed sum's first form (sessions 34-35) stored with
// st.shared::cluster, had every sending thread arrive on the owner's barrier
// releasing at cluster scope, and held every CTA at a closing cluster
// barrier: ~1 us from the last k loop's end to the owners' sums (a
// per-block timeline of 64x32 split_k 6 at res5, batch 1); st.async took
// that file from 1.61x to 1.76x there and from 1.95x to 2.16x at res4
// (session 36).
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_wgmma.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

namespace {

// Remote 16-byte loads a thread of CTA 0 keeps in flight while it adds up:
// its vectors of every other CTA at once (one round trip for them all, not
// one per CTA) where that is at most this many, else rounds of a chunk of
// each (registers).
constexpr int kSumLoads = 32;

// split_rank_of_cta() and split_slices_of_cluster() from special registers
// `rank` and `size`: %cluster_ctarank and %cluster_nctarank where the
// cluster is split_k's alone (ranks 0 .. S - 1), %cluster_ctaid.x and
// %cluster_nctaid.x where it is S x 2 (paired: slice s of this CTA's tile
// is cluster rank s + S * pair rank).
std::string split_ranks_text(const char* rank, const char* size) {
  return format(R"(__device__ __forceinline__ int split_rank_of_cta() {
  unsigned r;
  asm volatile("mov.u32 %%0, %%%%%s;\n" : "=r"(r));
  return int(r);
}
__device__ __forceinline__ int split_slices_of_cluster() {
  unsigned r;
  asm volatile("mov.u32 %%0, %%%%%s;\n" : "=r"(r));
  return int(r);
})",
                rank, size);
}

constexpr const char* kPairRank = R"(__device__ __forceinline__ unsigned pair_rank_of_cta() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctaid.y;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ int split_cta(int slice) {
  return slice + int(pair_rank_of_cta()) * split_slices_of_cluster();
})";

}  // namespace

void emit_wgmma_split_k_helpers(Emitter& e, const KernelPlan& p) {
  const bool paired = p.wgmma->paired();
  if (paired) {
    e.lines(
        "// split_k with cluster 2x1: the cluster is S slices (x) of two tiles along M (y); this\n"
        "// CTA's slice and S, its tile's place in the pair, and the cluster rank of slice s of "
        "its tile.");
    e.lines(split_ranks_text("cluster_ctaid.x", "cluster_nctaid.x"));
    e.lines(kPairRank);
  } else {
    e.lines(
        "// split_k: this CTA's rank in its cluster (the tile's slices), and the cluster's size.");
    e.lines(split_ranks_text("cluster_ctarank", "cluster_nctarank"));
  }
  // A remote access's CTA: the slice's cluster rank in this CTA's tile.
  const std::string to_rank = paired ? "\n  cta = split_cta(cta);" : "";
  e.lines(R"(// The cluster barrier in halves: every thread of every CTA arrives (its shared
// memory writes released), then waits for all of them (acquiring theirs).
__device__ __forceinline__ void split_arrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}
__device__ __forceinline__ void split_wait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}
// Four 32-bit words at shared offset `addr` of CTA `cta` of the cluster.
__device__ __forceinline__ int4 split_load_v4(unsigned addr, int cta) {)" +
          to_rank + R"(
  int4 v;
  asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %4, %5;\n"
               "ld.shared::cluster.v4.s32 {%0, %1, %2, %3}, [remote];\n}\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr), "r"(cta) : "memory");
  return v;
})");
  if (!p.wgmma->split_push()) return;
  e.lines(
      R"(// Four 32-bit words to shared offset `addr` of CTA `cta` of the cluster (st.async:
// no fence, no reply awaited), their 16 bytes completing as many of a transaction on
// the mbarrier at shared offset `bar` of that CTA.
__device__ __forceinline__ void split_store_async_v4(unsigned addr, unsigned bar, int cta, int4 v) {)" +
      to_rank + R"(
  asm volatile("{\n.reg .b32 remote, remote_bar;\nmapa.shared::cluster.u32 remote, %0, %2;\n"
               "mapa.shared::cluster.u32 remote_bar, %1, %2;\n"
               "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [remote], "
               "{%3, %4, %5, %6}, [remote_bar];\n}\n"
               :: "r"(addr), "r"(bar), "r"(cta), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
// mbar_wait acquiring at cluster scope: the bytes the other CTAs stored.
__device__ __forceinline__ void split_wait_cluster(unsigned bar, unsigned parity) {
  asm volatile("{\n.reg .pred done;\nWAIT_%=:\n"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra WAIT_%=;\n}\n" ::"r"(bar), "r"(parity) : "memory");
})");
}

void emit_wgmma_split_k_smem(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  if (!w.split_push()) return;
  const int owned = compiler::wgmma_split_parts_owned(p.schedule);
  const int part = p.block_m * p.block_n * 4 / compiler::wgmma_split_parts(p.schedule);
  e.line(format(
      "const unsigned split_recv = sA_u32 + %du, split_bar = split_recv + %du;  // split_k: "
      "%d other CTAs' sums of %d bytes for each of (at most) %d part(s) this CTA owns",
      w.split_recv_offset_bytes, owned * (p.split_k - 1) * part, p.split_k - 1, part, owned));
}

void emit_wgmma_split_k_barrier_init(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  if (!w.split_push()) return;
  const int owned = compiler::wgmma_split_parts_owned(p.schedule);
  const auto init = [&](const char* bar) {
    return format(
        "mbar_init(%s, 1);  // the owner's arrival with the bytes it expects from the others", bar);
  };
  if (owned == 1)
    e.line(init("split_bar"));
  else
    e.line(format("for (int j = 0; j < %d; ++j) ", owned) + init("split_bar + 8 * j"));
}

void emit_wgmma_split_k_start(Emitter& e, const KernelPlan& p) {
  if (!p.wgmma->split_push()) return;
  e.line(
      "if (split_slices > 1) asm volatile(\"barrier.cluster.arrive.relaxed;\" ::: \"memory\");  "
      "// split_bar's init before any remote store: waited on before the sums");
}

void emit_wgmma_split_k_slice(Emitter& e, const KernelPlan& p) {
  const compiler::Schedule& s = p.schedule;
  e.comment(format("split_k %d %s: the launch's cluster of split_slices CTAs (at most %d; the",
                   p.split_k, origin_note(s, s.split_k_at).c_str(), p.split_k));
  e.comment("k-tiles where there are fewer) computes one C tile, CTA split_rank its k-tiles");
  e.comment("[k_first, k_last): an even share, none empty, CTA 0's first");
  e.line("const int split_rank = split_rank_of_cta(), split_slices = split_slices_of_cluster();");
  if (p.wgmma->paired()) {
    e.comment(
        format("cluster 2x1 %s: this slice's CTAs of two tiles along M (blockIdx.y 2p, 2p + 1)",
               origin_note(s, s.cluster_at).c_str()));
    e.comment("share B, each multicasting half of the stage into both (cluster ranks");
    e.comment("split_rank and split_rank + split_slices)");
    e.line("const unsigned crank = pair_rank_of_cta();  // blockIdx.y % 2");
    e.line(
        "const unsigned short pair_mask = (1u << split_rank) | (1u << (split_rank + "
        "split_slices));");
  }
  e.line("const int split_tile = blockIdx.x / split_slices;  // as blockIdx.x with one CTA a tile");
  e.line("const int k_tiles_all = (K + BK - 1) / BK;");
  e.line("const int k_first = (split_rank * k_tiles_all + split_slices - 1) / split_slices;");
  e.line("const int k_last = ((split_rank + 1) * k_tiles_all + split_slices - 1) / split_slices;");
}

void emit_wgmma_split_k_producer_end(Emitter& e, const KernelPlan& p) {
  if (p.wgmma->split_push()) {
    e.line("if (split_slices > 1) split_wait();  // split_k: the start's cluster barrier");
    return;
  }
  e.comment("split_k: every thread of every CTA takes part in the sum's two cluster barriers");
  e.open_scope("if (split_slices > 1)");
  e.line("split_arrive();");
  e.line("split_wait();");
  e.line("split_arrive();");
  e.line("split_wait();");
  e.close_scope();
}

namespace {

// `SPLIT_ACC(4 * (v) + c) += y.c` for the four words of int4 y (floats by
// their bits), `v` the vector's number.
std::string split_adds(bool integer, const std::string& v) {
  const char* add = integer ? "SPLIT_ACC(4 * (%s) + %d) += y.%c;"
                            : "SPLIT_ACC(4 * (%s) + %d) += __int_as_float(y.%c);";
  std::string adds;
  for (int c = 0; c < 4; ++c) adds += (c ? " " : "") + format(add, v.c_str(), c, "xyzw"[c]);
  return adds;
}

// Both sums' start: SPLIT_ACC and the scope of a split launch.
void open_split_k_sum(Emitter& e, const WgmmaPlan& w) {
  e.line(wgmma_acc_macro(w, "SPLIT_ACC"));
  e.open_scope("if (split_slices > 1)");
}

void emit_split_k_sum_pushed(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const compiler::Schedule& s = p.schedule;
  const int T = compiler::wgmma_split_part_threads(s), parts = compiler::wgmma_split_parts(s);
  const int vecs = w.accumulators / 4, part = vecs * T * 16, others = p.split_k - 1;
  SCHEDC_INTERNAL_ASSERT(int64_t(part) * parts == int64_t(p.block_m) * p.block_n * 4,
                         "a split_k receive slot holds one part's sums");
  const char* word =
      w.integer() ? "SPLIT_ACC(4 * v + %d)" : "__float_as_int(SPLIT_ACC(4 * v + %d))";
  std::string words;
  for (int c = 0; c < 4; ++c) words += (c ? ", " : "") + format(word, c);
  // The part's place among those its owner sums (split_part / split_slices), in slots and
  // barriers: always the first where a CTA owns at most one part.
  const bool one_owned = compiler::wgmma_split_parts_owned(s) == 1;
  const std::string slots =
      one_owned ? "split_recv"
                : format("split_recv + (split_part / split_slices) * %du", others * part);
  const std::string bar = one_owned ? "split_bar" : "split_bar + 8 * (split_part / split_slices)";
  const char* holder = T == 128 ? "consumer warpgroup" : "consumer warp";
  if (parts == 1) {
    e.comment("split_k: CTAs 1.. store their sums into CTA 0's receive area (slot rank - 1), the");
    e.comment("bytes landing on its split_bar; CTA 0 waits there and adds them to its own in rank");
    e.comment("order");
  } else {
    e.comment(format("split_k: the tile's %d parts (a %s's accumulators each) are summed where",
                     parts, holder));
    e.comment("they are spread: part split_part by CTA split_owner = split_part % split_slices.");
    e.comment("The others store their sums of it into the owner's receive area (that part's");
    e.comment("slots, a sender each in rank order), the bytes landing on its mbarrier of that");
    e.comment(format("part; the owner's %s waits there and adds them to its own in rank order",
                     T == 128 ? "warpgroup" : "warp"));
  }
  e.comment("(the same sum every launch). A launch of one CTA a tile (the runtime's choice where");
  e.comment("the tiles fill the device) skips it all.");
  if (parts == 1) {
    e.line("const int split_owner = 0;  // the CTA that sums the tile and stores it");
  } else {
    e.line(T == 128 ? "const int split_part = consumer;  // this warpgroup's part of the tile"
                    : "const int split_part = 4 * consumer + threadIdx.x / 32 % 4;  // this "
                      "warp's part of the tile");
    e.line(
        "const int split_owner = split_part % split_slices;  // the CTA that sums it and stores "
        "it");
  }
  open_split_k_sum(e, w);
  e.line(format("const int ptid = threadIdx.x %% %d;  // in its %s", T,
                T == 128 ? "warpgroup" : "warp"));
  e.line("split_wait();  // the start's cluster barrier: the owners' barriers are initialized");
  e.open_scope("if (split_rank != split_owner)");
  e.comment(format("as int4 number v * %d + ptid of the slot, conflict-free", T));
  e.line(format("const unsigned slot = %s + (split_rank - (split_rank > split_owner)) * %du;",
                slots.c_str(), part));
  e.line("#pragma unroll");
  e.line(
      format("for (int v = 0; v < %d; ++v) split_store_async_v4(slot + (v * %d + ptid) * 16u, "
             "%s, split_owner, make_int4(%s));",
             vecs, T, bar.c_str(), words.c_str()));
  e.close_scope();
  e.open_scope("else");
  e.line(format("if (ptid == 0) mbar_expect_tx(%s, (split_slices - 1) * %du);  // the others' sums",
                bar.c_str(), part));
  e.line(format("split_wait_cluster(%s, 0);", bar.c_str()));
  e.line(format(
      "const int4* recv = reinterpret_cast<const int4*>(smem + %d)%s;", w.split_recv_offset_bytes,
      one_owned ? "" : format(" + (split_part / split_slices) * %d", others * vecs * T).c_str()));
  e.line("#pragma unroll");
  e.open_scope(format("for (int q = 0; q < %d; ++q)", others));
  e.line("if (q + 1 >= split_slices) break;");
  e.line("#pragma unroll");
  e.open_scope(format("for (int v = 0; v < %d; ++v)", vecs));
  e.line(format("const int4 y = recv[(q * %d + v) * %d + ptid];", vecs, T));
  e.line(split_adds(w.integer(), "v"));
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.line("#undef SPLIT_ACC");
}

void emit_split_k_sum_pulled(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const int threads = 128 * w.consumers(), vecs = w.accumulators / 4;
  const bool integer = w.integer();
  const std::string V4 = integer ? "int4" : "float4";
  e.comment("split_k: CTAs 1.. leave their accumulators in their own stages (every consumer has");
  e.comment("read its last one: the barrier), the cluster barrier (1) makes them visible, and");
  e.comment("CTA 0 adds them to its own in rank order (the same sum every launch); barrier (2)");
  e.comment("keeps the others' shared memory alive until CTA 0 has read it. A launch of one");
  e.comment("CTA a tile (the runtime's choice where the tiles fill the device) skips it all.");
  e.line("const int split_owner = 0;  // the CTA that sums the tile and stores it");
  open_split_k_sum(e, w);
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
  e.line(split_adds(integer, "v0 + v"));
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.close_scope();
  e.line("split_arrive();  // (2): CTA 0 waits for it after its stores");
  e.line("if (split_rank != 0) split_wait();");
  e.close_scope();
  e.line("#undef SPLIT_ACC");
}

}  // namespace

void emit_wgmma_split_k_sum(Emitter& e, const KernelPlan& p) {
  if (p.wgmma->split_push())
    emit_split_k_sum_pushed(e, p);
  else
    emit_split_k_sum_pulled(e, p);
}

}  // namespace schedc::codegen
