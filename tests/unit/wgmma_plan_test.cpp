// The wgmma plan on the CPU: schedules from text through analyze and lower
// (whose verify() walks every descriptor against TMA's layout and every
// accumulator against the C tile), the PTX layouts on hand-worked lanes, the
// TMA layout against the one the mma.sync path's GPU runs validated, and
// the persistent walk of tiles and pipeline iterations.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/analyze.h"
#include "compiler/lower.h"
#include "compiler/lower_wgmma.h"
#include "dsl/diagnostics.h"
#include "dsl/parse.h"
#include "dsl/source.h"
#include "plan_test_util.h"

namespace schedc {
namespace {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

std::string schedule(const std::string& dtype, int bm, int bn, int wm, int wn, int stages,
                     const std::string& extra) {
  std::ostringstream o;
  o << "dtype " << dtype << "\ntile " << bm << "x" << bn << "x64\nwarp " << wm << "x" << wn
    << "\nwgmma " << dtype << "\ntma\nstages " << stages << "\nswizzle smem\n"
    << extra;
  return o.str();
}

TEST(WgmmaPlan, EverySchedulesAnalysisAcceptsLowersAndVerifies) {
  int lowered = 0;
  for (const char* layout : {"", "layout A col\n", "layout B col\n", "layout A col\nlayout B col\n",
                             "layout C col\n", "layout A col\nlayout B col\nlayout C col\n"})
    for (const char* dtype : {"f16", "bf16"})
      for (int bm : {64, 128, 192, 256})
        for (int bn : {64, 128, 256})
          for (int wm : {64, 128, 256})
            for (int wn : {64, 128, 256})
              for (const char* extra :
                   {"", "warp_specialize\n", "warp_specialize\npersistent\ntma_store\n",
                    "persistent\nswizzle block 4\n",
                    "warp_specialize pingpong\npersistent\ntma_store\n"}) {
                if (bm % wm || bn % wn) continue;
                const bool pingpong = std::string(extra).find("pingpong") != std::string::npos;
                if (pingpong && (bm != wm || bn != wn)) continue;  // refused: see below
                std::string diags;
                std::optional<KernelPlan> p;
                ASSERT_NO_THROW(
                    p = plantest::plan_of_text(
                        schedule(dtype, bm, bn, wm, wn, 2, std::string(layout) + extra), &diags));
                if (!p) continue;  // refused with a located error (registers, smem): fine
                ++lowered;
                const WgmmaPlan& w = *p->wgmma;
                EXPECT_EQ(p->kind, compiler::KernelKind::wgmma);
                EXPECT_EQ(w.consumers(), pingpong ? 2 : (bm / wm) * (bn / wn));
                EXPECT_EQ(w.pingpong, pingpong);
                EXPECT_EQ(p->block_threads, 128 * (w.consumers() + (w.warp_specialize ? 1 : 0)));
                EXPECT_LE(p->smem_bytes, p->target.smem_per_block_optin);
                EXPECT_EQ(w.accumulators, wm * wn / 128);
                // Each stage lies as its operand lies in memory.
                EXPECT_EQ(w.a.mn_major, p->schedule.a_col);
                EXPECT_EQ(w.b.mn_major, !p->schedule.b_col);
                // setmaxnreg.inc waits until the block's pool holds what it
                // asks for: more than the pool is a kernel that never ends.
                if (w.warp_specialize) {
                  EXPECT_LE(w.producer_regs * 128 + w.consumer_regs * 128 * w.consumers(),
                            p->target.register_pool(p->block_threads))
                      << dtype << " " << bm << "x" << bn << " warp " << wm << "x" << wn;
                }
              }
  // Most of the space is legal; the sweep must not pass by refusing everything.
  EXPECT_GT(lowered, 6 * 170);
}

// The register pool a block owns from launch, and the consumers' share of
// it: five warpgroups (640 threads) get 96 registers a thread, so four
// consumers may take 104 each beside a 40-register producer, not the 112
// that 64K would allow (that kernel hung on an H100).
TEST(WgmmaPlan, ConsumersAskNoMoreThanTheBlocksRegisterPool) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  EXPECT_EQ(t.register_pool(384), 168 * 384);
  EXPECT_EQ(t.register_pool(640), 96 * 640);
  EXPECT_EQ(t.register_pool(256), 255 * 256);
  std::optional<KernelPlan> five = plantest::plan_of_text(
      schedule("f16", 128, 256, 64, 128, 3, "warp_specialize\npersistent\ntma_store\n"));
  ASSERT_TRUE(five);
  EXPECT_EQ(five->block_threads, 640);
  EXPECT_EQ(five->wgmma->consumer_regs, 104);
  std::optional<KernelPlan> three = plantest::plan_of_text(
      schedule("f16", 128, 256, 64, 256, 3, "warp_specialize\npersistent\n"));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->wgmma->consumer_regs, 232);  // hgemm_best's, as before
}

// pingpong: each consumer computes whole block tiles, so the warpgroup tile
// is the block tile, and the consumers take turns over a persistent walk.
TEST(WgmmaPlan, PingpongNeedsTheWholeTileAndPersistent) {
  std::string diags;
  EXPECT_FALSE(plantest::plan_of_text(
      schedule("f16", 128, 256, 64, 256, 3, "warp_specialize pingpong\npersistent\n"), &diags));
  EXPECT_NE(diags.find("the warpgroup tile must be the block tile 128x256 (it is 64x256)"),
            std::string::npos)
      << diags;
  EXPECT_FALSE(plantest::plan_of_text(
      schedule("f16", 128, 128, 128, 128, 3, "warp_specialize pingpong\n"), &diags));
  EXPECT_NE(diags.find("'warp_specialize pingpong' needs 'persistent'"), std::string::npos)
      << diags;
  std::optional<KernelPlan> p = plantest::plan_of_text(
      schedule("f16", 128, 128, 128, 128, 4, "warp_specialize pingpong\npersistent\ntma_store\n"));
  ASSERT_TRUE(p);
  const WgmmaPlan& w = *p->wgmma;
  EXPECT_EQ(p->block_threads, 384);
  EXPECT_EQ(w.empty_arrivals(), 4);
  EXPECT_EQ(w.consumer_row0(1), 0);  // both consumers: the whole tile
  EXPECT_EQ(w.a_start(1, 1, 2), w.a_start(0, 1, 2));
  // A staging area per consumer: one stores a tile while the other computes.
  EXPECT_EQ(w.barrier_offset_bytes - w.c_offset_bytes, 2 * 128 * 128 * 2);
}

TEST(WgmmaPlan, InstructionDefaultsToTheWarpgroupTileUpTo256) {
  std::optional<KernelPlan> p = plantest::plan_of_text(schedule("f16", 128, 256, 64, 256, 3, ""));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->wgmma->inst_n, 256);
  EXPECT_EQ(p->wgmma->n_insts, 1);
  p = plantest::plan_of_text(schedule("f16", 128, 256, 128, 128, 3, ""));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->wgmma->inst_n, 128);
  EXPECT_EQ(p->wgmma->m_insts, 2);
  p = plantest::plan_of_text(
      "dtype f16\ntile 128x256x64\nwarp 64x256\nwgmma f16 m64n128k16\ntma\nstages "
      "2\nswizzle smem\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->wgmma->inst_n, 128);
  EXPECT_EQ(p->wgmma->n_insts, 2);
}

// PTX ISA's wgmma D layout for m64nN f32, on hand-worked threads.
TEST(WgmmaPlan, AccumulatorLayoutOnHandWorkedLanes) {
  int row = -1, col = -1;
  compiler::wgmma_d_coord(0, 0, row, col);
  EXPECT_EQ(row, 0);
  EXPECT_EQ(col, 0);
  compiler::wgmma_d_coord(5, 3, row, col);  // lane 5: group 1, column pair 1; r 3: row + 8, odd
  EXPECT_EQ(row, 9);
  EXPECT_EQ(col, 3);
  compiler::wgmma_d_coord(37, 4, row, col);  // warp 1 (rows 16..31), lane 5; r 4: columns 8..15
  EXPECT_EQ(row, 17);
  EXPECT_EQ(col, 10);
  compiler::wgmma_d_coord(127, 127, row, col);  // last thread, last register of m64n256
  EXPECT_EQ(row, 63);
  EXPECT_EQ(col, 255);
}

// The TMA layout of the wgmma stages is the one the mma.sync `tma` path reads
// (SmemTile with 64-column panels, GPU-validated since session 3).
TEST(WgmmaPlan, StageLayoutIsTheMmaSyncTmaLayout) {
  std::optional<KernelPlan> w = plantest::plan_of_text(schedule("f16", 128, 256, 64, 256, 3, ""));
  std::optional<KernelPlan> m = plantest::plan_of_text(
      "dtype f16\ntile 128x256x64\nwarp 64x64\nmma f16 m16n8k16\ntma\nstages "
      "3\nswizzle smem\n");
  ASSERT_TRUE(w && m);
  const compiler::WgmmaOperand& wa = w->wgmma->a;
  const compiler::WgmmaOperand& wb = w->wgmma->b;
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 64; ++c) EXPECT_EQ(wa.offset(r, c), m->mma->a.offset(r, c) * 2);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 256; ++c) EXPECT_EQ(wb.offset(c, r), m->mma->b.offset(r, c) * 2);
}

// Each descriptor reads 64 x K distinct bytes (A) and K x N (B) per k-step;
// over a stage, every byte of the stage once per consumer row (A) / column (B).
TEST(WgmmaPlan, DescriptorsReadEveryStageByteOncePerConsumer) {
  std::optional<KernelPlan> p = plantest::plan_of_text(schedule("bf16", 256, 128, 128, 64, 2, ""));
  ASSERT_TRUE(p);
  const WgmmaPlan& w = *p->wgmma;
  std::set<int> a_bytes, b_bytes;
  for (int c = 0; c < w.consumers(); ++c)
    for (int kk = 0; kk < w.k_steps; ++kk) {
      if (c % w.consumers_n == 0) {  // consumers of one row of the grid read the same A rows
        for (int i = 0; i < w.m_insts; ++i)
          for (int r = 0; r < 64; ++r)
            for (int k = 0; k < w.inst_k; ++k) {
              const int byte =
                  compiler::wgmma_kmajor_byte(w.a_start(c, i, kk), w.a.sbo_bytes, 2, r, k);
              EXPECT_TRUE(a_bytes.insert(byte).second);
            }
      }
      if (c < w.consumers_n) {  // consumers of one column read the same B panels
        for (int j = 0; j < w.n_insts; ++j)
          for (int k = 0; k < w.inst_k; ++k)
            for (int n = 0; n < w.inst_n; ++n) {
              const int byte = compiler::wgmma_mnmajor_byte(w.b_start(c, j, kk), w.b.lbo_bytes,
                                                            w.b.sbo_bytes, 2, k, n);
              EXPECT_TRUE(b_bytes.insert(byte).second);
            }
      }
    }
  EXPECT_EQ(int(a_bytes.size()) * 2, w.a.stage_bytes);
  EXPECT_EQ(int(b_bytes.size()) * 2, w.b.stage_bytes);
}

// persistent: over any grid, every tile is some block's, once; a block's
// pipeline iterations walk its tiles' k-tiles in order.
TEST(WgmmaPlan, PersistentWalkComputesEveryTileKTileOnce) {
  for (int tiles : {1, 2, 7, 131, 132, 133, 512, 1000})
    for (int grid : {1, 3, 66, 132})
      for (int k_tiles : {1, 4, 16}) {
        if (grid > tiles) continue;
        std::set<std::pair<int, int>> seen;
        for (int b = 0; b < grid; ++b) {
          const int mine = WgmmaPlan::tiles_of_block(tiles, grid, b);
          for (int it = 0; it < mine * k_tiles; ++it) {
            const int tile = WgmmaPlan::tile_of_iteration(it, k_tiles, grid, b);
            EXPECT_LT(tile, tiles);
            EXPECT_TRUE(seen.insert({tile, it % k_tiles}).second);
          }
        }
        EXPECT_EQ(int(seen.size()), tiles * k_tiles) << tiles << " tiles, grid " << grid;
      }
}

// tf32: C^T = B^T A^T. Every legal tile lowers and verifies (verify() walks
// the transposed accumulator map, A's descriptors and every B^T fragment
// register against the stage TMA writes); the instruction runs along C's
// rows with its 64 rows along C's columns.
TEST(WgmmaPlan, Tf32ComputesCTransposedAndVerifies) {
  int lowered = 0;
  for (int bm : {64, 128, 256})
    for (int bn : {64, 128, 256})
      for (int wm : {64, 128, 192, 256})
        for (int wn : {64, 128})
          for (const char* extra :
               {"", "warp_specialize\npersistent\n", "warp_specialize pingpong\npersistent\n"}) {
            if (bm % wm || bn % wn) continue;
            std::ostringstream o;
            o << "dtype f32\ntile " << bm << "x" << bn << "x32\nwarp " << wm << "x" << wn
              << "\nwgmma tf32\ntma\nstages 2\nswizzle smem\n"
              << extra;
            std::optional<KernelPlan> p;
            ASSERT_NO_THROW(p = plantest::plan_of_text(o.str())) << o.str();
            if (!p) continue;  // registers, shared memory, pingpong's whole tile
            ++lowered;
            const WgmmaPlan& w = *p->wgmma;
            EXPECT_TRUE(w.swapped);
            EXPECT_EQ(w.inst_k, 8);
            EXPECT_EQ(w.m_insts * 64, wn);
            EXPECT_EQ(w.n_insts * w.inst_n, wm);
            EXPECT_EQ(w.b.panel_cols, 32);
          }
  EXPECT_GT(lowered, 25);
  // PTX's m64nNk8 A fragment on hand-worked lanes: thread 37 (warp 1, lane 5).
  WgmmaPlan w;
  w.swapped = true;
  w.inst_k = 8;
  int k = -1, n = -1;
  w.bt_fragment(0, 37, 0, 0, 0, k, n);
  EXPECT_EQ(n, 16 + 1);
  EXPECT_EQ(k, 1);
  w.bt_fragment(0, 37, 0, 2, 3, k, n);
  EXPECT_EQ(n, 16 + 1 + 8);
  EXPECT_EQ(k, 16 + 1 + 4);
}

// cluster: the two CTAs of a cluster walk the same super-tiles in step and
// between them compute every tile once; a CTA's tile past the grid's edge
// (odd tile counts) is the only extra work.
TEST(WgmmaPlan, ClusterWalkComputesEveryTileOnce) {
  for (auto [cm, cn] : {std::pair{2, 1}, std::pair{1, 2}})
    for (int tiles_m : {1, 2, 3, 32, 33})
      for (int tiles_n : {1, 2, 17, 32})
        for (int walkers : {1, 5, 66}) {
          WgmmaPlan w;
          w.cluster_m = cm;
          w.cluster_n = cn;
          const int supers = w.super_tiles(tiles_m, tiles_n), stiles_n = (tiles_n + cn - 1) / cn;
          std::map<std::pair<int, int>, int> hits;
          int outside = 0;
          for (int id = 0; id < walkers; ++id) {
            const int mine = WgmmaPlan::tiles_of_block(supers, walkers, id);
            for (int t = 0; t < mine; ++t)
              for (int rank = 0; rank < 2; ++rank) {
                const int stile = id + t * walkers;
                int tm = 0, tn = 0;
                w.cluster_tile(stile / stiles_n, stile % stiles_n, rank, tm, tn);
                if (tm < tiles_m && tn < tiles_n)
                  ++hits[{tm, tn}];
                else
                  ++outside;
              }
          }
          EXPECT_EQ(int(hits.size()), tiles_m * tiles_n);
          for (auto& [tile, n] : hits) EXPECT_EQ(n, 1);
          EXPECT_EQ(outside, 2 * supers - tiles_m * tiles_n);
        }
  std::optional<KernelPlan> p = plantest::plan_of_text(schedule(
      "f16", 128, 256, 64, 256, 3, "warp_specialize\npersistent\ntma_store\ncluster 2x1\n"));
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->wgmma->shares_b());
  EXPECT_EQ(p->wgmma->empty_arrivals(), 16);  // 8 consumer warps in each of two CTAs
  std::string diags;
  EXPECT_FALSE(plantest::plan_of_text(
      schedule("f16", 128, 256, 64, 256, 3, "persistent\ncluster 2x1\n"), &diags));
  EXPECT_NE(diags.find("'cluster' needs 'warp_specialize'"), std::string::npos) << diags;
  EXPECT_FALSE(plantest::plan_of_text(
      schedule("f16", 128, 64, 64, 64, 3, "warp_specialize\npersistent\ncluster 2x1\n"), &diags));
  EXPECT_NE(diags.find("BN must be a multiple of 128"), std::string::npos) << diags;
}

// Layouts (issue 18): a stage lies as its operand lies in memory. A
// column-major A is m-major: 64-column panels of BK rows, as a row-major B;
// a column-major B is k-major: BN rows of 128 bytes, as a row-major A.
// Offsets worked by hand from the TMA 128-byte swizzle.
TEST(WgmmaPlan, ColumnMajorOperandsLieInTheirMemoryOrder) {
  std::optional<KernelPlan> p =
      plantest::plan_of_text(schedule("f16", 128, 128, 64, 128, 3, "layout A col\nlayout B col\n"));
  ASSERT_TRUE(p);
  const WgmmaPlan& w = *p->wgmma;
  EXPECT_TRUE(w.a.mn_major);
  EXPECT_FALSE(w.b.mn_major);
  EXPECT_EQ(w.a.panels(), 2);
  EXPECT_EQ(w.a.box_rows(), 64);  // BK rows of the K x M tensor map
  EXPECT_EQ(w.a.box_cols(), 64);
  EXPECT_EQ(w.b.panels(), 1);
  EXPECT_EQ(w.b.box_rows(), 128);  // BN rows of the N x K tensor map
  EXPECT_EQ(w.b.box_cols(), 64);
  // A (m 70, k 3): panel 1 (8192 bytes), row 3, chunk 0 ^ 3, byte 12.
  EXPECT_EQ(w.a.offset(70, 3), 8192 + 3 * 128 + 3 * 16 + 12);
  // B (n 9, k 10): row 9, chunk 1 ^ 1 = 0, byte 4.
  EXPECT_EQ(w.b.offset(9, 10), 9 * 128 + 4);
  // Consumer 0's descriptors: A's k-step 2 starts 32 rows into its panel,
  // B's 64 bytes into its rows.
  EXPECT_EQ(w.a_start(0, 0, 2), 2 * 16 * 128);
  EXPECT_EQ(w.b_start(0, 0, 2), 2 * 16 * 2);
  // Each stage is a bijection onto its tile.
  for (const compiler::WgmmaOperand* o : {&w.a, &w.b}) {
    std::set<int> bytes;
    for (int i = 0; i < o->mn; ++i)
      for (int k = 0; k < o->k; ++k) EXPECT_TRUE(bytes.insert(o->offset(i, k)).second);
    EXPECT_EQ(int(bytes.size()) * 2, o->stage_bytes);
    EXPECT_EQ(*bytes.rbegin(), o->stage_bytes - 2);
  }
}

// A column-major C is staged m-major for TMA: wg_m / 64 panels of wg_n rows
// (one per column n), so TMA stores (wg_n, 64) boxes of C's N x M map.
TEST(WgmmaPlan, ColumnMajorCIsStagedInItsMemoryOrder) {
  std::optional<KernelPlan> p = plantest::plan_of_text(schedule(
      "f16", 128, 256, 128, 128, 3, "layout C col\nwarp_specialize\npersistent\ntma_store\n"));
  ASSERT_TRUE(p);
  const WgmmaPlan& w = *p->wgmma;
  EXPECT_TRUE(w.c_col);
  EXPECT_EQ(w.c_stage_rows(), 128);  // wg_n
  EXPECT_EQ(w.c_stage_panels(), 2);  // wg_m / 64
  // (m 70, n 9): panel 1 (128 rows of 128 bytes), row 9, chunk 0 ^ 1, byte 12.
  EXPECT_EQ(w.c_stage_offset(70, 9), 128 * 128 + 9 * 128 + 16 + 12);
  // Row-major C: (m 9, n 70): panel 1 (128 rows), row 9, chunk 0 ^ 1, byte 12.
  std::optional<KernelPlan> r = plantest::plan_of_text(
      schedule("f16", 128, 256, 128, 128, 3, "warp_specialize\npersistent\ntma_store\n"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->wgmma->c_stage_offset(9, 70), 128 * 128 + 9 * 128 + 16 + 12);
}

// tf32: a column-major B makes both operands k-major, read by descriptor
// with C computed directly; a column-major A cannot be read by descriptor.
TEST(WgmmaPlan, Tf32LayoutsChooseTheDescriptorPath) {
  std::optional<KernelPlan> p = plantest::plan_of_text(
      "dtype f32\nlayout B col\ntile 128x256x32\nwarp 64x256\nwgmma tf32\ntma\nstages "
      "4\nswizzle smem\nwarp_specialize\npersistent\n");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->wgmma->swapped);
  EXPECT_FALSE(p->wgmma->b.mn_major);
  EXPECT_EQ(p->wgmma->inst_n, 256);
  EXPECT_EQ(p->wgmma->m_insts, 1);
  std::string diags;
  // A column-major with B row-major: neither k-major; the row-major-A
  // (swapped) kernel on A transposed by the runtime.
  std::optional<KernelPlan> tn = plantest::plan_of_text(
      "dtype f32\nlayout A col\ntile 128x128x32\nwarp 128x64\nwgmma tf32\ntma\nstages "
      "4\nswizzle smem\n");
  ASSERT_TRUE(tn);
  EXPECT_TRUE(tn->wgmma->a_transposed);
  EXPECT_TRUE(tn->wgmma->swapped);
  EXPECT_FALSE(tn->wgmma->a.mn_major);
  EXPECT_TRUE(tn->schedule.a_col);  // the problem's layout stays the schedule's
  // A and B column-major: A from registers (its m-major stage), B by descriptor.
  p = plantest::plan_of_text(
      "dtype f32\nlayout A col\nlayout B col\ntile 128x128x32\nwarp 64x128\nwgmma "
      "tf32\ntma\nstages 4\nswizzle smem\n");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->wgmma->swapped);
  EXPECT_TRUE(p->wgmma->a_in_registers);
  EXPECT_TRUE(p->wgmma->a.mn_major);
  EXPECT_EQ(p->wgmma->register_row0(1), 64);  // consumer 1: A's rows 64..127
  int k = -1, m = -1;
  p->wgmma->bt_fragment(1, 37, 0, 2, 3, k, m);  // warp 1, lane 5, v 3
  EXPECT_EQ(m, 64 + 16 + 1 + 8);
  EXPECT_EQ(k, 16 + 1 + 4);
  EXPECT_FALSE(plantest::plan_of_text(
      "dtype f32\nlayout B col\ntile 128x256x32\nwarp 64x256\nwgmma tf32\ntma\nstages "
      "4\nswizzle smem\nwarp_specialize\npersistent\ntma_store\n",
      &diags));
  EXPECT_NE(diags.find("'tma_store' with 'wgmma tf32' is not implemented yet"), std::string::npos)
      << diags;
}

// cluster: the shared operand splits into whole panels (m- or n-major) or
// whole 8-row swizzle atoms (k-major).
TEST(WgmmaPlan, ClusterHalvesFollowTheSharedOperandsLayout) {
  const std::string cluster = "warp_specialize\npersistent\ntma_store\n";
  std::optional<KernelPlan> p = plantest::plan_of_text(
      schedule("f16", 128, 64, 64, 64, 3, "layout B col\n" + cluster + "cluster 2x1\n"));
  ASSERT_TRUE(p);  // k-major B of 64 rows: two halves of 32 rows (the n-major B needs 128 columns)
  EXPECT_TRUE(p->wgmma->b.halves());
  p = plantest::plan_of_text(
      schedule("f16", 128, 128, 64, 128, 3, "layout A col\n" + cluster + "cluster 1x2\n"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->wgmma->a.panels(), 2);
  std::string diags;
  EXPECT_FALSE(plantest::plan_of_text(
      schedule("f16", 64, 128, 64, 128, 3, "layout A col\n" + cluster + "cluster 1x2\n"), &diags));
  EXPECT_NE(diags.find("'cluster 1x2' multicasts A in two halves of whole 128-byte panels: BM must "
                       "be a multiple of 128 for f16 (BM is 64)"),
            std::string::npos)
      << diags;
}

// s8 (issue 21): BK 128 bytes of int8, K 32 an instruction, both stages
// k-major in every layout (the runtime transposes a column-major A or a
// row-major B first), and each descriptor reads every byte of its stage once.
TEST(WgmmaPlan, S8ReadsKMajorStagesInEveryLayout) {
  const std::string body =
      "tile 128x256x128\nwarp 64x256\nwgmma s8\ntma\nstages 4\nswizzle "
      "smem\nwarp_specialize\npersistent\n";
  for (bool a_col : {false, true})
    for (bool b_col : {false, true}) {
      std::string diags;
      std::optional<KernelPlan> p =
          plantest::plan_of_text(std::string("dtype s8\n") + (a_col ? "layout A col\n" : "") +
                                     (b_col ? "layout B col\n" : "") + body,
                                 &diags);
      ASSERT_TRUE(p) << diags;
      const WgmmaPlan& w = *p->wgmma;
      EXPECT_EQ(w.type, compiler::MmaType::s8);
      EXPECT_EQ(w.elem_bytes, 1);
      EXPECT_EQ(w.c_elem_bytes, 4);
      EXPECT_EQ(w.inst_k, 32);
      EXPECT_EQ(w.k_steps, 4);
      EXPECT_EQ(w.a.panel_cols, 128);
      EXPECT_FALSE(w.a.mn_major);
      EXPECT_FALSE(w.b.mn_major);
      EXPECT_FALSE(w.registers());
      EXPECT_EQ(w.a_transposed, a_col);
      EXPECT_EQ(w.b_transposed, !b_col);
      std::set<int> a_bytes, b_bytes;
      for (int kk = 0; kk < w.k_steps; ++kk)
        for (int k = 0; k < w.inst_k; ++k) {
          for (int r = 0; r < 64; ++r)
            EXPECT_TRUE(a_bytes
                            .insert(compiler::wgmma_kmajor_byte(w.a_start(0, 0, kk), w.a.sbo_bytes,
                                                                1, r, k))
                            .second);
          for (int n = 0; n < w.inst_n; ++n)
            EXPECT_TRUE(b_bytes.insert(compiler::wgmma_operand_byte(w.b, w.b_start(0, 0, kk), n, k))
                            .second);
        }
      EXPECT_EQ(int(a_bytes.size()), 64 * 128);  // consumer 0's 64 rows of A
      EXPECT_EQ(int(b_bytes.size()), w.b.stage_bytes);
      // And TMA writes each element where the descriptor reads it.
      for (int kk = 0; kk < w.k_steps; ++kk)
        for (int k = 0; k < w.inst_k; k += 5)
          for (int n = 0; n < w.inst_n; n += 7)
            EXPECT_EQ(compiler::wgmma_operand_byte(w.b, w.b_start(0, 0, kk), n, k),
                      w.b.offset(n, kk * w.inst_k + k));
    }
}

// s8's tma_store stages its int32 tile in the largest chunks of 32-column
// panels that fit beside the stages: chunk after chunk, the staging offsets
// cover the tile once.
TEST(WgmmaPlan, S8TmaStoreStagesChunksOfPanels) {
  std::optional<KernelPlan> p = plantest::plan_of_text(
      "dtype s8\nlayout B col\ntile 128x256x128\nwarp 64x256\nwgmma s8\ntma\nstages "
      "4\nswizzle smem\nwarp_specialize\npersistent\ntma_store\n");
  ASSERT_TRUE(p);
  const WgmmaPlan& w = *p->wgmma;
  EXPECT_EQ(w.c_panel_cols(), 32);
  EXPECT_EQ(w.c_stage_panels(), 8);
  EXPECT_EQ(w.c_chunk_panels, 2);
  EXPECT_EQ(w.c_chunks(), 4);
  EXPECT_EQ(w.c_consumer_bytes, 16384);
  EXPECT_EQ(p->smem_bytes, 4 * (16384 + 32768) + 2 * 16384 + 64);
  // Column 70 of row 9: chunk 1 (columns 64..127), its panel 0, 16-byte chunk
  // (70 % 32) / 4 = 1 XOR row 9 % 8 = 1 -> 0, word 70 % 4 = 2.
  EXPECT_EQ(w.c_stage_offset(9, 70) - 1 * w.c_consumer_bytes, 9 * 128 + 0 * 16 + 2 * 4);
  std::optional<KernelPlan> pp = plantest::plan_of_text(
      "dtype s8\nlayout B col\ntile 128x128x128\nwarp 128x128\nwgmma s8\ntma\nstages "
      "4\nswizzle smem\nwarp_specialize pingpong\npersistent\ntma_store\n");
  ASSERT_TRUE(pp);
  // 4 stages of 32 KB and two consumers: two of the four panels (32 KB) each.
  EXPECT_EQ(pp->wgmma->c_chunk_panels, 2);
  EXPECT_EQ(pp->wgmma->c_chunks(), 2);
  // With 2 stages the 128x256 tile's consumers stage their 64 KB whole.
  std::optional<KernelPlan> two = plantest::plan_of_text(
      "dtype s8\nlayout B col\ntile 128x256x128\nwarp 64x256\nwgmma s8\ntma\nstages "
      "2\nswizzle smem\nwarp_specialize\npersistent\ntma_store\n");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->wgmma->c_chunks(), 1);
  EXPECT_EQ(two->wgmma->c_consumer_bytes, 65536);
  EXPECT_LE(two->smem_bytes, compiler::kWgmmaSmemLimit);
}

TEST(WgmmaPlan, DirectQuadsOnlyForARowMajor4ByteOr1ByteC) {
  const std::string s8 =
      "dtype s8\nlayout B col\ntile 128x256x128\nwarp 64x256\nwgmma s8\ntma\nstages "
      "4\nswizzle smem\nwarp_specialize\npersistent\n";
  std::optional<KernelPlan> p = plantest::plan_of_text(s8);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->wgmma->direct_quads());
  EXPECT_EQ(p->wgmma->c_elem_bytes, 4);
  // An int8 C (`epilogue ... requantize`): quads of four int8, 4-byte stores.
  std::optional<KernelPlan> q8 = plantest::plan_of_text(s8 + "epilogue alpha 0.01 requantize\n");
  ASSERT_TRUE(q8);
  EXPECT_EQ(q8->wgmma->c_elem_bytes, 1);
  EXPECT_TRUE(q8->wgmma->direct_quads());
  // ... and 16 int8 columns a store where C's rows allow it (N 256: a
  // multiple of 32); an int32 C's quads are 16-byte stores already.
  EXPECT_TRUE(q8->wgmma->direct_sixteens());
  EXPECT_FALSE(p->wgmma->direct_sixteens());
  std::optional<KernelPlan> n16 = plantest::plan_of_text(
      "dtype s8\nlayout B col\ntile 128x16x128\nwarp 64x16\nwgmma s8\ntma\nstages 4\nswizzle "
      "smem\nwarp_specialize\npersistent\nepilogue alpha 0.01 requantize\n");
  ASSERT_TRUE(n16);
  EXPECT_TRUE(n16->wgmma->direct_quads());
  EXPECT_FALSE(n16->wgmma->direct_sixteens());  // N 16: one group of 16 columns, not four
  // Column-major C: a pair's two elements lie ldc apart, no quads.
  std::optional<KernelPlan> col = plantest::plan_of_text(s8 + "layout C col\n");
  ASSERT_TRUE(col);
  EXPECT_FALSE(col->wgmma->direct_quads());
  // 16-bit C stores pairs (4 bytes); tf32 with a row-major B computes C^T.
  std::optional<KernelPlan> f16 = plantest::plan_of_text(schedule("f16", 128, 256, 64, 256, 4, ""));
  ASSERT_TRUE(f16);
  EXPECT_FALSE(f16->wgmma->direct_quads());
  std::optional<KernelPlan> tf32 = plantest::plan_of_text(
      "dtype f32\ntile 256x128x32\nwarp 256x64\nwgmma tf32\ntma\nstages 4\nswizzle "
      "smem\nwarp_specialize\npersistent\n");
  ASSERT_TRUE(tf32);
  ASSERT_TRUE(tf32->wgmma->swapped);
  EXPECT_FALSE(tf32->wgmma->direct_quads());
  // An instruction N of 24 (three 8-column blocks) leaves one unpaired.
  std::optional<KernelPlan> n24 = plantest::plan_of_text(
      "dtype s8\nlayout B col\ntile 64x24x128\nwarp 64x24\nwgmma s8\ntma\nstages "
      "4\nswizzle smem\n");
  ASSERT_TRUE(n24);
  EXPECT_EQ(n24->wgmma->inst_n, 24);
  EXPECT_FALSE(n24->wgmma->direct_quads());
}

TEST(WgmmaPlan, S8RulesAreLocated) {
  std::string diags;
  auto refused = [&](const std::string& text, const std::string& want) {
    diags.clear();
    EXPECT_FALSE(plantest::plan_of_text(text, &diags)) << text;
    EXPECT_NE(diags.find(want), std::string::npos) << diags;
  };
  const std::string wg =
      "dtype s8\nlayout B col\ntile 128x256x128\nwarp 64x256\nwgmma s8\ntma\nstages "
      "3\nswizzle smem\n";
  refused("dtype s8\ntile 128x128x8\nthread 8x8\n",
          "dtype s8 needs 'mma s8' (sm_80) or 'wgmma s8' (sm_90)");
  refused("dtype s8\nlayout B col\ntile 128x128x32\nwarp 64x64\nwmma s8\n",
          "'wmma s8' is not offered");
  refused("dtype s8\nlayout B col\ntile 128x128x32\nwarp 64x64\nmma s8 m16n8k16\n",
          "mma s8 has no shape 'm16n8k16'; did you mean 'm16n8k32'? (valid: m16n8k32 or "
          "m8n8k16)");
  refused(wg + "layout C col\nwarp_specialize\npersistent\ntma_store\n",
          "'tma_store' with 'wgmma s8' and 'layout C col' is not implemented yet");
  refused(
      "dtype s8\nlayout B col\ntile 128x256x64\nwarp 64x256\nwgmma s8\ntma\nstages "
      "3\nswizzle smem\n",
      "BK must be a multiple of 128 for s8 (BK is 64)");
  refused(
      "dtype s8\nlayout B col\ntile 128x120x128\nwarp 64x120\nwgmma s8 m64n120k32\ntma\n"
      "stages 3\nswizzle smem\n",
      "wgmma s8 has N 8, 16, 24 or a multiple of 16 up to 256, got 120");
  refused(
      "dtype s8\nlayout B col\ntile 128x256x128\nwarp 64x256\nwgmma s8 m64n256k16\ntma\n"
      "stages 3\nswizzle smem\n",
      "wgmma s8 has K 32 (32 bytes), got 16");
  refused(
      "dtype s8\nlayout B col\ntile 128x256x128\nwarp 64x256\nwgmma s8\ntma\nstages "
      "3\nswizzle smem\nepilogue alpha 0.5\n",
      "dtype s8 computes in s32: alpha must be an integer, got 0.5");
}

TEST(WgmmaPlan, RepackLeadingDimensionIsWhole128ByteLines) {
  EXPECT_EQ(compiler::wgmma_repack_ld(1, 1), 128);
  EXPECT_EQ(compiler::wgmma_repack_ld(1023, 1), 1024);
  EXPECT_EQ(compiler::wgmma_repack_ld(1, 2), 64);
  EXPECT_EQ(compiler::wgmma_repack_ld(1023, 2), 1024);
  EXPECT_EQ(compiler::wgmma_repack_ld(4096, 2), 4096);
  EXPECT_EQ(compiler::wgmma_repack_ld(4097, 2), 4160);
  EXPECT_EQ(compiler::wgmma_repack_ld(4097, 4), 4128);
  EXPECT_EQ(compiler::wgmma_repack_ld(1023, 4), 1024);
}

// The swapped tf32 kernel's sector-staged stores (WgmmaPlan::sector_rows):
// where they apply, the staging sits after the stages; a warp's write and a
// warp's read each meet 32 banks; and for every alignment of a row (head:
// its columns before the first whole 32-byte sector) the drain's passes
// write each column once and touch BN / 8 sectors, one more when the row is
// off its sectors.
TEST(WgmmaPlan, SectorStagedStoresCoverRowsOnWholeSectorsWithoutConflicts) {
  const std::string tf32 =
      "dtype f32\ntile 256x128x32\nwarp 256x64\nwgmma tf32\ntma\nstages 4\nswizzle smem\n"
      "warp_specialize\npersistent\n";
  std::string diags;
  const auto p = plantest::plan_of_text(tf32, &diags);
  ASSERT_TRUE(p) << diags;
  const WgmmaPlan& w = *p->wgmma;
  ASSERT_TRUE(w.swapped);
  EXPECT_EQ(w.sector_rows, 64);
  EXPECT_EQ(w.sector_offset_bytes, 4 * (32768 + 16384));
  EXPECT_EQ(w.barrier_offset_bytes, w.sector_offset_bytes + 64 * 128 * 4);
  EXPECT_EQ(p->smem_bytes, 229440);
  const int bn = p->block_n;
  // Writes: consumer c's warp v4 (of 4) stores register 4 g + v of
  // instruction i at row 8 gg + v % 2 + 2 (lane % 4), column c * 64 + 16 v4
  // + lane / 4 + 64 i + 8 (v / 2).
  for (int c = 0; c < w.consumers(); ++c)
    for (int warp = 0; warp < 4; ++warp)
      for (int gg = 0; gg < w.sector_rows / 8; ++gg)
        for (int v = 0; v < 4; ++v) {
          std::set<int> banks;
          for (int lane = 0; lane < 32; ++lane) {
            const int row = 8 * gg + v % 2 + 2 * (lane % 4);
            const int col = c * w.wg_n + 16 * warp + lane / 4 + 8 * (v / 2);
            banks.insert(WgmmaPlan::sector_stage_offset(bn, row, col) / 4 % 32);
          }
          EXPECT_EQ(banks.size(), 32u) << "write: consumer " << c << " warp " << warp;
        }
  for (int head = 0; head < 8; ++head)
    for (int row = 0; row < w.sector_rows; ++row) {
      std::vector<int> written(size_t(bn), 0);
      std::set<int> sectors;
      for (int pass = 0; pass < bn / 32 + 1; ++pass) {
        std::set<int> banks;
        for (int lane = 0; lane < 32; ++lane) {
          const int col = WgmmaPlan::sector_drain_col(head, pass, lane);
          if (col < 0 || col >= bn) continue;
          ++written[size_t(col)];
          // Sector boundaries of the row lie at columns head + 8 k.
          sectors.insert((col - head + 8) / 8);
          // A pass's columns lie in its four sectors.
          EXPECT_EQ((col - head + 8) / 32, pass);
          banks.insert(WgmmaPlan::sector_stage_offset(bn, row, col) / 4 % 32);
        }
        EXPECT_EQ(int(banks.size()),
                  [&] {
                    int n = 0;
                    for (int lane = 0; lane < 32; ++lane) {
                      const int col = WgmmaPlan::sector_drain_col(head, pass, lane);
                      n += col >= 0 && col < bn;
                    }
                    return n;
                  }())
            << "read: head " << head << " row " << row << " pass " << pass;
      }
      for (int col = 0; col < bn; ++col) EXPECT_EQ(written[size_t(col)], 1);
      EXPECT_EQ(int(sectors.size()), bn / 8 + (head != 0 ? 1 : 0)) << "head " << head;
    }
  // Where they do not apply: a column-major C, pingpong, B column-major (not
  // swapped), f16.
  for (const std::string& other :
       {tf32 + "layout C col\n",
        std::string("dtype f32\ntile 256x64x32\nwarp 256x64\nwgmma tf32\ntma\nstages 4\n"
                    "swizzle smem\nwarp_specialize pingpong\npersistent\n"),
        tf32 + "layout B col\n",
        std::string("dtype f16\ntile 128x256x64\nwarp 64x256\nwgmma f16\ntma\nstages 4\n"
                    "swizzle smem\nwarp_specialize\npersistent\n")}) {
    const auto q = plantest::plan_of_text(other, &diags);
    ASSERT_TRUE(q) << other << diags;
    EXPECT_EQ(q->wgmma->sector_rows, 0) << other;
  }
}

}  // namespace
}  // namespace schedc
