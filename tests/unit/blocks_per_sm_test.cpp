// `blocks_per_sm N` (compiler/target.h register_pool, compiler/lower_wgmma.cpp,
// compiler/resources.cpp): the register pool a warp-specialized block owns,
// the consumers' setmaxnreg share of it, and the blocks an SM check reports.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "compiler/analyze.h"
#include "compiler/lower.h"
#include "plan_test_util.h"

namespace schedc {
namespace {

using compiler::KernelPlan;

// A 64x128 f16 tile, one consumer warpgroup beside the producer (256 threads).
const std::string kTile =
    "dtype f16\ntile 64x128x64\nwarp 64x128\nwgmma f16\ntma\nstages 3\nswizzle smem\n"
    "warp_specialize\npersistent\n";

// blocks_per_sm N: each block's pool is the SM's registers / N, and the
// consumers' share comes out of that pool, so N blocks' setmaxnreg never ask
// for more than the SM holds.
TEST(BlocksPerSm, DividesTheRegisterPool) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  EXPECT_EQ(t.register_pool(256, 2), 128 * 256);
  EXPECT_EQ(t.register_pool(384, 2), 80 * 384);
  EXPECT_EQ(t.register_pool(256, 1), t.register_pool(256));
  std::optional<KernelPlan> one = plantest::plan_of_text(kTile);
  std::optional<KernelPlan> two = plantest::plan_of_text(kTile + "blocks_per_sm 2\n");
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->wgmma->consumer_regs, 240);
  EXPECT_EQ(two->wgmma->consumer_regs, (128 * 256 - 40 * 128) / 128);  // 216
  EXPECT_LE(2 * (two->wgmma->producer_regs + two->wgmma->consumer_regs) * 128, t.regs_per_sm);
  EXPECT_EQ(compiler::static_resources(two->schedule, two->target).blocks_per_sm, 2);
  EXPECT_EQ(compiler::static_resources(one->schedule, one->target).blocks_per_sm, 1);
}

}  // namespace
}  // namespace schedc
