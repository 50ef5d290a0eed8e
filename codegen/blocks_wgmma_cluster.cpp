// The Hopper kernel's cluster blocks (`cluster CMxCN`, codegen/blocks_wgmma.h):
// two CTAs on neighbouring tiles of one super-tile, walking in step; each
// producer multicasts half of the shared operand's stage into both CTAs
// (compiler/wgmma_plan.h, "cluster").
#include <string>

#include "codegen/blocks_common.h"
#include "codegen/blocks_tma.h"
#include "codegen/blocks_wgmma.h"

namespace schedc::codegen {

using compiler::KernelPlan;
using compiler::Schedule;
using compiler::WgmmaPlan;

void emit_wgmma_cluster_helpers(Emitter& e, bool batched) {
  const TmaCoords at = tma_coords(batched, 3, 6);
  e.lines(
      R"(// This CTA's rank in its cluster (0 or 1).
__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of both CTAs arrives, then waits for all of them.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}
// Arrives on the mbarrier at this shared offset in CTA `cta` of the cluster.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta) {
  asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
               ::"r"(bar), "r"(cta) : "memory");
}
// A TMA box written at `dst` in every CTA of `mask`, each signalling its own
// mbarrier at offset `bar`.)" +
      std::string(batched ? "\n// (Of GEMM z: both CTAs of a cluster compute one GEMM.)" : "") +
      R"(
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TmaMap& map, unsigned bar, int col, int row, unsigned short mask)" +
      at.z_param + R"() {
  asm volatile(
      "cp.async.bulk.tensor.)" +
      at.dims +
      R"(.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, )" +
      at.list + R"(], [%2], %5;\n"
      ::"r"(dst), "l"(&map), "r"(bar), "r"(col), "r"(row), "h"(mask))" +
      at.z_operand + R"(
      : "memory");
})");
  e.line();
}

namespace {

// The shared operand's two halves, for the copy's comment.
std::string halves_text(const compiler::WgmmaOperand& o, char op) {
  return o.mn_major ? format("%c's %d panels, this CTA the %d of its rank,", op, o.panels(),
                             o.panels() / 2)
         : o.panels() == 1
             ? format("%c's rows in two (%d, %d) boxes, this CTA the one of its rank,", op,
                      o.box_rows() / 2, o.box_cols())
             : format(
                   "%c's rows in two halves of each of its %d panels of k, (%d, %d) boxes, this "
                   "CTA the half of its rank,",
                   op, o.panels(), o.box_rows() / 2, o.box_cols());
}

}  // namespace

std::string wgmma_cluster_copy_args(const KernelPlan& p) {
  return p.wgmma->paired() ? ", crank, pair_mask" : p.wgmma->cluster_size() > 1 ? ", crank" : "";
}

void emit_wgmma_cluster_tma_copy(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const Schedule& s = p.schedule;
  const std::string at = origin_note(s, s.cluster_at);
  e.comment(format("tma, cluster %dx%d %s: ", w.cluster_m, w.cluster_n, at.c_str()) +
            (w.shares_b() ? "A as " + wgmma_boxes_text(w.a) + "; " + halves_text(w.b, 'B')
                          : halves_text(w.a, 'A')));
  e.comment(std::string(w.paired() ? "multicast to both tiles' CTAs of this slice (pair_mask) "
                                     "at the same offsets; "
                                   : "multicast to both CTAs at the same offsets; ") +
            (w.b.mn_major        ? "B's panels each its own box."
             : w.b.panels() == 1 ? "B k-major, in one box a half."
                                 : "B k-major, in one box a half a panel.") +
            " Each CTA's");
  e.comment("`full` expects the whole stage: its own copies and the other CTA's multicast half");
  e.open_scope(
      std::string("__device__ __forceinline__ void tma_copy_tile(const TmaMap& tma_a, const "
                  "TmaMap& tma_b, unsigned sa, unsigned sb, unsigned full, int k0, int tile_m0, "
                  "int tile_n0, unsigned crank") +
      (w.paired() ? ", unsigned short pair_mask" : "") + (p.schedule.batch > 0 ? ", int z)" : ")"));
  const std::string mask = w.paired() ? "pair_mask" : "0x3";
  e.line(format("mbar_expect_tx(full, %du);  // %d + %d bytes", w.a.stage_bytes + w.b.stage_bytes,
                w.a.stage_bytes, w.b.stage_bytes));
  emit_wgmma_operand_loads(e, w.a, 'a', w.shares_a() ? WgmmaHalf::multicast_half : WgmmaHalf::whole,
                           p.schedule.batch > 0, mask);
  emit_wgmma_operand_loads(e, w.b, 'b', w.shares_b() ? WgmmaHalf::multicast_half : WgmmaHalf::whole,
                           p.schedule.batch > 0, mask);
  e.close_scope();
  e.line();
}

void emit_wgmma_cluster_walk(Emitter& e, const KernelPlan& p) {
  const WgmmaPlan& w = *p.wgmma;
  const Schedule& s = p.schedule;
  e.comment(
      format("persistent %s, cluster %dx%d %s: the cluster's two CTAs walk super-tiles of "
             "%dx%d tiles",
             origin_note(s, s.persistent_at).c_str(), w.cluster_m, w.cluster_n,
             origin_note(s, s.cluster_at).c_str(), w.cluster_m, w.cluster_n));
  e.comment("walk_id, walk_id + walkers, ... in step, each the tile of its rank");
  e.line("const unsigned crank = cluster_ctarank();");
  e.line(
      "const int walk_id = blockIdx.x / 2, walkers = gridDim.x / 2;  // the runtime launches an "
      "even grid");
  e.line(format("const int stiles_m = (tiles_m + %d) / %d, stiles_n = (tiles_n + %d) / %d;",
                w.cluster_m - 1, w.cluster_m, w.cluster_n - 1, w.cluster_n));
  e.line("const int my_tiles = (stiles_m * stiles_n - walk_id + walkers - 1) / walkers;");
}

void emit_wgmma_cluster_tile(Emitter& e, const KernelPlan& p, const std::string& step) {
  const WgmmaPlan& w = *p.wgmma;
  e.line("const int stile = walk_id + " + step + " * walkers;");
  if (p.swizzle_group > 1) {
    e.line("const int group = stile / (GROUP * stiles_n);");
    e.line("const int group_m0 = group * GROUP;");
    e.line("const int group_rows = min(stiles_m - group_m0, GROUP);");
    e.line("const int in_group = stile % (GROUP * stiles_n);");
    e.line("const int srow = group_m0 + in_group % group_rows, scol = in_group / group_rows;");
  } else {
    e.line("const int srow = stile / stiles_n, scol = stile % stiles_n;");
  }
  e.line(format("const int tile_m0 = (srow * %d%s) * BM;", w.cluster_m,
                w.shares_b() ? " + (int)crank" : ""));
  e.line(format("const int tile_n0 = (scol * %d%s) * BN;", w.cluster_n,
                w.shares_a() ? " + (int)crank" : ""));
}

}  // namespace schedc::codegen
