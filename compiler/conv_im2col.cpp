#include "compiler/conv_im2col.h"

namespace schedc::compiler {

Im2colGeometry im2col_geometry(const Conv2d& conv) {
  Im2colGeometry g;
  g.n = conv.n, g.h = conv.h, g.w = conv.w, g.c = conv.c;
  g.stride_h = conv.stride_h, g.stride_w = conv.stride_w;
  g.pad_h = conv.pad_h, g.pad_w = conv.pad_w;
  g.reach_h = (conv.r - 1) * conv.dil_h, g.reach_w = (conv.s - 1) * conv.dil_w;
  g.nhwc = conv.layout == ConvLayout::nhwc;
  return g;
}

Im2colCorners im2col_corners(const Im2colGeometry& g) {
  Im2colCorners b;
  b.lower_h = -g.pad_h, b.lower_w = -g.pad_w;
  b.upper_h = g.pad_h - g.reach_h, b.upper_w = g.pad_w - g.reach_w;
  return b;
}

int im2col_copies(const Im2colGeometry& g, int block_k, int panel_k) {
  if (!im2col_error(g, block_k, panel_k).empty()) return 0;
  return block_k > panel_k || g.c % block_k == 0 ? 1 : 2;
}

std::string im2col_error(const Im2colGeometry& g, int block_k, int panel_k) {
  if (!g.nhwc) return "NCHW32 (TMA's im2col mode reads it only with the 32-byte swizzle)";
  if (block_k > panel_k && g.c % panel_k != 0)
    return "C = " + std::to_string(g.c) + " is not a multiple of " + std::to_string(panel_k) +
           ", the channels of one of BK = " + std::to_string(block_k) +
           "'s 128-byte panels (a copy would span two filter taps)";
  if (block_k <= panel_k && (block_k < 2 || block_k % 2 != 0 || g.c % (block_k / 2) != 0))
    return "C = " + std::to_string(g.c) +
           " is not a multiple of BK / 2 = " + std::to_string(block_k / 2) +
           " (a copy would span two filter taps)";
  if (g.stride_h > kIm2colMaxStride || g.stride_w > kIm2colMaxStride)
    return "a stride past " + std::to_string(kIm2colMaxStride);
  const Im2colCorners b = im2col_corners(g);
  for (int64_t v : {b.lower_h, b.lower_w, b.upper_h, b.upper_w})
    if (v < kIm2colCornerMin || v > kIm2colCornerMax)
      return "the padding or the dilated filter too large (a bounding-box corner " +
             std::to_string(v) + " outside [" + std::to_string(kIm2colCornerMin) + ", " +
             std::to_string(kIm2colCornerMax) + "])";
  return "";
}

std::vector<PixelBase> im2col_walk(const Conv2d& conv, int64_t m0, int64_t count) {
  const Im2colCorners b = im2col_corners(im2col_geometry(conv));
  const int64_t last_h = conv.h - 1 + b.upper_h, last_w = conv.w - 1 + b.upper_w;
  PixelBase at = pixel_base(conv, m0);
  std::vector<PixelBase> out;
  out.reserve(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    PixelBase p;
    p.n = at.n, p.h0 = at.h0, p.w0 = at.w0;
    out.push_back(p);
    at.w0 += conv.stride_w;
    if (at.w0 <= last_w) continue;
    at.w0 = b.lower_w;
    at.h0 += conv.stride_h;
    if (at.h0 <= last_h) continue;
    at.h0 = b.lower_h;
    ++at.n;
  }
  return out;
}

}  // namespace schedc::compiler
