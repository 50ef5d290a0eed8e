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

// `mma s8 m8n8k16`: the four quarters (compiler::s8_m8n8k16_quarter), each an m8n8k16 on
// PTX's m8n8k16 layout (lane g, t: A row g at k 4 t + byte, B column g at the same k, D row g
// at columns 2 t, 2 t + 1), sum to the m16n8k32 product on the step's registers (PTX's
// m16n8k32 layout: mma_s8_a_coord, mma_s8_b_coord; D row g + 8 (i / 2), column 2 t + i % 2).
TEST(MmaS8, M8n8k16QuartersSumToTheM16n8k32Step) {
  signed char a[16][32], b[32][8];
  unsigned seed = 7;
  auto next = [&] { return static_cast<signed char>((seed = seed * 1103515245u + 12345u) >> 24); };
  for (auto& row : a)
    for (signed char& x : row) x = next();
  for (auto& row : b)
    for (signed char& x : row) x = next();
  // Each lane's registers, byte by byte, as the step's loads leave them.
  signed char ra[32][4][4], rb[32][2][4];
  for (int lane = 0; lane < 32; ++lane)
    for (int byte = 0; byte < 4; ++byte) {
      for (int i = 0; i < 4; ++i) {
        int m = 0, k = 0;
        mma_s8_a_coord(lane, i, byte, m, k);
        ra[lane][i][byte] = a[m][k];
      }
      for (int i = 0; i < 2; ++i) {
        int k = 0, n = 0;
        mma_s8_b_coord(lane, i, byte, k, n);
        rb[lane][i][byte] = b[k][n];
      }
    }
  int d[32][4] = {};
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 2; ++q) {
      const S8Quarter r = s8_m8n8k16_quarter(h, q);
      // The 8x8x16 operands this m8n8k16 sees, then its product into each lane's D.
      int a8[8][16], b8[16][8];
      for (int lane = 0; lane < 32; ++lane)
        for (int byte = 0; byte < 4; ++byte) {
          a8[lane / 4][4 * (lane % 4) + byte] = ra[lane][r.a][byte];
          b8[4 * (lane % 4) + byte][lane / 4] = rb[lane][r.b][byte];
        }
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 2; ++i)
          for (int k = 0; k < 16; ++k)
            d[lane][r.d + i] += a8[lane / 4][k] * b8[k][2 * (lane % 4) + i];
    }
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const int row = lane / 4 + 8 * (i / 2), col = 2 * (lane % 4) + i % 2;
      int want = 0;
      for (int k = 0; k < 32; ++k) want += a[row][k] * b[k][col];
      EXPECT_EQ(d[lane][i], want) << "lane " << lane << " D register " << i;
    }
  // A quarter mapping off by one register reads other rows or k: the test can fail.
  EXPECT_NE(s8_m8n8k16_quarter(1, 0).a, s8_m8n8k16_quarter(0, 1).a);
}

// The schedule's `mma s8 m8n8k16` keeps m16n8k32's plan (fragments, k-steps, ldmatrix) and
// marks its steps as four m8n8k16 (tests/lit/emit/mma_s8.test: the emitted helper).
TEST(MmaS8, M8n8k16KeepsTheM16n8k32Plan) {
  std::string diags;
  auto p = plantest::plan_of_text(
      "dtype s8\nlayout B col\ntile 128x128x64\nwarp 64x64\nmma s8 m8n8k16\nstages 3\n", &diags);
  ASSERT_TRUE(p) << diags;
  const MmaPlan& m = *p->mma;
  EXPECT_TRUE(m.s8_m8n8k16);
  EXPECT_EQ(m.inst_m, 16);
  EXPECT_EQ(m.inst_n, 8);
  EXPECT_EQ(m.inst_k, 32);
  EXPECT_EQ(m.k_steps, 2);
  EXPECT_EQ(m.regs_a, 4);
  EXPECT_EQ(m.regs_b, 2);
  EXPECT_FALSE(s8_plan("layout B col\n").mma->s8_m8n8k16);
}
