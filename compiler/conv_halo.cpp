#include "compiler/conv_halo.h"

#include <algorithm>
#include <map>
#include <utility>

namespace schedc::compiler {

namespace {

// ⌊a / b⌋ for b > 0.
int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// TMA's limits (CUDA 13.0's cuda.h, tile mode): box sides of at most 256
// elements, element strides 1 to 8.
constexpr int64_t kMaxBoxSide = 256, kMaxElementStride = 8, kPanelBytes = kHaloPanelBytes;

// Virtual rows the output pixels of `out_rows` output rows take: the last
// row's Q pixels after (out_rows − 1) pitches.
int64_t rows_of(int64_t out_rows, int64_t pitch, int64_t q) {
  return (out_rows - 1) * pitch + q;
}

}  // namespace

HaloAxis halo_axis(int64_t taps, int64_t dil, int64_t pad, int64_t stride) {
  HaloAxis a;
  a.stride = stride;
  std::vector<int64_t> shift(taps);
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t off = t * dil - pad;
    shift[t] = floor_div(off, stride);
    a.phase.push_back(off - stride * shift[t]);
  }
  a.min = *std::min_element(shift.begin(), shift.end());
  a.span = *std::max_element(shift.begin(), shift.end()) - a.min;
  for (int64_t s : shift) a.shift.push_back(s - a.min);
  return a;
}

int64_t halo_row_bytes(const Conv2d& conv, int elem_bytes) {
  return conv.c * elem_bytes == kPanelBytes / 2 ? kPanelBytes / 2 : kPanelBytes;
}

std::string halo_error(const Conv2d& conv, int64_t block_m, int elem_bytes) {
  if (conv.layout != ConvLayout::nhwc)
    return std::string("the input is ") + to_string(conv.layout) +
           ": the copy takes NHWC pixels of 128-byte panels of channels";
  if ((conv.c * elem_bytes) % kPanelBytes != 0 && conv.c * elem_bytes != kPanelBytes / 2)
    return "C = " + std::to_string(conv.c) + " channels are " +
           std::to_string(conv.c * elem_bytes) + " bytes a pixel, neither 64 nor a multiple of a " +
           std::to_string(kPanelBytes) + "-byte panel";
  if (conv.stride_h > kMaxElementStride || conv.stride_w > kMaxElementStride)
    return "a stride past " + std::to_string(kMaxElementStride) + " (TMA's element strides)";
  const HaloAxis cols = halo_axis(conv.s, conv.dil_w, conv.pad_w, conv.stride_w);
  const int64_t pitch = conv.q() + cols.span;
  if (conv.q() > block_m)
    return "an output row of Q = " + std::to_string(conv.q()) +
           " pixels is more than BM = " + std::to_string(block_m) + " rows";
  if (pitch * conv.stride_w > kMaxBoxSide)
    return "a phase image's row, " + std::to_string(pitch) + " pixels every " +
           std::to_string(conv.stride_w) + ", spans more than " + std::to_string(kMaxBoxSide) +
           " input columns (TMA's box)";
  const HaloGeometry g = halo_geometry(conv, block_m);
  if (g.box_rows * conv.stride_h > kMaxBoxSide)
    return "a tile's phase image, " + std::to_string(g.box_rows) + " rows every " +
           std::to_string(conv.stride_h) + ", spans more than " + std::to_string(kMaxBoxSide) +
           " input rows (TMA's box)";
  return "";
}

HaloGeometry halo_geometry(const Conv2d& conv, int64_t block_m) {
  HaloGeometry g;
  g.rows = halo_axis(conv.r, conv.dil_h, conv.pad_h, conv.stride_h);
  g.cols = halo_axis(conv.s, conv.dil_w, conv.pad_w, conv.stride_w);
  const int64_t p = conv.p(), q = conv.q();
  g.pitch = q + g.cols.span;
  const int64_t image_block = (p + g.rows.span) * g.pitch;
  if (rows_of(p, g.pitch, q) <= block_m) {  // whole images: as many as fit
    g.out_rows = p;
    g.images = 1 + (block_m - rows_of(p, g.pitch, q)) / image_block;
    g.bands = 1;
    g.tiles = (conv.n + g.images - 1) / g.images;
  } else {  // bands of output rows
    g.out_rows = std::max<int64_t>(1, (block_m - q) / g.pitch + 1);
    g.images = 1;
    g.bands = (p + g.out_rows - 1) / g.out_rows;
    g.tiles = conv.n * g.bands;
  }
  g.box_rows = g.out_rows + g.rows.span;
  g.block = g.box_rows * g.pitch;
  std::map<std::pair<int64_t, int64_t>, int> index;  // (e_h, e_w) -> phase
  for (int64_t r = 0; r < conv.r; ++r)
    for (int64_t s = 0; s < conv.s; ++s) {
      const std::pair<int64_t, int64_t> e{g.rows.phase[r], g.cols.phase[s]};
      auto [it, fresh] = index.emplace(e, int(g.phases.size()));
      if (fresh) g.phases.push_back({e.first, e.second});
      const int64_t shift = g.rows.shift[r] * g.pitch + g.cols.shift[s];
      g.taps.push_back({it->second, shift});
      g.max_shift = std::max(g.max_shift, shift);
    }
  const int64_t per_phase = g.images * g.block, phases = int64_t(g.phases.size());
  const int64_t rows =
      std::max(phases * per_phase, (phases - 1) * per_phase + block_m + g.max_shift);
  g.region_rows = (rows + 7) / 8 * 8;  // whole 1024-byte swizzle periods: panels stay aligned
  return g;
}

int64_t halo_blocks_a_slice(int64_t k_tiles, int64_t taps, int64_t slices) {
  int64_t most = 0;
  for (int64_t s = 0; s < slices; ++s) {
    const int64_t first = (s * k_tiles + slices - 1) / slices,
                  last = ((s + 1) * k_tiles + slices - 1) / slices;
    if (last > first) most = std::max(most, (last - 1) / taps - first / taps + 1);
  }
  return most;
}

std::string halo_fit_error(const Conv2d& conv, int64_t block_m, int64_t block_k, int elem_bytes,
                           int64_t a_bytes, int64_t slices, int64_t* bytes) {
  if (std::string err = halo_error(conv, block_m, elem_bytes); !err.empty()) return err;
  const int64_t row_bytes = halo_row_bytes(conv, elem_bytes);
  if (row_bytes < kPanelBytes && block_k * elem_bytes != kPanelBytes)
    return "C = " + std::to_string(conv.c) +
           " is 64 bytes a pixel, and BK = " + std::to_string(block_k) +
           " is not one 128-byte panel (a k-tile of two taps)";
  if (row_bytes == kPanelBytes && conv.c % block_k != 0)
    return "C = " + std::to_string(conv.c) +
           " is not a multiple of BK = " + std::to_string(block_k) +
           " (a k-tile's channels would span two taps)";
  const HaloGeometry g = halo_geometry(conv, block_m);
  if (g.phases.size() > size_t(kMaxHaloPhases))
    return std::to_string(g.phases.size()) + " phase images (strides " +
           std::to_string(conv.stride_h) + "x" + std::to_string(conv.stride_w) + "); at most " +
           std::to_string(kMaxHaloPhases);
  // A slice's blocks, each BK channels: that many 128-byte panels of phase
  // images; with 64-byte pixels the one block of C channels, one region of
  // 64-byte rows.
  const int64_t taps = conv.r * conv.s,
                panels = slices == 0 ? 0
                         : row_bytes < kPanelBytes
                             ? 1
                             : halo_blocks_a_slice(taps * conv.c / block_k, taps, slices) *
                                   (block_k * elem_bytes / kPanelBytes),
                need = panels * g.region_rows * row_bytes;
  if (bytes) *bytes = need;
  if (need > a_bytes)
    return "the phase images take " + std::to_string(need) + " bytes (" + std::to_string(panels) +
           " panel(s) of channels), A's stages " + std::to_string(a_bytes);
  return "";
}

HaloTileOrigin halo_tile_origin(const HaloGeometry& g, int64_t tile) {
  HaloTileOrigin o;
  o.n0 = g.bands > 1 ? tile / g.bands : tile * g.images;
  o.p0 = g.bands > 1 ? (tile % g.bands) * g.out_rows : 0;
  o.row0 = o.p0 + g.rows.min;
  o.col0 = g.cols.min;
  return o;
}

std::optional<HaloPixel> halo_output(const Conv2d& conv, const HaloGeometry& g, int64_t tile,
                                     int64_t v) {
  const HaloTileOrigin o = halo_tile_origin(g, tile);
  const int64_t image = v / g.block, rem = v % g.block, row = rem / g.pitch, q = rem % g.pitch;
  const HaloPixel px{o.n0 + image, o.p0 + row, q};
  if (image >= g.images || px.n >= conv.n || row >= g.out_rows || px.p >= conv.p() || q >= conv.q())
    return std::nullopt;
  return px;
}

HaloSource halo_source(const HaloGeometry& g, int64_t tile, int phase, int64_t row) {
  const HaloTileOrigin o = halo_tile_origin(g, tile);
  const HaloPhase& e = g.phases[size_t(phase)];
  const int64_t image = row / g.block, rem = row % g.block;
  return {o.n0 + image, g.rows.stride * (o.row0 + rem / g.pitch) + e.e_h,
          g.cols.stride * (o.col0 + rem % g.pitch) + e.e_w};
}

}  // namespace schedc::compiler
