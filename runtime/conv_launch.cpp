#include "runtime/conv_launch.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/conv_args.h"
#include "runtime/error.h"
#include "runtime/host_data.h"
#include "runtime/tma_map.h"

namespace schedc::runtime {

void check_conv_launch(const codegen::GeneratedKernel& kernel, const EntryChoice& choice,
                       const compiler::Problem& p, const GemmArgs& args) {
  auto fail = [&](const std::string& why) {
    throw Error(Error::Kind::cuda, "convolution launch of " + choice.name + ": " + why);
  };
  if (kernel.conv.empty()) {
    if (args.conv) fail("the module computes a GEMM; it takes no convolution (ConvArgs)");
    return;
  }
  const ConvArgs* conv = args.conv;
  if (!conv)
    fail("the module computes a convolution (" + kernel.conv +
         "): it needs the convolution's geometry and offset table (GemmArgs::conv)");
  if (p.batch > 1) fail("a convolution module takes no batch of GEMMs (its N is the images)");
  const int64_t taps = conv->taps;
  if (taps < 1 || taps > compiler::kMaxConvTaps)
    fail("ConvArgs has " + std::to_string(taps) + " taps; 1 to " +
         std::to_string(compiler::kMaxConvTaps) + " are allowed");
  const int64_t m = int64_t(conv->n) * conv->p * conv->q, k = int64_t(conv->c) * taps;
  if (p.m != m || p.k != k || p.a_col || !p.b_col || p.c_col)
    fail("the problem " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
         std::to_string(p.k) +
         " is not the convolution's implicit GEMM (M = N·P·Q = " + std::to_string(m) +
         ", K = C·R·S = " + std::to_string(k) + ", B column-major, A and C row-major)");
  if (kernel.conv == "nchw32" && (conv->c % 32 != 0 || p.n % 32 != 0))
    fail("an NCHW32 convolution needs C and K to be multiples of 32 (C is " +
         std::to_string(conv->c) + ", K " + std::to_string(p.n) + ")");
  const int es = elem_size(elem_type(kernel.dtype));
  if ((int64_t(conv->c) * es) % 16 != 0)
    fail("C = " + std::to_string(conv->c) + " channels of " + kernel.dtype + " are " +
         std::to_string(int64_t(conv->c) * es) +
         " bytes a pixel, not a multiple of 16 (the copies read 16-byte chunks)");
  if (reinterpret_cast<uintptr_t>(args.a) % 16 != 0)
    fail(
        "the input tensor (A) is not 16-byte aligned; it is read in 16-byte chunks and never "
        "repacked (it is a tensor, not a matrix)");
  if (choice.repack_a || choice.transpose_a)
    fail("the input tensor (A) cannot be " +
         std::string(choice.repack_a ? "repacked" : "transposed") + " (" + choice.why +
         "): a convolution's input must meet main's preconditions as it lies");
}

size_t entry_extra_params(const codegen::KernelEntry& e) {
  if (!e.uses_tma()) return 0;
  const bool tma_stream_k = e.stream_k;
  return 2 + (e.tma_c.box_rows > 0 || tma_stream_k ? 1 : 0) + (tma_stream_k ? 1 : 0);
}

compiler::Im2colGeometry im2col_geometry(const ConvArgs& conv) {
  compiler::Im2colGeometry g;
  g.n = conv.n, g.h = conv.h, g.w = conv.w, g.c = conv.c;
  g.stride_h = conv.stride_h, g.stride_w = conv.stride_w;
  g.pad_h = conv.pad_h, g.pad_w = conv.pad_w;
  // The last tap, (R - 1, S - 1), is the dilated filter's reach.
  if (conv.taps > 0) {
    g.reach_h = conv.tap[conv.taps - 1].dh;
    g.reach_w = conv.tap[conv.taps - 1].dw;
  }
  return g;
}

std::string conv_im2col_error(const codegen::KernelEntry& e, const ConvArgs& conv) {
  if (!e.a_im2col)
    return "this kernel's producer copies A itself (TMA's im2col mode is the Hopper NHWC "
           "kernel's)";
  if (const char* v = std::getenv("SCHEDC_CONV_IM2COL"); v && std::string(v) == "0")
    return "SCHEDC_CONV_IM2COL=0";
  return compiler::im2col_error(im2col_geometry(conv), int(e.tile_k), int(e.tma_a.box_cols));
}

int conv_im2col_copies(const codegen::KernelEntry& e, const ConvArgs& conv, std::string* why) {
  const std::string no = conv_im2col_error(e, conv);
  if (why) *why = no;
  if (!no.empty()) return 0;
  return compiler::im2col_copies(im2col_geometry(conv), int(e.tile_k), int(e.tma_a.box_cols));
}

int conv_copies_in_one_wave(int copies, int64_t blocks, int64_t slots, int channels,
                            std::string* why) {
  if (copies < 2 || blocks <= slots) return copies;
  if (why)
    *why = "C = " + std::to_string(channels) +
           " takes two 64-byte copies a k-tile, and the grid's " + std::to_string(blocks) +
           " blocks run in more than one wave (" + std::to_string(slots) + " at once)";
  return 0;
}

std::optional<compiler::HaloGeometry> conv_halo_plan(const codegen::KernelEntry& e,
                                                     const ConvArgs& conv, int elem_bytes,
                                                     int64_t slices, std::string* why) {
  auto no = [&](const std::string& reason) -> std::optional<compiler::HaloGeometry> {
    if (why) *why = reason;
    return std::nullopt;
  };
  if (e.a_halo_bytes == 0 || e.persistent || e.stream_k)
    return no("this kernel copies A a k-tile (the input once a tile is `halo`'s)");
  if (const char* v = std::getenv("SCHEDC_CONV_HALO"); v && std::string(v) == "0")
    return no("SCHEDC_CONV_HALO=0");
  const compiler::Conv2d v = conv_of_args(conv);
  if (std::string err =
          compiler::halo_fit_error(v, e.tile_m, e.tile_k, elem_bytes, e.a_halo_bytes, slices);
      !err.empty())
    return no(err);
  if (compiler::halo_row_bytes(v, elem_bytes) < compiler::kHaloPanelBytes && !e.a_halo_64b)
    return no("C = " + std::to_string(conv.c) +
              " is 64 bytes a pixel, which this kernel's A (not one 128-byte panel a k-tile) "
              "cannot read two taps a k-tile of");
  compiler::HaloGeometry g = compiler::halo_geometry(v, e.tile_m);
  if (why) why->clear();
  return g;
}

std::string halo_only_refusal(const codegen::KernelEntry& e, const std::string& why) {
  return e.name + " was compiled with 'halo only' (A's shared memory the " +
         std::to_string(e.a_halo_bytes) +
         " bytes of its file's convolution's phase images) and reads A no other way; this "
         "launch cannot take the convolution's input once a tile: " +
         why + " (drop 'only' for a kernel that also copies A a k-tile)";
}

void set_conv_halo(ConvArgs& conv, const compiler::HaloGeometry& g, int elem_bytes) {
  const int64_t row = compiler::halo_row_bytes(conv_of_args(conv), elem_bytes);
  conv.im2col = row < compiler::kHaloPanelBytes ? 4 : 3;
  conv.halo_pitch = int32_t(g.pitch), conv.halo_block = int32_t(g.block);
  conv.halo_images = int32_t(g.images), conv.halo_out_rows = int32_t(g.out_rows);
  conv.halo_bands = int32_t(g.bands);
  conv.halo_row_min = int32_t(g.rows.min), conv.halo_col_min = int32_t(g.cols.min);
  conv.halo_region_bytes = int32_t(g.region_rows * row);
  const int64_t per_phase = g.images * g.block;
  conv.halo_bytes = int32_t(int64_t(g.phases.size()) * per_phase * row);
  conv.halo_phases = int32_t(g.phases.size());
  for (size_t i = 0; i < g.phases.size(); ++i) {
    conv.halo_phase_h[i] = int16_t(g.phases[i].e_h);
    conv.halo_phase_w[i] = int16_t(g.phases[i].e_w);
  }
  for (size_t t = 0; t < g.taps.size(); ++t)
    conv.tap[t].offset = int32_t((g.taps[t].phase * per_phase + g.taps[t].shift) * row);
}

HaloBox halo_box(const ConvArgs& conv, const compiler::HaloGeometry& g, int elem_bytes) {
  HaloBox b;
  b.row_bytes = compiler::halo_row_bytes(conv_of_args(conv), elem_bytes);
  b.n = conv.n, b.h = conv.h, b.w = conv.w, b.c = conv.c;
  b.box_w = g.pitch * conv.stride_w, b.box_h = g.box_rows * conv.stride_h, b.box_n = g.images;
  b.stride_h = conv.stride_h, b.stride_w = conv.stride_w;
  return b;
}

std::string halo_note(const compiler::HaloGeometry& g, int64_t row_bytes) {
  const std::string tile = g.bands > 1 ? std::to_string(g.out_rows) + " output row(s) of an image"
                           : g.images > 1 ? std::to_string(g.images) + " images"
                                          : "one image";
  return "the input once a tile (halo): " + tile + " a tile, " + std::to_string(g.phases.size()) +
         (row_bytes < compiler::kHaloPanelBytes
              ? " phase image(s) of 64-byte pixels (two taps a k-tile), "
              : " phase image(s) a panel of channels, ") +
         std::to_string(g.tiles) + " tiles";
}

}  // namespace schedc::runtime
