#pragma once
// What the CPU tests of a convolution's copies share (conv_im2col_test.cpp,
// conv_halo_test.cpp).

#include <cstdint>
#include <vector>

#include "compiler/conv.h"

namespace schedc::testing {

// An NHWC convolution of N images of H x W x C, 8 filters of R x S, the same
// stride, padding and dilation on both axes.
inline compiler::Conv2d conv_of(int64_t n, int64_t h, int64_t w, int64_t c, int64_t r, int64_t s,
                                int64_t stride = 1, int64_t pad = 0, int64_t dil = 1) {
  compiler::Conv2d v;
  v.n = n, v.h = h, v.w = w, v.c = c, v.k = 8, v.r = r, v.s = s;
  v.stride_h = v.stride_w = stride, v.pad_h = v.pad_w = pad, v.dil_h = v.dil_w = dil;
  return v;
}

// The convolutions both copies' models are checked on: ragged H and W,
// 1x1 at stride 2, dilation 2, padding past 1 and past the filter's reach,
// a 1x1 image, a large stem, a rectangular filter with per-axis stride and
// pad, and one whose axes differ in stride, padding and dilation.
inline std::vector<compiler::Conv2d> copy_test_convs() {
  compiler::Conv2d rect = conv_of(2, 6, 10, 128, 1, 3);
  rect.stride_w = 2, rect.pad_w = 1;
  compiler::Conv2d skew = conv_of(2, 11, 8, 128, 3, 5, 1, 1);
  skew.stride_h = 2, skew.pad_w = 2, skew.dil_w = 2;
  return {conv_of(3, 7, 9, 128, 3, 3, 1, 1),
          conv_of(2, 13, 11, 128, 1, 1, 2, 0),
          conv_of(1, 15, 17, 128, 3, 3, 1, 2, 2),
          conv_of(2, 9, 7, 256, 5, 5, 2, 3),
          conv_of(1, 5, 5, 128, 7, 7, 1, 4),
          conv_of(4, 1, 1, 128, 1, 1),
          conv_of(2, 56, 56, 128, 3, 3, 1, 1),
          conv_of(1, 31, 33, 128, 3, 3, 2, 1),
          conv_of(1, 224, 224, 128, 7, 7, 2, 3),
          rect,
          skew};
}

}  // namespace schedc::testing
