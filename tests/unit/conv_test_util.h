#pragma once
// What the CPU tests of a convolution's copies share (conv_im2col_test.cpp,
// conv_halo_test.cpp).

#include <cstdint>

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

}  // namespace schedc::testing
