// split_k's plan on the CPU (compiler/wgmma_plan.h, wgmma_split_recv_bytes;
// codegen/blocks_wgmma_split_k.cpp): where the CTAs receive the other CTAs'
// partial sums in shared memory of its own, and that `schedc check`'s
// resources count the same bytes as the plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "compiler/analyze.h"
#include "compiler/lower_wgmma.h"
#include "plan_test_util.h"

namespace schedc {
namespace {

using compiler::KernelPlan;
using compiler::WgmmaPlan;

// split_k: each part's owner receives the others' sums of it in an area of
// its own where that fits beside the stages (and beside blocks_per_sm's
// share of the SM), else they wait in the others' stages; check's resources
// count what the plan has.
TEST(SplitKPlan, ReceivesTheSumsWhereTheyFit) {
  const std::string conv =
      "conv 1x14x14x256 filter 256x3x3 stride 1 pad 1\ndtype s8\nwgmma s8\ntma\nswizzle "
      "smem\nwarp_specialize\n";
  const std::string gemm = "dtype f16\nwgmma f16\ntma\nswizzle smem\n";
  struct Case {
    std::string text;
    int recv;  // the receive area's bytes, 0: pulled
  } cases[] = {
      // A part is a consumer warp's sums (these epilogues store from each warp's registers):
      // 64x32 has 4 parts of 2 KB, a CTA owns at most 2 (a split of 2), an mbarrier each.
      {conv + "tile 64x32x128\nwarp 64x32\nstages 16\nsplit_k 3\n", 16 + 2 * 2 * 2048},
      // 64x16: a warp's part would be 1 KB, under kSplitMinWarpPartBytes: one part, CTA 0's.
      {conv + "tile 64x16x128\nwarp 64x16\nstages 16\nsplit_k 4\n", 16 + 3 * 4096},
      // 16 stages of 12 KB and 2 x 5 x 2 KB of sums: 217360 bytes, under 227 KB.
      {conv + "tile 64x32x128\nwarp 64x32\nstages 16\nsplit_k 6\n", 16 + 2 * 5 * 2048},
      // Two blocks an SM of 8 stages fit 2 x (98432 + 12 KB + 1 KB), not with 28 KB.
      {conv + "tile 64x32x128\nwarp 64x32\nstages 8\nblocks_per_sm 2\nsplit_k 4\n",
       16 + 2 * 3 * 2048},
      {conv + "tile 64x32x128\nwarp 64x32\nstages 8\nblocks_per_sm 2\nsplit_k 8\n", 0},
      {conv + "tile 64x32x128\nwarp 64x32\nstages 16\n", 0},  // no split
      // Two warpgroups of 4 parts each (8 KB): a CTA receives 4 parts' sums from each other
      // CTA (32 KB), where a CTA 0 summing the whole tile would take 64 KB.
      {conv + "tile 128x128x128\nwarp 64x128\nstages 5\nsplit_k 2\n", 32 + 4 * 8192},
      {conv + "tile 128x128x128\nwarp 64x128\nstages 5\nsplit_k 3\n", 32 + 4 * 2 * 8192},
      // 4 x 3 x 8 KB of sums beside 6 stages of 32 KB: over 227 KB, pulled.
      {conv + "tile 128x128x128\nwarp 64x128\nstages 6\nsplit_k 4\n", 0},
      {conv + "tile 128x128x128\nwarp 64x64\nstages 5\nsplit_k 2\n", 64 + 8 * 4096},
      // tma_store: the warpgroup stages C together, so a part is a warpgroup's (16 KB of f32).
      {gemm + "tile 128x64x64\nwarp 64x64\nstages 3\ntma_store\nsplit_k 3\n", 16 + 2 * 16384},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    std::string diags;
    std::optional<KernelPlan> p = plantest::plan_of_text(c.text, &diags);
    ASSERT_TRUE(p) << diags;
    const WgmmaPlan& w = *p->wgmma;
    const int barriers_end = w.barrier_offset_bytes + 16 * w.stages;
    EXPECT_EQ(w.split_push(), c.recv > 0);
    EXPECT_EQ(p->smem_bytes, barriers_end + c.recv);  // barriers_end is 16-byte aligned here
    EXPECT_EQ(w.split_recv_offset_bytes, c.recv > 0 ? barriers_end : 0);
    EXPECT_LE(p->smem_bytes, compiler::kWgmmaSmemLimit);
    const compiler::Resources r = compiler::static_resources(p->schedule, p->target);
    EXPECT_EQ(r.split_recv_bytes, c.recv);
    EXPECT_EQ(r.smem_bytes, p->smem_bytes);
    EXPECT_GE(r.blocks_per_sm, std::max(1, p->schedule.blocks_per_sm));
  }
}

}  // namespace
}  // namespace schedc
