// The static model's order of a space's candidates (cli/space_walk.h):
// predicted register spills rank last, whatever their roofline bound.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/space_walk.h"

using namespace schedc;

TEST(SpaceRank, PredictedSpillsRankLastDespiteAHigherBound) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  // 256x256 tiles move less global data per FLOP (the higher bound) but need
  // 512 threads of 16x8 tiles: ~176 registers each, 128 allowed.
  std::ostringstream err;
  std::optional<cli::SpaceWalk> walk =
      cli::walk_space("s.sched", "tile {256,128}x256x8\nthread 16x8\nvectorize 4\n", t, err);
  ASSERT_TRUE(walk.has_value()) << err.str();
  ASSERT_EQ(walk->kept.size(), 2u) << err.str();
  EXPECT_EQ(walk->kept[0].choices, "{128}");
  EXPECT_FALSE(walk->kept[0].model.spill_predicted());
  EXPECT_TRUE(walk->kept[1].model.spill_predicted());
  EXPECT_GT(walk->kept[1].model.roofline.intensity_global,
            walk->kept[0].model.roofline.intensity_global);
}
