#include "compiler/conv.h"

#include <limits>
#include <string>

namespace schedc::compiler {

namespace {

// Elements between two neighbouring pixels of a row (along w), and between
// two neighbouring rows (along h), in the input's layout.
int64_t pixel_stride(const Conv2d& conv) {
  return conv.layout == ConvLayout::nhwc ? conv.c : 32;
}
int64_t row_stride(const Conv2d& conv) {
  return conv.w * pixel_stride(conv);
}
// Elements between two images.
int64_t image_stride(const Conv2d& conv) {
  return conv.c * conv.h * conv.w;
}

}  // namespace

const char* to_string(ConvLayout l) {
  return l == ConvLayout::nhwc ? "NHWC" : "NCHW32";
}

const char* layout_word(ConvLayout l) {
  return l == ConvLayout::nhwc ? "nhwc" : "nchw32";
}

std::optional<ConvLayout> layout_from_word(const std::string& word) {
  for (ConvLayout l : {ConvLayout::nhwc, ConvLayout::nchw32})
    if (word == layout_word(l)) return l;
  return std::nullopt;
}

std::string conv_channels_error(const Conv2d& conv, int elem_bytes, const std::string& dtype) {
  const int64_t bytes = int64_t(conv.c) * elem_bytes;
  if (bytes % 16 == 0) return "";
  return "C = " + std::to_string(conv.c) + " channels of " + dtype + " are " +
         std::to_string(bytes) +
         " bytes a pixel, not a multiple of 16 (a copy of the input reads 16-byte chunks of a "
         "pixel's channels: C a multiple of " +
         std::to_string(16 / elem_bytes) + "; pad the channels with zeros)";
}

std::string conv_error(const Conv2d& v) {
  for (auto [value, name] : {std::pair{v.n, "N"},
                             {v.c, "C"},
                             {v.h, "H"},
                             {v.w, "W"},
                             {v.k, "K"},
                             {v.r, "R"},
                             {v.s, "S"},
                             {v.stride_h, "the stride"},
                             {v.stride_w, "the stride"},
                             {v.dil_h, "the dilation"},
                             {v.dil_w, "the dilation"}})
    if (value < 1) return std::string(name) + " must be at least 1";
  if (v.pad_h < 0 || v.pad_w < 0) return "the padding must be at least 0";
  if (v.h + 2 * v.pad_h < v.dil_h * (v.r - 1) + 1 || v.w + 2 * v.pad_w < v.dil_w * (v.s - 1) + 1)
    return "the filter is larger than the padded input: no output pixel";
  if (v.layout == ConvLayout::nchw32 && v.c % 32 != 0)
    return "NCHW32 needs C to be a multiple of 32 (C is " + std::to_string(v.c) + ")";
  if (v.layout == ConvLayout::nchw32 && v.k % 32 != 0)
    return "NCHW32 needs K to be a multiple of 32: the output is NCHW32 too (K is " +
           std::to_string(v.k) + ")";
  if (v.h + 2 * v.pad_h > kMaxConvExtent || v.w + 2 * v.pad_w > kMaxConvExtent ||
      v.dil_h * (v.r - 1) > kMaxConvExtent || v.dil_w * (v.s - 1) > kMaxConvExtent)
    return "H + 2 x pad, W + 2 x pad and the dilated filter must be at most " +
           std::to_string(kMaxConvExtent) + " (the kernels hold window coordinates in 16 bits)";
  if (v.r * v.s > kMaxConvTaps)
    return "the filter has " + std::to_string(v.r * v.s) +
           " taps (R x S); the kernels take at most " + std::to_string(kMaxConvTaps);
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const double elements = double(v.n) * double(v.c) * double(v.h) * double(v.w);
  const double filters = double(v.k) * double(v.c) * double(v.r) * double(v.s);
  const double outputs = double(v.n) * double(v.k) * double(v.p()) * double(v.q());
  if (elements > kMax || filters > kMax || outputs > kMax)
    return "a tensor of 2^31 elements or more (offsets are 32-bit)";
  if ((v.r - 1) * v.dil_h * v.w * v.c + (v.s - 1) * v.dil_w * v.c > kMax)
    return "the last filter tap's offset does not fit 32 bits";
  return "";
}

std::string conv_text(const Conv2d& v) {
  auto pair = [](int64_t a, int64_t b) {
    return a == b ? std::to_string(a) : std::to_string(a) + "x" + std::to_string(b);
  };
  std::string t = std::to_string(v.n) + "x" + std::to_string(v.h) + "x" + std::to_string(v.w) +
                  "x" + std::to_string(v.c) + " filter " + std::to_string(v.k) + "x" +
                  std::to_string(v.r) + "x" + std::to_string(v.s) + " stride " +
                  pair(v.stride_h, v.stride_w) + " pad " + pair(v.pad_h, v.pad_w);
  if (v.dil_h != 1 || v.dil_w != 1) t += " dilation " + pair(v.dil_h, v.dil_w);
  if (v.layout != ConvLayout::nhwc) t += std::string(" ") + layout_word(v.layout);
  return t;
}

int64_t channel_offset(const Conv2d& conv, int64_t c) {
  if (conv.layout == ConvLayout::nhwc) return c;
  return (c / 32) * conv.h * conv.w * 32 + c % 32;
}

int64_t input_offset(const Conv2d& conv, int64_t n, int64_t c, int64_t h, int64_t w) {
  return n * image_stride(conv) + h * row_stride(conv) + w * pixel_stride(conv) +
         channel_offset(conv, c);
}

KCoord k_coord(const Conv2d& conv, int64_t kk) {
  const int64_t taps = conv.r * conv.s;
  KCoord k;
  int64_t tap = 0;
  if (conv.layout == ConvLayout::nhwc) {
    tap = kk / conv.c;
    k.c = kk % conv.c;
  } else {
    const int64_t group = kk / (taps * 32);
    tap = kk / 32 % taps;
    k.c = group * 32 + kk % 32;
  }
  k.r = tap / conv.s;
  k.s = tap % conv.s;
  return k;
}

std::vector<ConvTap> offset_table(const Conv2d& conv) {
  std::vector<ConvTap> taps;
  taps.reserve(size_t(conv.r * conv.s));
  for (int64_t r = 0; r < conv.r; ++r)
    for (int64_t s = 0; s < conv.s; ++s) {
      ConvTap t;
      t.dh = int32_t(r * conv.dil_h);
      t.dw = int32_t(s * conv.dil_w);
      t.offset = t.dh * row_stride(conv) + t.dw * pixel_stride(conv);
      taps.push_back(t);
    }
  return taps;
}

int64_t offset_table_bytes(const Conv2d& conv) {
  return conv.r * conv.s * (4 + 2 + 2);
}

bool offset_table_fits_params(const Conv2d& conv) {
  return offset_table_bytes(conv) + kGemmParamBytes <= kKernelParamBytes;
}

PixelBase pixel_base(const Conv2d& conv, int64_t m) {
  const int64_t pq = conv.p() * conv.q();
  PixelBase b;
  b.n = m / pq;
  const int64_t oh = m % pq / conv.q(), ow = m % conv.q();
  b.h0 = oh * conv.stride_h - conv.pad_h;
  b.w0 = ow * conv.stride_w - conv.pad_w;
  b.offset = b.n * image_stride(conv) + b.h0 * row_stride(conv) + b.w0 * pixel_stride(conv);
  return b;
}

std::optional<int64_t> gemm_a_offset(const Conv2d& conv, const std::vector<ConvTap>& taps,
                                     int64_t m, int64_t kk) {
  const PixelBase b = pixel_base(conv, m);
  const KCoord k = k_coord(conv, kk);
  const ConvTap& t = taps[size_t(k.r * conv.s + k.s)];
  const int64_t h = b.h0 + t.dh, w = b.w0 + t.dw;
  if (h < 0 || h >= conv.h || w < 0 || w >= conv.w) return std::nullopt;  // padding
  return b.offset + t.offset + channel_offset(conv, k.c);
}

}  // namespace schedc::compiler
