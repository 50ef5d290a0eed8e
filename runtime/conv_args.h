#pragma once
// The host's copy of a convolution entry's last parameter (codegen/
// generated_kernel.h, "A convolution module"): the geometry and the offset
// table, laid out as the generated `struct ConvArgs` is.

#include <cstdint>
#include <string>

#include "compiler/conv.h"
#include "compiler/conv_halo.h"

namespace schedc::runtime {

struct ConvTapArg {
  int32_t offset = 0;      // elements from the window origin
  int16_t dh = 0, dw = 0;  // the tap's displacement (r·dil_h, s·dil_w)
};

struct ConvArgs {
  int32_t n = 0, h = 0, w = 0, c = 0, p = 0, q = 0;
  int32_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int32_t taps = 0;
  // 1 or 2: A comes by TMA's im2col mode through the entry's tma_a, in that
  // many copies a k-tile (set by the launch: compiler/conv_im2col.h,
  // im2col_copies); 3: the tile's input once, as phase images through
  // tma_a (a `halo` entry, below), in rows of a 128-byte panel; 4: the same
  // in 64-byte rows, C being 64 bytes a pixel (two taps a k-tile:
  // compiler/conv_halo.h, halo_row_bytes); 0: the producer's threads copy it.
  int32_t im2col = 0;
  // With im2col 3 or 4, tap[t].offset is tap t's window in a panel's phase
  // images ((phase·images·block + shift)·row bytes), not an input offset.
  ConvTapArg tap[compiler::kMaxConvTaps];
  // After the table, read only by `halo` entries (whose ConvArgs declares
  // them; the others' parameter ends at the table, and a launch copies a
  // parameter's declared bytes): compiler/conv_halo.h's HaloGeometry.
  int32_t halo_pitch = 0, halo_block = 0, halo_images = 0, halo_out_rows = 0, halo_bands = 0;
  int32_t halo_row_min = 0, halo_col_min = 0;  // the phase images' first row, column (a_min)
  int32_t halo_region_bytes = 0;               // a panel's phase images and the windows' reach
  int32_t halo_bytes = 0;                      // a panel's phase images: what its copies land
  int32_t halo_phases = 0;                     // at most compiler::kMaxHaloPhases
  int16_t halo_phase_h[compiler::kMaxHaloPhases] = {},
          halo_phase_w[compiler::kMaxHaloPhases] = {};  // each phase's e_h, e_w
};
static_assert(sizeof(ConvTapArg) == 8, "a tap is 8 bytes, as the kernel reads it");
static_assert(sizeof(ConvArgs) == 48 + 8 * compiler::kMaxConvTaps + 56,
              "ConvArgs as the kernel reads it");

// `conv`'s parameter: the sizes, strides and padding, and the taps of
// compiler::offset_table (r·S + s). Throws Error when conv_error(conv) is
// not "" (a size past 32 bits, more taps than the table holds).
ConvArgs make_conv_args(const compiler::Conv2d& conv);

// The convolution `conv` describes (its filter's R, S and dilation from the
// taps' displacements).
compiler::Conv2d conv_of_args(const ConvArgs& conv);

// Why a convolution module of `dtype` ("s8", "f16", "bf16") and layout
// `module_layout` (GeneratedKernel::conv: "nhwc" or "nchw32") cannot compute
// `conv`, or "" when it can: compiler::conv_error, another layout than the
// module's (its ABI), C·sizeof(T) not a multiple of 16 bytes (a copy of A
// reads 16-byte chunks of a pixel's channels). (conv_error bounds the
// taps' 16-bit displacements and 32-bit offsets.)
std::string conv_run_error(const compiler::Conv2d& conv, const std::string& dtype,
                           const std::string& module_layout);

}  // namespace schedc::runtime
