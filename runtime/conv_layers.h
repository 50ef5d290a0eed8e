#pragma once
// Named convolution lists for `schedc bench --conv resnet50[:B]` and the GPU
// tests: the one place ResNet-50's layers are written down.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/conv.h"

namespace schedc::runtime {

struct NamedConv {
  std::string name;  // "conv1 7x7/2", "res2 3x3", …
  compiler::Conv2d conv;
  // The text named its layout (`nhwc`, `nchw32`); else the module's applies
  // (in_layout).
  bool layout_given = false;
  // C is a padding of fewer channels (ResNet-50's stem, 3): in_layout rounds
  // it up to the layout's multiple.
  bool padded_channels = false;
};

// `v` as a module of `layout` computes it: the layout where the text named
// none, and a padded C rounded up to 32 for NCHW32. A given layout stays
// (conv_run_error then says the module computes another).
NamedConv in_layout(NamedConv v, compiler::ConvLayout layout);

// A convolution of `n` images of h x w x c, `k` filters of r x s, one
// stride, padding and dilation on both axes, NHWC.
compiler::Conv2d conv2d(int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t r, int64_t s,
                        int64_t stride = 1, int64_t pad = 0, int64_t dilation = 1);

// ResNet-50's distinct convolution layers (v1.5: a bottleneck's stride on its
// 3x3; 224x224 input), NHWC, `batch` images each: the stem with its 3 input
// channels padded to 16 (16 bytes of int8, two 16-byte chunks of f16;
// padded_channels, so 32 in NCHW32), and
// for each stage the 1x1s, the 3x3 at stride 1, the stride-2 3x3 of its
// first block and the stride-2 1x1 projection (stage 2's first block keeps
// 56x56: its 3x3 and projection run at stride 1). 23 layers; a layer that
// recurs (a stage's later blocks) is listed once.
std::vector<NamedConv> resnet50_convs(int64_t batch);

}  // namespace schedc::runtime
