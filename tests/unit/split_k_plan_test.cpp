// split_k's plan on the CPU (compiler/wgmma_plan.h, wgmma_split_recv_bytes;
// codegen/blocks_wgmma_split_k.cpp): where CTA 0 receives the other CTAs'
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

// split_k: CTA 0 receives the others' sums in an area of its own where it
// fits beside the stages (and beside blocks_per_sm's share of the SM), else
// they wait in the others' stages; check's resources count what the plan has.
TEST(SplitKPlan, ReceivesTheSumsWhereTheyFit) {
  const std::string conv =
      "conv 1x14x14x256 filter 256x3x3 stride 1 pad 1\ndtype s8\nwgmma s8\ntma\nswizzle "
      "smem\nwarp_specialize\n";
  struct Case {
    const char* rest;
    int recv;  // the receive area's bytes, 0: pulled
  } cases[] = {
      // 16 stages of 12 KB and 2 x 8 KB of sums: 213264 bytes, under 227 KB.
      {"tile 64x32x128\nwarp 64x32\nstages 16\nsplit_k 3\n", 16 + 2 * 64 * 32 * 4},
      {"tile 64x16x128\nwarp 64x16\nstages 16\nsplit_k 4\n", 16 + 3 * 64 * 16 * 4},
      // 5 x 8 KB more than 16 stages of 12 KB leave room for: pulled.
      {"tile 64x32x128\nwarp 64x32\nstages 16\nsplit_k 6\n", 0},
      // Two blocks an SM of 8 stages fit 2 x (98432 + 8 KB + 1 KB), not with 24 KB.
      {"tile 64x32x128\nwarp 64x32\nstages 8\nblocks_per_sm 2\nsplit_k 2\n", 16 + 64 * 32 * 4},
      {"tile 64x32x128\nwarp 64x32\nstages 8\nblocks_per_sm 2\nsplit_k 4\n", 0},
      {"tile 64x32x128\nwarp 64x32\nstages 16\n", 0},  // no split
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.rest);
    std::string diags;
    std::optional<KernelPlan> p = plantest::plan_of_text(conv + c.rest, &diags);
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
