// The implicit GEMM's address arithmetic (compiler/conv.h) against the
// convolution's definition, on the CPU: for every element A(m, kk) the
// offset table, the pixel base and the channel offset give the input
// element the definition names (or padding exactly where it falls outside);
// the GEMM reads exactly the input elements the convolution reads, each as
// often; ResNet-50's layers have the expected output sizes and their tables
// fit in the kernel parameters.
#include "compiler/conv.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "compiler/schedule.h"

namespace schedc::compiler {
namespace {

Conv2d conv(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t rs, int64_t stride, int64_t pad,
            ConvLayout layout = ConvLayout::nhwc) {
  Conv2d v;
  v.n = n, v.c = c, v.h = v.w = hw, v.k = k, v.r = v.s = rs;
  v.stride_h = v.stride_w = stride;
  v.pad_h = v.pad_w = pad;
  v.layout = layout;
  return v;
}

// The input element's offset written out from the layout's definition
// (independently of compiler/conv.cpp): NHWC [N][H][W][C], NCHW32
// [N][C/32][H][W][32].
int64_t element(const Conv2d& v, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (v.layout == ConvLayout::nhwc) return ((n * v.h + h) * v.w + w) * v.c + c;
  return (((n * (v.c / 32) + c / 32) * v.h + h) * v.w + w) * 32 + c % 32;
}

// Every A(m, kk) against the definition; the count of reads per input
// element against the definition's.
void check_against_definition(const Conv2d& v) {
  SCOPED_TRACE(std::string(to_string(v.layout)) + " N" + std::to_string(v.n) + " C" +
               std::to_string(v.c) + " " + std::to_string(v.h) + "x" + std::to_string(v.w) + " R" +
               std::to_string(v.r) + "x" + std::to_string(v.s) + " stride " +
               std::to_string(v.stride_h) + "x" + std::to_string(v.stride_w) + " pad " +
               std::to_string(v.pad_h) + "x" + std::to_string(v.pad_w) + " dilation " +
               std::to_string(v.dil_h) + "x" + std::to_string(v.dil_w));
  ASSERT_EQ(conv_error(v), "");
  const std::vector<ConvTap> taps = offset_table(v);
  ASSERT_EQ(int64_t(taps.size()), v.r * v.s);
  std::map<int64_t, int64_t> gemm_reads, conv_reads;
  const int64_t P = v.p(), Q = v.q();
  for (int64_t m = 0; m < v.gemm_m(); ++m)
    for (int64_t kk = 0; kk < v.gemm_k(); ++kk) {
      const int64_t n = m / (P * Q), oh = m % (P * Q) / Q, ow = m % Q;
      const KCoord k = k_coord(v, kk);
      const int64_t ih = oh * v.stride_h - v.pad_h + k.r * v.dil_h;
      const int64_t iw = ow * v.stride_w - v.pad_w + k.s * v.dil_w;
      const bool inside = ih >= 0 && ih < v.h && iw >= 0 && iw < v.w;
      const std::optional<int64_t> got = gemm_a_offset(v, taps, m, kk);
      ASSERT_EQ(got.has_value(), inside) << "m " << m << " kk " << kk;
      if (!inside) continue;
      const int64_t want = element(v, n, k.c, ih, iw);
      ASSERT_EQ(*got, want) << "m " << m << " kk " << kk;
      ++gemm_reads[*got];
    }
  // The definition's reads, loop by loop as the formula is written.
  for (int64_t n = 0; n < v.n; ++n)
    for (int64_t oh = 0; oh < P; ++oh)
      for (int64_t ow = 0; ow < Q; ++ow)
        for (int64_t c = 0; c < v.c; ++c)
          for (int64_t r = 0; r < v.r; ++r)
            for (int64_t s = 0; s < v.s; ++s) {
              const int64_t ih = oh * v.stride_h - v.pad_h + r * v.dil_h;
              const int64_t iw = ow * v.stride_w - v.pad_w + s * v.dil_w;
              if (ih >= 0 && ih < v.h && iw >= 0 && iw < v.w)
                ++conv_reads[element(v, n, c, ih, iw)];
            }
  EXPECT_EQ(gemm_reads, conv_reads);
  EXPECT_EQ(input_offset(v, v.n - 1, v.c - 1, v.h - 1, v.w - 1),
            element(v, v.n - 1, v.c - 1, v.h - 1, v.w - 1));
  // Every offset names an element of the tensor.
  for (const auto& [offset, reads] : gemm_reads) {
    EXPECT_GE(offset, 0);
    EXPECT_LT(offset, v.n * v.c * v.h * v.w);
  }
}

TEST(Conv, KOrderKeepsMemoryContiguousChannelsInnermost) {
  Conv2d v = conv(1, 64, 5, 8, 3, 1, 1);
  // NHWC: kk = (r*S + s)*C + c, so consecutive kk are consecutive channels.
  EXPECT_EQ(k_coord(v, 0).c, 0);
  EXPECT_EQ(k_coord(v, 1).c, 1);
  EXPECT_EQ(k_coord(v, 64).s, 1);
  EXPECT_EQ(k_coord(v, 3 * 64).r, 1);
  v.layout = ConvLayout::nchw32;
  // NCHW32: 32 lanes, then taps, then channel groups.
  EXPECT_EQ(k_coord(v, 31).c, 31);
  EXPECT_EQ(k_coord(v, 32).c, 0);
  EXPECT_EQ(k_coord(v, 32).s, 1);
  EXPECT_EQ(k_coord(v, 9 * 32).c, 32);
  EXPECT_EQ(k_coord(v, 9 * 32).r, 0);
  for (int64_t kk = 0; kk + 1 < v.gemm_k(); ++kk) {
    if ((kk + 1) % 32 == 0) continue;  // the next run of 32 lanes
    EXPECT_EQ(channel_offset(v, k_coord(v, kk + 1).c) - channel_offset(v, k_coord(v, kk).c), 1);
  }
}

TEST(Conv, EveryGemmElementIsTheDefinitionsInputElementOrPadding) {
  // ResNet's shapes in miniature: 1x1, 3x3 stride 1 and 2, 7x7 stride 2 with
  // padding; odd sizes; dilation; both layouts.
  for (ConvLayout l : {ConvLayout::nhwc, ConvLayout::nchw32}) {
    // NCHW32 takes C and K in multiples of 32 (the output is NCHW32 too).
    const int64_t c = l == ConvLayout::nchw32 ? 64 : 3, k = l == ConvLayout::nchw32 ? 32 : 4;
    check_against_definition(conv(2, c, 5, k, 1, 1, 0, l));
    check_against_definition(conv(1, c, 7, k, 3, 1, 1, l));
    check_against_definition(conv(2, c, 9, k, 3, 2, 1, l));
    check_against_definition(conv(1, c, 11, k, 7, 2, 3, l));
    Conv2d d = conv(1, c, 8, k, 3, 1, 2, l);
    d.dil_h = d.dil_w = 2;
    check_against_definition(d);
    Conv2d rect = conv(1, c, 1, k, 1, 1, 0, l);
    rect.h = 6, rect.w = 9, rect.r = 2, rect.s = 3, rect.stride_h = 2, rect.pad_w = 1;
    check_against_definition(rect);
  }
}

TEST(Conv, RandomConvolutionsMatchTheDefinition) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<>(lo, hi)(rng)); };
  for (int i = 0; i < 40; ++i) {
    Conv2d v;
    v.layout = i % 2 ? ConvLayout::nchw32 : ConvLayout::nhwc;
    v.n = pick(1, 2);
    v.c = v.layout == ConvLayout::nchw32 ? 32 * pick(1, 2) : pick(1, 5);
    v.h = pick(1, 9), v.w = pick(1, 9);
    v.k = v.layout == ConvLayout::nchw32 ? 32 * pick(1, 2) : pick(1, 3);
    v.r = pick(1, 4), v.s = pick(1, 4);
    v.stride_h = pick(1, 3), v.stride_w = pick(1, 3);
    v.dil_h = pick(1, 2), v.dil_w = pick(1, 2);
    v.pad_h = pick(0, 3), v.pad_w = pick(0, 3);
    if (!conv_error(v).empty()) continue;  // no output pixel: drawn again next round
    check_against_definition(v);
  }
}

TEST(Conv, ResNet50LayersHaveTheirOutputSizesAndTablesThatFit) {
  struct Layer {
    int64_t c, hw, k, rs, stride, pad, p;
  };
  const Layer layers[] = {
      {3, 224, 64, 7, 2, 3, 112},   // conv1
      {64, 56, 64, 1, 1, 0, 56},    // 1x1
      {64, 56, 64, 3, 1, 1, 56},    // 3x3 stride 1
      {128, 56, 128, 3, 2, 1, 28},  // 3x3 stride 2 (conv3_1)
      {256, 56, 512, 1, 2, 0, 28},  // 1x1 stride 2 (the projection)
      {512, 7, 2048, 1, 1, 0, 7},
  };
  for (const Layer& l : layers)
    for (int64_t n : {1, 8, 32}) {
      const Conv2d v = conv(n, l.c, l.hw, l.k, l.rs, l.stride, l.pad);
      EXPECT_EQ(conv_error(v), "");
      EXPECT_EQ(v.p(), l.p);
      EXPECT_EQ(v.q(), l.p);
      EXPECT_EQ(v.gemm_m(), n * l.p * l.p);
      EXPECT_EQ(v.gemm_k(), l.c * l.rs * l.rs);
      EXPECT_TRUE(offset_table_fits_params(v)) << offset_table_bytes(v) << " bytes";
    }
  EXPECT_EQ(offset_table_bytes(conv(1, 3, 224, 64, 7, 2, 3)), 49 * 8);
}

TEST(Conv, LayoutWordsReadBack) {
  for (ConvLayout l : {ConvLayout::nhwc, ConvLayout::nchw32})
    EXPECT_EQ(layout_from_word(layout_word(l)), l);
  EXPECT_EQ(std::string(layout_word(ConvLayout::nchw32)), "nchw32");
  EXPECT_FALSE(layout_from_word("NCHW32").has_value());  // to_string's, for people
  EXPECT_FALSE(layout_from_word("nchw").has_value());
}

TEST(Conv, ErrorsNameWhatIsWrong) {
  Conv2d v = conv(1, 3, 8, 4, 3, 1, 1);
  EXPECT_EQ(conv_error(v), "");
  v.stride_h = 0;
  EXPECT_EQ(conv_error(v), "the stride must be at least 1");
  v = conv(1, 3, 2, 4, 5, 1, 0);
  EXPECT_EQ(conv_error(v), "the filter is larger than the padded input: no output pixel");
  v = conv(1, 48, 8, 4, 3, 1, 1, ConvLayout::nchw32);
  EXPECT_EQ(conv_error(v), "NCHW32 needs C to be a multiple of 32 (C is 48)");
  v = conv(1, 64, 8, 40, 3, 1, 1, ConvLayout::nchw32);
  EXPECT_EQ(conv_error(v),
            "NCHW32 needs K to be a multiple of 32: the output is NCHW32 too (K is 40)");
  v = conv(1, 3, 8, 4, 3, 1, 1);
  v.pad_w = -1;
  EXPECT_EQ(conv_error(v), "the padding must be at least 0");
  v = conv(4096, 256, 1024, 4, 1, 1, 0);
  EXPECT_EQ(conv_error(v), "a tensor of 2^31 elements or more (offsets are 32-bit)");
  // A pad wider than the filter is still a convolution: border pixels read nothing.
  v = conv(1, 3, 4, 4, 1, 1, 2);
  EXPECT_EQ(conv_error(v), "");
  check_against_definition(v);
}

TEST(Conv, ChannelsMustFillWhole16ByteChunks) {
  Conv2d v = conv(1, 3, 8, 4, 3, 1, 1);
  v.c = 16;
  EXPECT_EQ(conv_channels_error(v, 1, "s8"), "");
  v.c = 8;
  EXPECT_EQ(conv_channels_error(v, 2, "f16"), "");
  EXPECT_EQ(conv_channels_error(v, 1, "s8"),
            "C = 8 channels of s8 are 8 bytes a pixel, not a multiple of 16 (a copy of the input "
            "reads 16-byte chunks of a pixel's channels: C a multiple of 16; pad the channels "
            "with zeros)");
}

TEST(Conv, DtypeNamesReadBack) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::s8})
    EXPECT_EQ(dtype_from_string(to_string(t)), t);
  EXPECT_EQ(dtype_from_string("tf32"), std::nullopt);
}

}  // namespace
}  // namespace schedc::compiler
