// schedc explain's predictions on hand-worked cases: the seed articles'
// bank-conflict examples, occupancy limits and the roofline's arithmetic.
#include "compiler/explain.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "cli/pipeline.h"

using namespace schedc;
using compiler::Explanation;

namespace {

Explanation explain_text(const std::string& text, int registers = -1) {
  compiler::Target t;
  EXPECT_TRUE(compiler::target_for_arch("sm_90", t));
  std::ostringstream err;
  auto file = std::make_shared<dsl::SourceFile>("test.sched", text);
  std::optional<cli::Compiled> c = cli::compile_source(file, t, err);
  EXPECT_TRUE(c.has_value()) << err.str();
  if (!c) return {};
  return compiler::explain(c->plan, registers, c->schedule.shape);
}

const compiler::SharedAccess& access(const Explanation& e, const std::string& prefix) {
  for (const compiler::SharedAccess& s : e.shared)
    if (s.what.rfind(prefix, 0) == 0) return s;
  ADD_FAILURE() << "no shared access starting with '" << prefix << "'";
  static compiler::SharedAccess none;
  return none;
}

}  // namespace

TEST(Explain, RowMajorATileReadAsColumnsConflicts) {
  // sA[128][8]: the 16 threads along M of a warp read sA[row][k] with rows 8
  // apart -> 8-float row stride: 4 distinct rows share each bank.
  Explanation e = explain_text("tile 128x128x8\nthread 8x8\n");
  const compiler::SharedAccess& a = access(e, "load sA");
  EXPECT_GT(a.cost.degree(), 1.5) << a.cost.wavefronts << " / " << a.cost.ideal_wavefronts;
}

TEST(Explain, TransposedAIsConflictFree) {
  Explanation e = explain_text("tile 128x128x8\nthread 8x8\nvectorize 4\ntranspose A\npad A 4\n");
  EXPECT_DOUBLE_EQ(access(e, "load sA").cost.degree(), 1.0);
}

TEST(Explain, PaddingFixesTransposingStores) {
  // The transposing scalar stores of A write 4 k-rows of sA[8][128]: without
  // padding rows 128 floats apart fall into the same banks.
  Explanation plain = explain_text("tile 128x128x8\nthread 8x8\nvectorize 4\ntranspose A\n");
  Explanation padded =
      explain_text("tile 128x128x8\nthread 8x8\nvectorize 4\ntranspose A\npad A 4\n");
  EXPECT_GT(access(plain, "store sA").cost.degree(), 1.5);
  EXPECT_DOUBLE_EQ(access(padded, "store sA").cost.degree(), 1.0);
}

TEST(Explain, SwizzledLdmatrixIsConflictFreeAndUnswizzledIsNot) {
  const std::string base =
      "dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16 m16n8k16\nvectorize 8\nstages 3\n";
  Explanation swz = explain_text(base + "swizzle smem\n");
  EXPECT_DOUBLE_EQ(access(swz, "ldmatrix").cost.degree(), 1.0);
  EXPECT_DOUBLE_EQ(access(swz, "store sA").cost.degree(), 1.0);
  Explanation plain = explain_text(base);
  // Rows of 32 halfs = 64 bytes: rows r and r+2 share banks -> 4-way.
  EXPECT_GT(access(plain, "ldmatrix").cost.degree(), 1.5);
}

TEST(Explain, OccupancyNamesTheLimitingResource) {
  Explanation e = explain_text("tile 128x128x8\nthread 8x8\n", /*registers=*/128);
  // 128 registers x 256 threads = 32768 per block: 2 blocks in 65536.
  EXPECT_EQ(e.occupancy.blocks_per_sm, 2);
  EXPECT_EQ(e.occupancy.limited_by, "registers");
  Explanation few = explain_text("tile 128x128x8\nthread 8x8\n", /*registers=*/32);
  EXPECT_EQ(few.occupancy.blocks_per_sm, 8);
  EXPECT_EQ(few.occupancy.limited_by, "threads per SM");
}

TEST(Explain, ArithmeticIntensityOfTheBlockTile) {
  // 2 * 128 * 128 / ((128 + 128) * 4 bytes) = 32 FLOP/byte.
  Explanation e = explain_text("tile 128x128x8\nthread 8x8\n");
  EXPECT_DOUBLE_EQ(e.roofline.intensity_global, 32.0);
  EXPECT_LE(e.roofline.bound_tflops, e.roofline.peak_tflops);
}

TEST(Explain, NaiveKernelCoalescesBAndBroadcastsA) {
  Explanation e = explain_text("block 32x8\n");
  ASSERT_EQ(e.global.size(), 3u);
  EXPECT_EQ(e.global[0].what.rfind("load A", 0), 0u);
  EXPECT_EQ(e.global[0].requests, 8);  // 256 threads = 8 warps
  EXPECT_EQ(e.global[0].sectors, 8);   // one A element per warp (a warp is one row)
  EXPECT_EQ(e.global[1].sectors, 32);  // 32 consecutive floats of B per warp
  EXPECT_DOUBLE_EQ(e.global[1].efficiency(), 1.0);
  EXPECT_TRUE(e.shared.empty());
}

TEST(Explain, RegisterEstimatePredictsSpillsPastTheBlocksShare) {
  // 16x8 thread tiles: 128 accumulators + 24 fragment registers + ~24.
  // At 256 threads a thread may hold 255 registers: no spill.
  Explanation fits = explain_text("tile 256x128x8\nthread 16x8\n");
  EXPECT_EQ(fits.registers_estimate, 128 + 24 + 24);
  EXPECT_EQ(fits.registers_limit, 255);
  EXPECT_FALSE(fits.spill_predicted());
  // 256x256 of them is 512 threads: 65536 / 512 = 128 registers at most.
  Explanation spills = explain_text("tile 256x256x8\nthread 16x8\n");
  EXPECT_EQ(spills.registers_limit, 128);
  EXPECT_TRUE(spills.spill_predicted());
  bool noted = false;
  for (const std::string& n : spills.notes)
    noted = noted || n.find("expect ptxas to spill") != n.npos;
  EXPECT_TRUE(noted);
  // Tensor-core kernels carry no estimate.
  EXPECT_EQ(
      explain_text("dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16 m16n8k16\n").registers_estimate,
      -1);
}
