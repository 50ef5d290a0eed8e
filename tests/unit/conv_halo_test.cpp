// The input copied once a tile (compiler/conv_halo.h) on the CPU, on ragged,
// strided, dilated, rectangular and over-padded convolutions and tiles of
// 64 to 256 rows, whole images and bands:
//  - every output pixel is exactly one valid virtual row of one tile;
//  - for every valid row and every tap, the phase-image row its window reads
//    (the row plus the tap's shift, inside the row's own image block) holds
//    the input element the convolution reads there: the same (n, h, w),
//    outside the input exactly where the padding is (TMA's zeros);
//  - every window, junk rows' too, stays inside a panel's region;
//  - which convolutions the copy takes (halo_error);
//  - `halo only`: A's shared memory is the file's convolution's phase images.
#include "compiler/conv_halo.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/pipeline.h"
#include "compiler/analyze.h"
#include "compiler/conv.h"
#include "dsl/source.h"
#include "tests/unit/conv_test_util.h"

namespace schedc {
namespace {

using compiler::Conv2d;
using testing::conv_of;

// The copies' convolutions, and ResNet-50's res5 3x3 and 3x3/2 at batch 8,
// an odd image count with a narrow image, stride 2 on odd sizes and stride 3.
std::vector<Conv2d> halo_convs() {
  std::vector<Conv2d> v = testing::copy_test_convs();
  for (const Conv2d& c : {conv_of(8, 7, 7, 512, 3, 3, 1, 1), conv_of(8, 14, 14, 512, 3, 3, 2, 1),
                          conv_of(7, 7, 5, 128, 3, 3, 1, 1), conv_of(3, 9, 11, 128, 3, 3, 2, 1),
                          conv_of(2, 23, 19, 128, 3, 3, 3, 1)})
    v.push_back(c);
  return v;
}

TEST(ConvHalo, EveryOutputPixelIsOneValidRow) {
  for (const Conv2d& v : halo_convs())
    for (int64_t bm : {64, 128, 256}) {
      if (!compiler::halo_error(v, bm, 1).empty()) continue;
      SCOPED_TRACE(compiler::conv_text(v) + ", BM " + std::to_string(bm));
      const compiler::HaloGeometry g = compiler::halo_geometry(v, bm);
      std::vector<int> seen(size_t(v.gemm_m()), 0);
      for (int64_t t = 0; t < g.tiles; ++t)
        for (int64_t row = 0; row < bm; ++row)
          if (const auto px = compiler::halo_output(v, g, t, row))
            ++seen[size_t((px->n * v.p() + px->p) * v.q() + px->q)];
      for (size_t m = 0; m < seen.size(); ++m) ASSERT_EQ(seen[m], 1) << "output pixel " << m;
    }
}

TEST(ConvHalo, EveryWindowReadsWhatTheConvolutionReads) {
  int checked = 0;
  for (const Conv2d& v : halo_convs())
    for (int64_t bm : {64, 128, 256}) {
      if (!compiler::halo_error(v, bm, 1).empty()) continue;
      SCOPED_TRACE(compiler::conv_text(v) + ", BM " + std::to_string(bm));
      const compiler::HaloGeometry g = compiler::halo_geometry(v, bm);
      const int64_t per_phase = g.images * g.block;
      for (int64_t t = 0; t < g.tiles; ++t)
        for (int64_t row = 0; row < bm; ++row) {
          const auto px = compiler::halo_output(v, g, t, row);
          for (int64_t r = 0; r < v.r; ++r)
            for (int64_t s = 0; s < v.s; ++s) {
              const compiler::HaloTap& tap = g.taps[size_t(r * v.s + s)];
              // The window's row, counted from the panel's region: inside it always.
              ASSERT_LT(tap.phase * per_phase + row + tap.shift, g.region_rows);
              if (!px) continue;
              ASSERT_LT(row + tap.shift, per_phase);
              // Inside the row's own image block.
              ASSERT_EQ((row + tap.shift) / g.block, row / g.block);
              const compiler::HaloSource src =
                  compiler::halo_source(g, t, tap.phase, row + tap.shift);
              EXPECT_EQ(src.n, px->n);
              EXPECT_EQ(src.h, px->p * v.stride_h - v.pad_h + r * v.dil_h);
              EXPECT_EQ(src.w, px->q * v.stride_w - v.pad_w + s * v.dil_w);
              ++checked;
            }
        }
    }
  EXPECT_GT(checked, 100000);
}

TEST(ConvHalo, TilesAndPhases) {
  // res5 3x3 at batch 8: one image a 64-row tile, 9-row pitch, one phase.
  const Conv2d res5 = conv_of(8, 7, 7, 512, 3, 3, 1, 1);
  compiler::HaloGeometry g = compiler::halo_geometry(res5, 64);
  EXPECT_EQ(g.pitch, 9);
  EXPECT_EQ(g.images, 1);
  EXPECT_EQ(g.tiles, 8);
  EXPECT_EQ(g.phases.size(), 1u);
  EXPECT_EQ(g.block, 81);
  EXPECT_EQ(g.taps[8].shift, 2 * 9 + 2);
  EXPECT_EQ(g.region_rows, 88);  // 64 + 20, to whole 8-row swizzle periods
  // 128 rows: two images (81 + 61 = 142 > 128: no, one; 256 rows: three).
  EXPECT_EQ(compiler::halo_geometry(res5, 128).images, 1);
  EXPECT_EQ(compiler::halo_geometry(res5, 256).images, 3);
  // Its 3x3/2: four phases of 8x8, the pitch 8.
  g = compiler::halo_geometry(conv_of(8, 14, 14, 512, 3, 3, 2, 1), 64);
  EXPECT_EQ(g.phases.size(), 4u);
  EXPECT_EQ(g.pitch, 8);
  EXPECT_EQ(g.block, 64);
  // res2 3x3: bands of one output row (58-row pitch) at BM 64, two at 128.
  const Conv2d res2 = conv_of(2, 56, 56, 128, 3, 3, 1, 1);
  g = compiler::halo_geometry(res2, 64);
  EXPECT_EQ(g.out_rows, 1);
  EXPECT_EQ(g.bands, 56);
  EXPECT_EQ(g.tiles, 112);
  EXPECT_EQ(compiler::halo_geometry(res2, 128).out_rows, 2);
}

TEST(ConvHalo, WhichConvolutionsItTakes) {
  EXPECT_EQ(compiler::halo_error(conv_of(8, 7, 7, 512, 3, 3, 1, 1), 64, 1), "");
  EXPECT_EQ(compiler::halo_error(conv_of(8, 7, 7, 64, 3, 3, 1, 1), 64, 2), "");
  Conv2d nchw32 = conv_of(1, 7, 7, 128, 3, 3, 1, 1);
  nchw32.layout = compiler::ConvLayout::nchw32;
  EXPECT_NE(compiler::halo_error(nchw32, 64, 1).find("NCHW32"), std::string::npos);
  // 64 bytes a pixel: taken, in 64-byte rows (two taps a k-tile of one panel).
  EXPECT_EQ(compiler::halo_error(conv_of(1, 7, 7, 64, 3, 3, 1, 1), 64, 1), "");
  EXPECT_EQ(compiler::halo_row_bytes(conv_of(1, 7, 7, 64, 3, 3, 1, 1), 1), 64);
  EXPECT_EQ(compiler::halo_row_bytes(conv_of(1, 7, 7, 128, 3, 3, 1, 1), 1), 128);
  EXPECT_EQ(compiler::halo_fit_error(conv_of(1, 7, 7, 64, 3, 3, 1, 1), 64, 128, 1, 64 * 128, 1),
            "");
  EXPECT_NE(compiler::halo_fit_error(conv_of(1, 7, 7, 64, 3, 3, 1, 1), 64, 256, 1, 64 * 256, 1)
                .find("not one 128-byte panel"),
            std::string::npos);
  EXPECT_NE(compiler::halo_error(conv_of(1, 7, 7, 32, 3, 3, 1, 1), 64, 1).find("128-byte panel"),
            std::string::npos);
  EXPECT_NE(compiler::halo_error(conv_of(1, 7, 7, 128, 3, 3, 9, 1), 64, 1).find("stride past 8"),
            std::string::npos);
  EXPECT_NE(compiler::halo_error(conv_of(1, 7, 100, 128, 3, 3, 1, 1), 64, 1).find("more than BM"),
            std::string::npos);
  EXPECT_NE(compiler::halo_error(conv_of(1, 7, 300, 128, 3, 3, 1, 1), 512, 1).find("TMA's box"),
            std::string::npos);
}

// `halo only` (tests/gpu/schedules/halo_only_s8.sched, res5 3x3 at batch 8):
// A's shared memory is the file's convolution's phase images (a slice's two
// panels of one 9x9 image: 22528 bytes), B's four stages after it; check's
// count, the plan's and the launch's agree, two blocks fit an SM, and the
// entry says it reads A no other way. The same text with `halo` alone keeps
// A's four BK-256 stages.
TEST(ConvHaloOnly, ARegionIsTheFilesPhaseImages) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  const std::string path =
      std::string(SCHEDC_SOURCE_DIR) + "/tests/gpu/schedules/halo_only_s8.sched";
  std::ostringstream err;
  const std::optional<cli::Compiled> k = cli::compile_file(path, t, err);
  ASSERT_TRUE(k) << err.str();
  int64_t bytes = 0;
  ASSERT_EQ(compiler::halo_fit_error(*k->schedule.conv, 64, 256, 1, int64_t(1) << 40, 2, &bytes),
            "");
  EXPECT_EQ(bytes, 2 * 88 * 128);  // two panels of 81 pixels, rounded to 1 KB periods
  EXPECT_TRUE(k->schedule.halo_only);
  EXPECT_EQ(k->schedule.halo_a_bytes, 22528);
  EXPECT_EQ(k->plan.wgmma->b.offset_bytes, 22528);
  EXPECT_TRUE(k->kernel.main.halo_only);
  EXPECT_EQ(k->kernel.main.a_halo_bytes, 22528u);
  const compiler::Resources r = compiler::static_resources(k->schedule, t);
  EXPECT_EQ(r.a_region_bytes, 22528);
  EXPECT_EQ(uint32_t(r.smem_bytes), k->kernel.main.dynamic_smem);
  EXPECT_EQ(r.smem_bytes, 22528 + 4 * 16384 + 64 + 8208);
  EXPECT_EQ(r.blocks_per_sm, 2);

  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string plain = text.str();
  const size_t at = plain.find("\nhalo only\n");
  ASSERT_NE(at, std::string::npos);
  plain.replace(at, 11, "\nhalo\n");
  plain.replace(plain.find("blocks_per_sm 2"), 15, "");
  const std::optional<cli::Compiled> h =
      cli::compile_source(std::make_shared<dsl::SourceFile>("plain.sched", plain), t, err);
  ASSERT_TRUE(h) << err.str();
  EXPECT_FALSE(h->kernel.main.halo_only);
  EXPECT_EQ(h->kernel.main.a_halo_bytes, 4u * 16384);
  EXPECT_EQ(h->plan.wgmma->b.offset_bytes, 4 * 16384);
  EXPECT_EQ(uint32_t(compiler::static_resources(h->schedule, t).smem_bytes),
            h->kernel.main.dynamic_smem);
}

// split_k's pulled sums wait in the pipeline's shared memory, which `halo
// only` shrinks to the phase images and B's stages: 128x256 sums of 131072
// bytes do not fit its 117760 (the same file with A's three stages would
// hold 147456), and the error says so at split_k, noting `halo only`.
TEST(ConvHaloOnly, PulledSumsCountTheRegion) {
  compiler::Target t;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", t));
  const std::string text =
      "conv 8x7x7x512 filter 512x3x3 stride 1 pad 1\ndtype s8\ntile 128x256x128\nwarp "
      "64x256\nwgmma s8\ntma\nstages 3\nswizzle smem\nwarp_specialize\nsplit_k 4\nhalo only\n";
  std::ostringstream err;
  EXPECT_FALSE(
      cli::compile_source(std::make_shared<dsl::SourceFile>("pulled.sched", text), t, err));
  EXPECT_NE(err.str().find("pulled.sched:10:1: error: 'split_k' leaves each CTA's partial sums "
                           "(131072 bytes: the tile's 4-byte accumulators) in its pipeline's "
                           "stages for CTA 0 to read, but the stages hold 117760 bytes"),
            std::string::npos)
      << err.str();
  EXPECT_NE(err.str().find("'halo only' given here"), std::string::npos) << err.str();
  std::string plain = text;
  plain.replace(plain.find("halo only"), 9, "halo");
  std::ostringstream err2;
  EXPECT_TRUE(cli::compile_source(std::make_shared<dsl::SourceFile>("plain.sched", plain), t, err2))
      << err2.str();
}

}  // namespace
}  // namespace schedc
