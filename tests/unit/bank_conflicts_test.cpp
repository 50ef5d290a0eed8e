// Hand-worked cases for the bank model (the seed articles' examples).
#include "compiler/bank_conflicts.h"

#include <gtest/gtest.h>

using namespace schedc::compiler;

namespace {
WarpRequest request(int width, auto addr_of_lane) {
  WarpRequest r;
  r.width_bytes = width;
  for (int lane = 0; lane < 32; ++lane) r.byte_addr[size_t(lane)] = addr_of_lane(lane);
  return r;
}
}  // namespace

TEST(BankModel, ConsecutiveWordsAreConflictFree) {
  BankCost c = bank_cost(request(4, [](int l) { return 4 * l; }));
  EXPECT_EQ(c.wavefronts, 1);
  EXPECT_EQ(c.degree(), 1.0);
}

TEST(BankModel, SameWordIsBroadcast) {
  EXPECT_EQ(bank_cost(request(4, [](int) { return 64; })).wavefronts, 1);
}

TEST(BankModel, RowMajorTileReadAsColumnConflicts) {
  // As[BM][BK] with BK = 8 floats, 32 threads each read As[lane][k]: a row
  // stride of 32 bytes puts every 4th lane in the same bank -> 8-way.
  BankCost c = bank_cost(request(4, [](int l) { return l * 8 * 4; }));
  EXPECT_EQ(c.wavefronts, 8);
  // A 128-float row stride (no padding): all 32 lanes in bank 0 -> 32-way.
  EXPECT_EQ(bank_cost(request(4, [](int l) { return l * 128 * 4; })).wavefronts, 32);
  // Padded by one float: stride 129 words -> every lane its own bank.
  EXPECT_EQ(bank_cost(request(4, [](int l) { return l * 129 * 4; })).wavefronts, 1);
}

TEST(BankModel, TransposedTileReadAsFloat4IsConflictFree) {
  // As[BK][BM] (A transposed): a warp reads 8 distinct float4 of one k-row,
  // lanes grouped 4 by 4 on the same float4 (broadcast) -> 1 wavefront/phase.
  BankCost c = bank_cost(request(16, [](int l) { return (l / 4) * 16; }));
  EXPECT_EQ(c.wavefronts, 4);
  EXPECT_EQ(c.degree(), 1.0);
}

TEST(BankModel, Float4StoresWithRowStride128Conflict) {
  // Each quarter-warp stores float4 at rows 0..7 of a 128-float-wide array:
  // all 8 land on banks 0-3 -> 8 wavefronts per phase.
  BankCost c = bank_cost(request(16, [](int l) { return (l % 8) * 128 * 4; }));
  EXPECT_EQ(c.wavefronts, 32);
  EXPECT_EQ(c.degree(), 8.0);
  // Padding the row by 4 floats (16 bytes) shifts each row by 4 banks.
  BankCost padded = bank_cost(request(16, [](int l) { return (l % 8) * 132 * 4; }));
  EXPECT_EQ(padded.wavefronts, 4);
}

TEST(BankModel, LdmatrixRowsWithXorSwizzleAreConflictFree) {
  // ldmatrix: 8 rows of 16 bytes per phase, rows 64 bytes apart (32 halfs).
  // Unswizzled, rows r and r+2 share banks: 4 rows on banks 0-3, 4 on
  // banks 16-19 -> 4-way, 4 wavefronts in each of the 4 phases.
  BankCost plain = bank_cost(request(16, [](int l) { return (l % 8) * 64; }));
  EXPECT_EQ(plain.wavefronts, 16);
  EXPECT_EQ(plain.degree(), 4.0);
  // Row-wide layout 128 bytes per row, 16-byte chunk index XOR (row % 8).
  BankCost swizzled = bank_cost(request(16, [](int l) {
    int row = l % 8, chunk = 0;
    return row * 128 + ((chunk ^ row) * 16);
  }));
  EXPECT_EQ(swizzled.wavefronts, 4);
  BankCost unswizzled = bank_cost(request(16, [](int l) { return (l % 8) * 128; }));
  EXPECT_EQ(unswizzled.wavefronts, 4 * 8);
}

TEST(BankModel, InactiveLanesCostNothing) {
  WarpRequest r;
  r.width_bytes = 4;
  r.byte_addr[0] = 0;
  r.byte_addr[1] = 128;
  BankCost c = bank_cost(r);
  EXPECT_EQ(c.wavefronts, 2);
  EXPECT_EQ(c.ideal_wavefronts, 1);
}
