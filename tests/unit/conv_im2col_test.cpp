// TMA's im2col mode for A of the Hopper convolution kernel
// (compiler/conv_im2col.h) on the CPU:
//  - the copy engine's walk of the bounding box, from any output pixel,
//    visits the window origins of the GEMM's next rows in order, and images
//    past N (zeros) past M;
//  - one copy a k-tile (the tile's first pixel, the k-tile's tap and first
//    channel) then reads, for every A(m, kk) of the tile, the element
//    compiler::gemm_a_offset names, and a zero where it names none;
//  - which convolutions the path takes (im2col_error).
// On ragged, strided, dilated, rectangular and over-padded convolutions.
#include "compiler/conv_im2col.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/conv.h"
#include "tests/unit/conv_test_util.h"

namespace schedc {
namespace {

using compiler::Conv2d;
using testing::conv_of;

std::vector<Conv2d> convs() {
  return testing::copy_test_convs();
}

TEST(ConvIm2col, WalkVisitsTheGemmRowsInOrder) {
  for (const Conv2d& v : convs()) {
    SCOPED_TRACE(compiler::conv_text(v));
    const int64_t m = v.gemm_m();
    for (int64_t bm : {64, 128, 256})
      for (int64_t m0 = 0; m0 < m; m0 += bm) {
        const std::vector<compiler::PixelBase> walk = compiler::im2col_walk(v, m0, bm);
        ASSERT_EQ(int64_t(walk.size()), bm);
        for (int64_t j = 0; j < bm; ++j) {
          if (m0 + j >= m) {  // past M: an image past N, read as zeros
            EXPECT_GE(walk[size_t(j)].n, v.n) << "row " << m0 + j;
            continue;
          }
          const compiler::PixelBase want = compiler::pixel_base(v, m0 + j);
          EXPECT_EQ(walk[size_t(j)].n, want.n) << "row " << m0 + j;
          EXPECT_EQ(walk[size_t(j)].h0, want.h0) << "row " << m0 + j;
          EXPECT_EQ(walk[size_t(j)].w0, want.w0) << "row " << m0 + j;
        }
      }
  }
}

// One copy a k-tile, as the producer issues it: from the tile's first
// pixel, at the k-tile's tap (dh, dw) and first channel c0, BK channels.
TEST(ConvIm2col, OneCopyAKTileReadsWhatTheDefinitionReads) {
  const int64_t bm = 128, bk = 128;
  for (const Conv2d& v : convs()) {
    SCOPED_TRACE(compiler::conv_text(v));
    ASSERT_EQ(compiler::im2col_error(compiler::im2col_geometry(v), int(bk), int(bk)), "");
    const std::vector<compiler::ConvTap> taps = compiler::offset_table(v);
    const int64_t m = v.gemm_m(), k = v.gemm_k();
    int checked = 0;
    for (int64_t m0 = 0; m0 < m; m0 += bm) {
      const std::vector<compiler::PixelBase> walk = compiler::im2col_walk(v, m0, bm);
      for (int64_t k0 = 0; k0 < k; k0 += bk) {
        const int64_t tap = k0 / v.c, c0 = k0 % v.c;
        const compiler::ConvTap& t = taps[size_t(tap)];
        for (int64_t j = 0; j < bm && m0 + j < m; ++j)
          for (int64_t i = 0; i < bk; i += 17) {
            const compiler::PixelBase& p = walk[size_t(j)];
            const int64_t h = p.h0 + t.dh, w = p.w0 + t.dw;
            const bool inside = h >= 0 && h < v.h && w >= 0 && w < v.w;
            const std::optional<int64_t> want = compiler::gemm_a_offset(v, taps, m0 + j, k0 + i);
            ASSERT_EQ(inside, want.has_value()) << "A(" << m0 + j << ", " << k0 + i << ")";
            if (inside) {
              EXPECT_EQ(compiler::input_offset(v, p.n, c0 + i, h, w), *want)
                  << "A(" << m0 + j << ", " << k0 + i << ")";
            }
            ++checked;
          }
      }
    }
    EXPECT_GT(checked, 0);
  }
}

TEST(ConvIm2col, TakesWhatOneCopyAKTileCanLoad) {
  // panel: a panel's channels (128 bytes) where a k-tile holds several; 0: BK, one.
  auto why = [](const Conv2d& v, int bk, int panel = 0) {
    return compiler::im2col_error(compiler::im2col_geometry(v), bk, panel > 0 ? panel : bk);
  };
  EXPECT_EQ(why(conv_of(8, 28, 28, 128, 3, 3, 1, 1), 128), "");
  EXPECT_EQ(why(conv_of(8, 7, 7, 512, 3, 3, 2, 1), 128), "");
  EXPECT_EQ(why(conv_of(8, 56, 56, 64, 3, 3, 1, 1), 64), "");  // f16: BK 64
  // C a multiple of BK / 2 only: two copies a k-tile (s8's 64-channel layers).
  EXPECT_EQ(why(conv_of(8, 56, 56, 64, 3, 3, 1, 1), 128), "");
  EXPECT_EQ(why(conv_of(8, 56, 56, 192, 3, 3, 1, 1), 128), "");
  EXPECT_NE(why(conv_of(8, 56, 56, 48, 3, 3, 1, 1), 128).find("not a multiple of BK / 2 = 64"),
            std::string::npos);
  EXPECT_NE(why(conv_of(8, 56, 56, 16, 3, 3, 1, 1), 64).find("not a multiple of BK / 2 = 32"),
            std::string::npos);
  Conv2d nchw32 = conv_of(8, 28, 28, 128, 3, 3, 1, 1);
  nchw32.layout = compiler::ConvLayout::nchw32;
  EXPECT_NE(why(nchw32, 128).find("NCHW32"), std::string::npos);
  EXPECT_NE(why(conv_of(1, 40, 40, 128, 1, 1, 9, 0), 128).find("stride past 8"), std::string::npos);
  EXPECT_EQ(why(conv_of(1, 40, 40, 128, 1, 1, 8, 0), 128), "");
  EXPECT_NE(why(conv_of(1, 40, 40, 128, 3, 3, 1, 129), 128).find("corner -129"), std::string::npos);
  EXPECT_EQ(why(conv_of(1, 40, 40, 128, 3, 3, 1, 128), 128), "");
  // upper = pad - (R - 1)·dil = 0 - 2·65 = -130
  EXPECT_NE(why(conv_of(1, 300, 300, 128, 3, 3, 1, 0, 65), 128).find("corner -130"),
            std::string::npos);
  // k-tiles of two or four 128-byte panels: a copy a panel, C a multiple of one.
  EXPECT_EQ(why(conv_of(8, 7, 7, 512, 3, 3, 1, 1), 256, 128), "");
  EXPECT_EQ(why(conv_of(8, 14, 14, 384, 3, 3, 1, 1), 256, 128), "");  // a tap mid-k-tile
  EXPECT_EQ(why(conv_of(8, 14, 14, 128, 3, 3, 1, 1), 512, 128), "");
  EXPECT_EQ(why(conv_of(8, 14, 14, 64, 3, 3, 1, 1), 128, 64), "");  // f16: BK 128
  EXPECT_NE(why(conv_of(8, 56, 56, 64, 3, 3, 1, 1), 256, 128)
                .find("C = 64 is not a multiple of 128, the channels of one of BK = 256's"),
            std::string::npos);
  EXPECT_NE(why(nchw32, 256, 128).find("NCHW32"), std::string::npos);
}

TEST(ConvIm2col, CopiesAKTileInOneOrTwo) {
  auto copies = [](const Conv2d& v, int bk, int panel = 0) {
    return compiler::im2col_copies(compiler::im2col_geometry(v), bk, panel > 0 ? panel : bk);
  };
  EXPECT_EQ(copies(conv_of(8, 28, 28, 128, 3, 3, 1, 1), 128), 1);
  EXPECT_EQ(copies(conv_of(8, 28, 28, 256, 3, 3, 2, 1), 128), 1);
  EXPECT_EQ(copies(conv_of(1, 56, 56, 64, 3, 3, 1, 1), 128), 2);
  EXPECT_EQ(copies(conv_of(1, 56, 56, 320, 1, 1, 1, 0), 128), 2);
  EXPECT_EQ(copies(conv_of(1, 56, 56, 32, 3, 3, 1, 1), 64), 2);  // f16: BK 64, halves of 32
  EXPECT_EQ(copies(conv_of(1, 56, 56, 48, 3, 3, 1, 1), 128), 0);
  Conv2d nchw32 = conv_of(8, 28, 28, 64, 3, 3, 1, 1);
  nchw32.layout = compiler::ConvLayout::nchw32;
  EXPECT_EQ(copies(nchw32, 128), 0);
  EXPECT_EQ(copies(conv_of(1, 40, 40, 64, 1, 1, 9, 0), 128), 0);  // a stride past 8
  // Several panels a k-tile: one copy a panel, or none (no 64-byte halves then).
  EXPECT_EQ(copies(conv_of(8, 7, 7, 512, 3, 3, 1, 1), 256, 128), 1);
  EXPECT_EQ(copies(conv_of(8, 7, 7, 128, 3, 3, 1, 1), 256, 128), 1);
  EXPECT_EQ(copies(conv_of(8, 56, 56, 64, 3, 3, 1, 1), 256, 128), 0);
}

// A k-tile of several 128-byte panels, as the producer copies it in im2col
// mode (codegen/blocks_wgmma_conv.cpp, emit_im2col_producer): the k-tile's
// tap and first channel walk BK channels on a k-tile without a division
// (past C, maybe more than once); panel q's copy is the next panel's
// channels of the tap, the next tap past C, and past K channels past C
// (zeros). Every element of every k-tile is the definition's A(m, kk), from
// the first k-tile or from a split's first (k_first).
TEST(ConvIm2col, OneCopyAPanelReadsWhatTheDefinitionReads) {
  const int64_t bm = 64;
  for (const auto& [bk, panel] : {std::pair<int64_t, int64_t>{256, 128}, {512, 128}, {128, 64}})
    for (const Conv2d& v : {conv_of(2, 7, 7, 512, 3, 3, 1, 1), conv_of(1, 9, 5, 384, 3, 3, 2, 1),
                            conv_of(3, 5, 7, 128, 3, 3, 1, 1), conv_of(1, 6, 6, 640, 1, 1, 1, 0),
                            conv_of(2, 5, 5, 64, 3, 3, 1, 1)}) {
      if (v.c % panel != 0) continue;
      SCOPED_TRACE(compiler::conv_text(v) + ", BK " + std::to_string(bk));
      ASSERT_EQ(compiler::im2col_error(compiler::im2col_geometry(v), int(bk), int(panel)), "");
      const std::vector<compiler::ConvTap> taps = compiler::offset_table(v);
      const int64_t m = v.gemm_m(), k = v.gemm_k(), k_tiles = (k + bk - 1) / bk;
      int checked = 0;
      for (int64_t k_first : {int64_t(0), k_tiles / 2}) {
        const int64_t kk = k_first * bk;  // as the producer starts a tile (a split's slice)
        int64_t tap = kk / v.c, ch = kk - tap * v.c;
        for (int64_t kt = k_first; kt < k_tiles; ++kt) {
          int64_t cq = ch, tq = tap;
          for (int64_t q = 0; q < bk / panel; ++q) {
            if (q > 0) {
              cq += panel;
              if (cq == v.c) cq = 0, ++tq;
            }
            const bool in_k = tq < int64_t(taps.size());
            const compiler::ConvTap& t = taps[size_t(in_k ? tq : 0)];
            for (int64_t m0 = 0; m0 < m; m0 += bm) {
              const std::vector<compiler::PixelBase> walk = compiler::im2col_walk(v, m0, bm);
              for (int64_t j = 0; j < bm && m0 + j < m; ++j)
                for (int64_t i = 0; i < panel; i += 13) {
                  const int64_t col = kt * bk + q * panel + i;
                  const std::optional<int64_t> want =
                      col < k ? compiler::gemm_a_offset(v, taps, m0 + j, col) : std::nullopt;
                  const compiler::PixelBase& p = walk[size_t(j)];
                  const int64_t h = p.h0 + t.dh, w = p.w0 + t.dw;
                  const bool inside = in_k && h >= 0 && h < v.h && w >= 0 && w < v.w;
                  ASSERT_EQ(inside, want.has_value()) << "A(" << m0 + j << ", " << col << ")";
                  if (inside) {
                    EXPECT_EQ(compiler::input_offset(v, p.n, cq + i, h, w), *want)
                        << "A(" << m0 + j << ", " << col << ")";
                  }
                  ++checked;
                }
            }
          }
          ch += bk;  // the next k-tile
          while (ch >= v.c) ch -= v.c, ++tap;
        }
      }
      EXPECT_GT(checked, 0);
    }
}

}  // namespace
}  // namespace schedc
