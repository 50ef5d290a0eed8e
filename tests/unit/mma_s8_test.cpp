// mma s8 (mma.sync m16n8k32) on the CPU: ldmatrix without .trans, simulated
// byte by byte on the planned stages, gives every lane the A and B bytes
// PTX's m16n8k32 layout assigns it (mma_s8_a_coord / mma_s8_b_coord, which
// cover each fragment once); the layouts that are not k-major are read from
// the runtime's transposed scratch.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/lower_mma.h"
#include "plan_test_util.h"

using namespace schedc;
using namespace schedc::compiler;

namespace {

KernelPlan s8_plan(const std::string& layouts, const std::string& extra = "") {
  std::string diags;
  auto p = plantest::plan_of_text(
      "dtype s8\n" + layouts + "tile 128x128x64\nwarp 64x64\nmma s8\nstages 3\n" + extra, &diags);
  EXPECT_TRUE(p) << diags;
  return *p;
}

// The (row, col) of the stage each byte offset holds, over one stage.
std::map<long, std::pair<int, int>> stage_bytes(const SmemTile& t) {
  std::map<long, std::pair<int, int>> at;
  for (int r = 0; r < t.rows; ++r)
    for (int c = 0; c < t.cols; ++c) at[long(t.offset(r, c)) * t.elem_bytes] = {r, c};
  return at;
}

// ldmatrix.x<count> (no .trans) of 8-row matrices: lane t receives, in
// register j, bytes 4 (t % 4) .. + 3 of the 16-byte row whose address lane
// 8 j + t / 4 gave.
long ldmatrix_byte(const long* addr, int lane, int j, int byte) {
  return addr[8 * j + lane / 4] + 4 * (lane % 4) + byte;
}

}  // namespace

TEST(MmaS8, KMajorOperandsByLdmatrixHoldPtxBytes) {
  for (const std::string& extra : {std::string(""), std::string("swizzle smem\n")}) {
    const KernelPlan p = s8_plan("layout B col\n", extra);
    const MmaPlan& m = *p.mma;
    ASSERT_TRUE(m.ldmatrix_a && m.ldmatrix_b && !m.ldmatrix_a_trans && !m.ldmatrix_b_trans);
    ASSERT_FALSE(m.a_transposed || m.b_transposed);
    ASSERT_EQ(m.regs_a, 4);
    ASSERT_EQ(m.regs_b, 2);
    const auto a_at = stage_bytes(m.a), b_at = stage_bytes(m.b);
    const int v = m.a.chunk_elems();
    ASSERT_EQ(v, 16);
    for (int kk = 0; kk < m.k_steps; ++kk) {
      // A: one ldmatrix.x4 of fragment (0, kk); its stage is (m, k).
      long addr[32];
      for (int lane = 0; lane < 32; ++lane) {
        int fm = 0, fk = 0;
        ldmatrix_a_lane(false, lane, 4, v, fm, fk);
        addr[lane] = long(m.a_offset(fm, kk * 32 + fk));
        ASSERT_EQ(addr[lane] % 16, 0);
      }
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < 4; ++j)
          for (int byte = 0; byte < 4; ++byte) {
            int wm = 0, wk = 0;
            mma_s8_a_coord(lane, j, byte, wm, wk);
            const auto got = a_at.at(ldmatrix_byte(addr, lane, j, byte));
            EXPECT_EQ(got, std::make_pair(wm, kk * 32 + wk)) << "A reg " << j << " lane " << lane;
          }
      // B (column-major: n rows of k): ldmatrix of b_frags_per_ldmatrix fragments.
      const int per = m.b_frags_per_ldmatrix, kb = m.regs_b, count = per * kb;
      for (int lane = 0; lane < 8 * count; ++lane) {
        int fk = 0, fn = 0;
        ldmatrix_b_lane(true, lane, count, kb, v, fk, fn);
        addr[lane] = long(m.b_offset(kk * 32 + fk, fn));
      }
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < count; ++j)
          for (int byte = 0; byte < 4; ++byte) {
            int wk = 0, wn = 0;
            mma_s8_b_coord(lane, j % kb, byte, wk, wn);
            const auto got = b_at.at(ldmatrix_byte(addr, lane, j, byte));
            // B's stage is (n, k); fragment j / kb is n 8 (j / kb) ..
            EXPECT_EQ(got, std::make_pair((j / kb) * 8 + wn, kk * 32 + wk))
                << "B reg " << j << " lane " << lane;
          }
    }
  }
}

TEST(MmaS8, NonKMajorLayoutsAreTransposedByTheRuntime) {
  // B row-major: transposed into column-major scratch, its stage n rows of k.
  const KernelPlan nn = s8_plan("");
  EXPECT_TRUE(nn.mma->b_transposed && nn.mma->b_col && !nn.mma->a_transposed);
  EXPECT_TRUE(nn.mma->ldmatrix_b && !nn.mma->ldmatrix_b_trans);
  EXPECT_TRUE(nn.mma->ldmatrix_a && !nn.mma->ldmatrix_a_trans);
  // A column-major: transposed into row-major scratch; B column-major as it lies.
  const KernelPlan tt = s8_plan("layout A col\nlayout B col\n");
  EXPECT_TRUE(tt.mma->a_transposed && !tt.mma->a_col && !tt.mma->b_transposed);
  EXPECT_TRUE(tt.mma->ldmatrix_a && !tt.mma->ldmatrix_a_trans);
  // Both: A row-major, B column-major stages.
  const KernelPlan tn = s8_plan("layout A col\n");
  EXPECT_TRUE(tn.mma->a_transposed && tn.mma->b_transposed && !tn.mma->a_col && tn.mma->b_col);
  // The other types keep their stages as the operands lie.
  std::string diags;
  auto f16 =
      plantest::plan_of_text("dtype f16\ntile 128x128x32\nwarp 64x64\nmma f16\nstages 3\n", &diags);
  ASSERT_TRUE(f16) << diags;
  EXPECT_FALSE(f16->mma->a_transposed || f16->mma->b_transposed || f16->mma->b_col);
  EXPECT_TRUE(f16->mma->ldmatrix_b_trans);
}

TEST(MmaS8, PtxCoordinatesCoverEachFragmentOnce) {
  // A 16 x 32: 32 lanes x 4 registers x 4 bytes, each (m, k) once; a
  // register's bytes are 4 consecutive k of one m, low k low.
  std::vector<int> a(16 * 32, 0), b(32 * 8, 0);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i)
      for (int byte = 0; byte < 4; ++byte) {
        int mm = 0, kk = 0, m0 = 0, k0 = 0;
        mma_s8_a_coord(lane, i, byte, mm, kk);
        mma_s8_a_coord(lane, i, 0, m0, k0);
        ASSERT_TRUE(mm >= 0 && mm < 16 && kk >= 0 && kk < 32);
        EXPECT_EQ(mm, m0);
        EXPECT_EQ(kk, k0 + byte);
        ++a[size_t(mm * 32 + kk)];
      }
    for (int i = 0; i < 2; ++i)
      for (int byte = 0; byte < 4; ++byte) {
        int kk = 0, nn_ = 0;
        mma_s8_b_coord(lane, i, byte, kk, nn_);
        ASSERT_TRUE(kk >= 0 && kk < 32 && nn_ >= 0 && nn_ < 8);
        ++b[size_t(kk * 8 + nn_)];
      }
  }
  for (int h : a) EXPECT_EQ(h, 1);
  for (int h : b) EXPECT_EQ(h, 1);
}
