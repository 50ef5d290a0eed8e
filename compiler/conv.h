#pragma once
// A 2-D convolution as an implicit GEMM (issue 21; docs/convolution.md): the
// address arithmetic that the convolution kernels' copies will use, as plain
// data and pure functions, tested on the CPU against the convolution's own
// definition. Not yet reachable from the language: the kernels, the
// directive and `schedc bench --conv` come next.
//
// The output O[n][k][oh][ow] = sum over c, r, s of
//   I[n][c][oh·stride_h − pad_h + r·dil_h][ow·stride_w − pad_w + s·dil_w] · F[k][c][r][s]
// (input elements outside H x W are zero: the padding) is the GEMM
//   C (M x N) = A (M x K) · B (K x N),  M = N·P·Q output pixels,
//   N = K filters, K = C·R·S,
// where row m of A is output pixel (n, oh, ow) and column kk a (c, r, s):
// A is never built (im2col); a copy reads A(m, kk) straight from the input.
//
// The address of A(m, kk) splits into three parts added together, none of
// which needs a division in the main loop:
//   pixel_base(m).offset   the input offset of the pixel's window origin
//                          (n, oh·stride_h − pad_h, ow·stride_w − pad_w), per
//                          row of the tile, computed once per tile;
//   taps[r·S + s].offset   the tap's offset from the origin, from a table the
//                          host computes (`offset_table`), R·S entries;
//   channel_offset(c)      the channel's offset inside a pixel.
// Padding is predication: the element is zero unless 0 ≤ h0 + dh < H and
// 0 ≤ w0 + dw < W for the tap's displacement (dh, dw).
//
// The K order puts the channels that are contiguous in memory innermost, so
// a copy's vector of consecutive kk is one vector in memory: NHWC,
// kk = (r·S + s)·C + c; NCHW32 (MegEngine's int8 layout: 32 channels
// interleaved, [N][C/32][H][W][32]), kk = ((c/32)·R·S + r·S + s)·32 + c%32.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace schedc::compiler {

enum class ConvLayout { nhwc, nchw32 };
const char* to_string(ConvLayout l);  // "NHWC", "NCHW32": for people
// The layout's word in the `conv` directive, `--conv` and
// GeneratedKernel::conv ("nhwc", "nchw32"), and the layout a word names.
const char* layout_word(ConvLayout l);
std::optional<ConvLayout> layout_from_word(const std::string& word);

struct Conv2d {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input: N images, C channels, H x W
  int64_t k = 1, r = 1, s = 1;         // K filters of C x R x S
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dil_h = 1, dil_w = 1;
  ConvLayout layout = ConvLayout::nhwc;

  // Output height and width (P, Q).
  int64_t p() const { return (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1; }
  int64_t q() const { return (w + 2 * pad_w - dil_w * (s - 1) - 1) / stride_w + 1; }
  // The implicit GEMM's sizes.
  int64_t gemm_m() const { return n * p() * q(); }
  int64_t gemm_n() const { return k; }
  int64_t gemm_k() const { return c * r * s; }
};

// Why `conv` is not a convolution schedc computes ("" when it is): sizes and
// strides at least 1, padding at least 0 (a pad wider than the filter only
// gives pixels that read nothing: zeros, still a convolution), an output of
// at least one pixel, C a multiple of 32 for NCHW32, and every
// offset below 2^31 elements (the kernels' offsets are 32-bit).
std::string conv_error(const Conv2d& conv);
// Why the NHWC kernels cannot copy `conv`'s input whose elements are
// `elem_bytes` bytes of `dtype` ("s8", "f16"…): they copy 16-byte chunks of
// a pixel's channels, so C·elem_bytes must be a multiple of 16; "" when it is.
std::string conv_channels_error(const Conv2d& conv, int elem_bytes, const std::string& dtype);

// The convolution as the `conv` directive (and `--conv`) writes it, without
// the keyword: "8x56x56x64 filter 64x3x3 stride 1 pad 1" (dilation when not
// 1; two values where the axes differ; the layout word for NCHW32).
std::string conv_text(const Conv2d& conv);

// Offset of input element (n, c, h, w) in the input tensor, in elements.
int64_t input_offset(const Conv2d& conv, int64_t n, int64_t c, int64_t h, int64_t w);
// Offset of channel c inside a pixel (n, ., h, w): c for NHWC; for NCHW32
// its group's plane (c/32)·H·W·32 and its lane c%32.
int64_t channel_offset(const Conv2d& conv, int64_t c);

// Column kk of the implicit GEMM as (c, r, s).
struct KCoord {
  int64_t c = 0, r = 0, s = 0;
};
KCoord k_coord(const Conv2d& conv, int64_t kk);

// One filter tap (r, s): its displacement from the window origin and the
// input offset that displacement makes.
struct ConvTap {
  int64_t offset = 0;  // dh·(row stride) + dw·(pixel stride), in elements
  int32_t dh = 0, dw = 0;
};
// The R·S taps, indexed r·S + s: what the host passes to the kernel.
std::vector<ConvTap> offset_table(const Conv2d& conv);
// Bytes of the table as kernels take it (a 32-bit offset and two 16-bit
// displacements a tap), and whether it fits beside the GEMM's own
// parameters in CUDA's 4 KB of kernel parameters (else it goes to a global
// buffer).
int64_t offset_table_bytes(const Conv2d& conv);
constexpr int64_t kKernelParamBytes = 4096, kGemmParamBytes = 512;
// The most taps (R·S) a convolution kernel takes: its ConvArgs parameter
// (codegen/generated_kernel.h) holds a table of this many, 2 KB, beside the
// GEMM's parameters and tensor maps within the 4 KB.
constexpr int64_t kMaxConvTaps = 256;
// The largest padded input height or width and dilated filter extent: the
// kernels keep a row's window origin (h0, w0) in two 16-bit halves.
constexpr int64_t kMaxConvExtent = 16383;
bool offset_table_fits_params(const Conv2d& conv);

// Output pixel m's window origin (in input coordinates; h0, w0 may be
// negative: padding) and the input offset of that origin (a number to add
// tap offsets to; it names an element only once a tap lands inside).
struct PixelBase {
  int64_t n = 0, h0 = 0, w0 = 0;
  int64_t offset = 0;
};
PixelBase pixel_base(const Conv2d& conv, int64_t m);

// A(m, kk) as a copy reads it: the input offset, or nothing where the tap
// falls in the padding (the element is zero). `taps` is offset_table(conv).
std::optional<int64_t> gemm_a_offset(const Conv2d& conv, const std::vector<ConvTap>& taps,
                                     int64_t m, int64_t kk);

}  // namespace schedc::compiler
