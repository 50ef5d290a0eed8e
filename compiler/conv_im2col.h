#pragma once
// A by TMA's im2col mode (docs/convolution.md, "A by TMA's im2col mode"):
// when the Hopper convolution kernel's A may come by one (or two)
// `cp.async.bulk.tensor.4d...im2col` copies a k-tile instead of by the
// producer's 128 threads, and the copy engine's walk that makes it right.
//
// A tensor map in im2col mode over the NHWC input (rank 4: C, W, H, N) with
// pixelsPerColumn = BM and channelsPerPixel = BK loads, from the coordinates
// {c, w, h, n} and the offsets {dw, dh}, BM pixels x BK channels: the first
// pixel is (n, h, w), each next one elementStrides (the convolution's
// stride) further along W inside the bounding box, then the box's next row
// from its left edge, then the next image; every pixel is read at
// (h + dh, w + dw), zeros outside the tensor. With the box's corners
// lower = -pad and upper = pad - (R - 1)·dil (per axis, the box running
// from lower to H - 1 + upper), the pixels it visits are the window origins
// of the output pixels in the GEMM's row order, so the copy of the k-tile
// of tap (r, s) and channels [c, c + BK) from the tile's first output pixel
// is A's stage: rows tile_m0 .., columns (r·S + s)·C + c .., as the
// producer's cp.async would have written it (128-byte rows, 128-byte
// swizzle). Rows past M read images past N: zeros.
//
// The runtime takes this path whenever im2col_error is "" (runtime/
// launch.cpp, ConvArgs::im2col: the copies a k-tile) and the kernel's
// producer and consumers branch on it; otherwise the producer's threads
// copy A as before.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/conv.h"

namespace schedc::compiler {

// What the choice and the tensor map depend on: the input and the window
// geometry, from a Conv2d or from the kernel's ConvArgs (whose taps give
// the dilated filter's reach).
struct Im2colGeometry {
  int64_t n = 1, h = 1, w = 1, c = 1;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int64_t reach_h = 0, reach_w = 0;  // (R - 1)·dil_h, (S - 1)·dil_w
  bool nhwc = true;
};
Im2colGeometry im2col_geometry(const Conv2d& conv);

// cuTensorMapEncodeIm2col's pixelBoxLowerCorner and pixelBoxUpperCorner, per
// axis: lower = -pad, upper = pad - reach.
struct Im2colCorners {
  int64_t lower_h = 0, lower_w = 0, upper_h = 0, upper_w = 0;
};
Im2colCorners im2col_corners(const Im2colGeometry& g);

// The driver's limits at rank 4 (CUDA 13.0's cuda.h): corners in
// [-128, 127], element strides 1 to 8.
constexpr int64_t kIm2colCornerMin = -128, kIm2colCornerMax = 127, kIm2colMaxStride = 8;

// How the kernel's producer copies one k-tile of `block_k` channels in
// im2col mode (ConvArgs::im2col), its stage in 128-byte panels of
// `panel_k` channels each (the wgmma kernel's; KernelEntry::tile_k and
// tma_a.box_cols): with one panel (block_k == panel_k), 1 where C is a
// multiple of BK (one copy of BK channels of one tap, the 128-byte
// swizzle), 2 where C is a multiple of BK / 2 only, as ResNet's 64-channel
// s8 layers (BK / 2 channels each, into two panels of 64-byte rows in the
// 64-byte swizzle: a k-tile may span two taps, and where K = C·R·S ends
// mid-k-tile the second copy reads channels past C, zeros); with several
// panels, 1 where C is a multiple of a panel (one copy a panel, each of one
// tap, the last ones past K reading zeros); 0 otherwise (im2col_error says
// why). The map's box is panel_k / copies channels wide either way.
int im2col_copies(const Im2colGeometry& g, int block_k, int panel_k);

// Why A of a kernel with k-tiles of `block_k` channels in panels of
// `panel_k` cannot come by im2col copies ("" when it can): NCHW32 (an
// interleaved layout, another swizzle than the stages'), C not a multiple of
// BK / 2 (one panel) or of a panel (several; a copy would span two taps), a
// stride past 8, a corner outside [-128, 127].
std::string im2col_error(const Im2colGeometry& g, int block_k, int panel_k);

// The window origins (n, h0, w0) of the `count` pixels one copy loads from
// output pixel m0 on, as the copy engine walks the bounding box (above).
// Only n, h0 and w0 are set. A model, tested against pixel_base on the CPU
// (tests/unit/conv_im2col_test.cpp) and by every GPU test that takes the path.
std::vector<PixelBase> im2col_walk(const Conv2d& conv, int64_t m0, int64_t count);

}  // namespace schedc::compiler
