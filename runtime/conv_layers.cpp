#include "runtime/conv_layers.h"

namespace schedc::runtime {

compiler::Conv2d conv2d(int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t r, int64_t s,
                        int64_t stride, int64_t pad, int64_t dilation) {
  compiler::Conv2d v;
  v.n = n, v.h = h, v.w = w, v.c = c;
  v.k = k, v.r = r, v.s = s;
  v.stride_h = v.stride_w = stride;
  v.pad_h = v.pad_w = pad;
  v.dil_h = v.dil_w = dilation;
  return v;
}

namespace {

// One layer: `batch` square images of h x h x c, k square filters of r x r.
compiler::Conv2d layer(int64_t batch, int64_t h, int64_t c, int64_t k, int64_t r, int64_t stride,
                       int64_t pad) {
  return conv2d(batch, h, h, c, k, r, r, stride, pad);
}

}  // namespace

std::vector<NamedConv> resnet50_convs(int64_t b) {
  return {
      // conv1: 224x224x3 (padded to 16 channels), 64 filters 7x7 stride 2 pad 3 -> 112x112.
      {"conv1 7x7/2 stem", layer(b, 224, 16, 64, 7, 2, 3), false, true},
      // Stage 2 (conv2_x, 56x56 after the max pool; 3 blocks, 64 -> 256).
      {"res2 1x1 reduce (first block)", layer(b, 56, 64, 64, 1, 1, 0)},
      {"res2 3x3", layer(b, 56, 64, 64, 3, 1, 1)},
      {"res2 1x1 expand (and the projection)", layer(b, 56, 64, 256, 1, 1, 0)},
      {"res2 1x1 reduce", layer(b, 56, 256, 64, 1, 1, 0)},
      // Stage 3 (conv3_x, 28x28; 4 blocks, 128 -> 512).
      {"res3 1x1 reduce (first block, 56x56)", layer(b, 56, 256, 128, 1, 1, 0)},
      {"res3 3x3/2", layer(b, 56, 128, 128, 3, 2, 1)},
      {"res3 1x1 expand", layer(b, 28, 128, 512, 1, 1, 0)},
      {"res3 1x1/2 projection", layer(b, 56, 256, 512, 1, 2, 0)},
      {"res3 1x1 reduce", layer(b, 28, 512, 128, 1, 1, 0)},
      {"res3 3x3", layer(b, 28, 128, 128, 3, 1, 1)},
      // Stage 4 (conv4_x, 14x14; 6 blocks, 256 -> 1024).
      {"res4 1x1 reduce (first block, 28x28)", layer(b, 28, 512, 256, 1, 1, 0)},
      {"res4 3x3/2", layer(b, 28, 256, 256, 3, 2, 1)},
      {"res4 1x1 expand", layer(b, 14, 256, 1024, 1, 1, 0)},
      {"res4 1x1/2 projection", layer(b, 28, 512, 1024, 1, 2, 0)},
      {"res4 1x1 reduce", layer(b, 14, 1024, 256, 1, 1, 0)},
      {"res4 3x3", layer(b, 14, 256, 256, 3, 1, 1)},
      // Stage 5 (conv5_x, 7x7; 3 blocks, 512 -> 2048).
      {"res5 1x1 reduce (first block, 14x14)", layer(b, 14, 1024, 512, 1, 1, 0)},
      {"res5 3x3/2", layer(b, 14, 512, 512, 3, 2, 1)},
      {"res5 1x1 expand", layer(b, 7, 512, 2048, 1, 1, 0)},
      {"res5 1x1/2 projection", layer(b, 14, 1024, 2048, 1, 2, 0)},
      {"res5 1x1 reduce", layer(b, 7, 2048, 512, 1, 1, 0)},
      {"res5 3x3", layer(b, 7, 512, 512, 3, 1, 1)},
  };
}

NamedConv in_layout(NamedConv v, compiler::ConvLayout layout) {
  if (v.layout_given) return v;
  v.conv.layout = layout;
  if (v.padded_channels && layout == compiler::ConvLayout::nchw32)
    v.conv.c = (v.conv.c + 31) / 32 * 32;
  return v;
}

}  // namespace schedc::runtime
