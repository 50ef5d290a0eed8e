#pragma once
// A convolution's input copied once a tile (docs/convolution.md, "The input
// once a tile, probed"; bench/probe_halo.cu): the model of the copies and of
// the windows wgmma reads, as plain data and pure functions, tested on the
// CPU against the convolution's definition (tests/unit/conv_halo_test.cpp).
// The probe measured it (res5 3x3 at batch 8: 2.31x of im2col + cuBLAS on an
// H200, schedc's im2col kernels 1.63x); the Hopper kernel takes it with the
// `halo` directive where the launch finds it fits (runtime/conv_launch.h).
//
// Per axis (rows shown; columns alike), tap r of a filter with dilation d,
// padding pad and stride σ reads input row
//   σ·p − pad + r·d = σ·(p + a_r) + e_r,   0 ≤ e_r < σ
// of output row p: a phase e_r and a shift a_r in that phase's rows. A
// phase image (e_h, e_w) is the input's rows σ·i + e_h and columns σ·j + e_w
// for i from a_min on and j from b_min on: one TMA tile-mode box a 128-byte
// panel of channels, element strides (σ_w, σ_h), zeros outside the input
// (the padding: no predicate). With the row pitch WP = Q + span_w
// (span = a_max − a_min), output pixel (p, q) of a tile is virtual row
// g·block + (p − p0)·WP + q (g: the tile's image; p0: its first output row)
// and tap (r, s) reads row (a_r − a_min)·WP + (b_s − b_min) further on in its
// phase's image: every tap is one window of BM rows moved by a constant,
// which wgmma's A descriptor takes as its start (the 128-byte swizzle is a
// function of the shared address, so any row may start a window). Rows with
// q ≥ Q, or past the tile's output rows, are junk: computed, never stored.
// A valid row's reads stay inside its own image's block.
//
// A tile is G whole images where one image's (P − 1)·WP + Q rows fit in BM
// (as many as fit), else a band of Pt output rows of one image.
//
// A pixel's channels are a 128-byte panel (or several), or, where C is 64
// bytes a pixel, one 64-byte row (the 64-byte swizzle): a kernel whose
// k-tile is one 128-byte panel (BK·elem = 128) then reads two taps a k-tile,
// each k-tile's first half from tap 2j's window and its second from tap
// 2j + 1's (halo_row_bytes).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/conv.h"

namespace schedc::compiler {

// One axis: each tap's phase and its shift from the smallest (a_r − a_min),
// the smallest a (a_min), the span a_max − a_min.
struct HaloAxis {
  int64_t stride = 1, min = 0, span = 0;
  std::vector<int64_t> phase, shift;  // by tap index along the axis
};
HaloAxis halo_axis(int64_t taps, int64_t dil, int64_t pad, int64_t stride);

struct HaloPhase {
  int64_t e_h = 0, e_w = 0;  // its input rows σ_h·i + e_h, columns σ_w·j + e_w
};

struct HaloTap {
  int phase = 0;      // index into HaloGeometry::phases
  int64_t shift = 0;  // virtual rows from an output pixel's row to its read
};

struct HaloGeometry {
  HaloAxis rows, cols;
  int64_t pitch = 0;      // WP = Q + cols.span: virtual rows an output row takes
  int64_t images = 1;     // G: images a tile (1 with bands)
  int64_t out_rows = 0;   // Pt: output rows of an image a tile (P with whole images)
  int64_t bands = 1;      // tiles an image (⌈P / Pt⌉; 1 with whole images)
  int64_t box_rows = 0;   // phase rows of a phase image's box: Pt + rows.span
  int64_t block = 0;      // virtual rows an image takes in a phase's region: box_rows·WP
  int64_t tiles = 0;      // M tiles: ⌈N / G⌉ or N·bands
  int64_t max_shift = 0;  // the largest tap shift
  // Rows of one panel's phase images (one after another, G·block each) with
  // the last window's reach: max(phases·G·block, (phases − 1)·G·block + BM +
  // max_shift), up to a multiple of 8 (the 128-byte swizzle's 1024-byte
  // period: every panel's region starts aligned, as TMA's boxes do best).
  // Times 128 bytes, times the panels, is the shared memory.
  int64_t region_rows = 0;
  std::vector<HaloPhase> phases;
  std::vector<HaloTap> taps;  // r·S + s
};

// A panel of channels: a phase image's row where C is a multiple of it.
constexpr int64_t kHaloPanelBytes = 128;
// The bytes of one pixel's row in a phase image: 64 where C is 64 bytes a
// pixel, else kHaloPanelBytes (C a multiple of it, or halo_error says why
// not).
int64_t halo_row_bytes(const Conv2d& conv, int elem_bytes);

// Why a kernel with BM-row tiles (`block_m`) and `elem_bytes`-byte elements
// cannot take `conv`'s input this way ("" when it can): NHWC only, C a
// multiple of a 128-byte panel or 64 bytes a pixel, strides up to 8 (TMA's element strides),
// an output row (Q pixels) inside BM rows, boxes of at most 256 elements a
// side (WP·σ_w and box_rows·σ_h).
std::string halo_error(const Conv2d& conv, int64_t block_m, int elem_bytes);
// The geometry (halo_error(conv, block_m, …) must be "").
HaloGeometry halo_geometry(const Conv2d& conv, int64_t block_m);

// The phase images a kernel takes at most (ConvArgs::halo_phase_h's size).
constexpr int kMaxHaloPhases = 4;
// The most channel blocks (BK channels each) the k-tiles of one of `slices`
// slices span, in halo's order (block by block, each block's taps in turn;
// the kernel's split: codegen/blocks_wgmma_split_k.cpp).
int64_t halo_blocks_a_slice(int64_t k_tiles, int64_t taps, int64_t slices);
// Why a kernel with BM x BK tiles and `a_bytes` of A's stages cannot take
// `conv`'s input once a tile when its k-tiles are cut in `slices` (0: not
// known yet, the bytes unchecked), "" when it can: halo_error, C not a
// multiple of BK (a k-tile's channels one tap's; with 64-byte pixels, BK
// not one 128-byte panel: a k-tile two taps'), more than kMaxHaloPhases
// phase images, or a slice's panels of phase images past A's stages. `bytes`,
// when given, is set to those panels' bytes.
std::string halo_fit_error(const Conv2d& conv, int64_t block_m, int64_t block_k, int elem_bytes,
                           int64_t a_bytes, int64_t slices, int64_t* bytes = nullptr);

struct HaloPixel {
  int64_t n = 0, p = 0, q = 0;
};
// The output pixel of virtual row v (0 ≤ v < BM) of tile `tile`, or nothing
// (a junk row: computed, never stored).
std::optional<HaloPixel> halo_output(const Conv2d& conv, const HaloGeometry& g, int64_t tile,
                                     int64_t v);
// The first output row and image of tile `tile`, and the TMA box's first
// input row and column (the coordinates of phase 0 less its e): the copy of
// phase ph starts at (σ_h·row0 + e_h, σ_w·col0 + e_w) of image n0.
struct HaloTileOrigin {
  int64_t n0 = 0, p0 = 0, row0 = 0, col0 = 0;
};
HaloTileOrigin halo_tile_origin(const HaloGeometry& g, int64_t tile);
// The input element that row `row` (0 ≤ row < G·block) of phase `phase`'s
// image in tile `tile` holds: (n, h, w), possibly outside the input or past
// N (TMA wrote a zero there).
struct HaloSource {
  int64_t n = 0, h = 0, w = 0;
};
HaloSource halo_source(const HaloGeometry& g, int64_t tile, int phase, int64_t row);

}  // namespace schedc::compiler
