#pragma once
// What Module::launch does differently for a convolution module
// (GeneratedKernel::conv; codegen/generated_kernel.h, "A convolution
// module"): the checks before it launches, and where the ConvArgs
// parameter goes in each entry's parameter list.

#include <cstddef>
#include <optional>
#include <string>

#include "codegen/generated_kernel.h"
#include "compiler/conv_halo.h"
#include "compiler/conv_im2col.h"
#include "compiler/problem.h"
#include "runtime/launch.h"

namespace schedc::runtime {

// Throws Error when `args` cannot launch `kernel` on `p` as chosen: a
// convolution module without args.conv, a GEMM module with one, the input
// (A) not 16-byte aligned or sent to repack/transpose scratch (it is a
// tensor, not a matrix with a leading dimension), C·sizeof(T) not a
// multiple of 16 bytes, a problem other than the convolution's implicit
// GEMM (M = N·P·Q, K = C·R·S), a batch. Does nothing for a GEMM module
// without args.conv.
void check_conv_launch(const codegen::GeneratedKernel& kernel, const EntryChoice& choice,
                       const compiler::Problem& p, const GemmArgs& args);

// How many parameters main or fallback `e` declares after the GEMM's (and
// the batch's) common ones, by the ABI: tma_a, tma_b for a TMA entry; tma_c
// with a TMA store or TMA stream_k; sk_whole_tiles with TMA stream_k.
// ConvArgs comes right after them. (A stream_k tail declares all of the
// parameters the launch passes it: ConvArgs follows its sk_counters.)
size_t entry_extra_params(const codegen::KernelEntry& e);

struct ConvArgs;  // runtime/conv_args.h

// The convolution `conv` as compiler/conv_im2col.h takes it (NHWC: the
// launch checks the layout against the module's).
compiler::Im2colGeometry im2col_geometry(const ConvArgs& conv);
// Why entry `e` does not read A of `conv` by TMA's im2col mode, or "" when
// it does (Module::launch then passes an im2col map as tma_a and sets
// ConvArgs::im2col): an entry without a_im2col, compiler::im2col_error for
// the entry's k-tile, or SCHEDC_CONV_IM2COL=0 in the environment (the
// producer's copies, to compare the two: docs/runtime.md).
std::string conv_im2col_error(const codegen::KernelEntry& e, const ConvArgs& conv);
// The im2col copies a k-tile entry `e` can make for `conv`: 0 where
// conv_im2col_error is not "" (`why`, when given, is set to it), else
// compiler::im2col_copies for the entry's k-tile (tile_k) and panels
// (tma_a.box_cols): 1, a copy a 128-byte panel of k, or 2 of half a one-panel
// k-tile's channels each (the map's box is tma_a.box_cols / copies
// channels). The launch takes them through
// Module::conv_a_copies, which also weighs the grid (two copies only in
// one wave).
int conv_im2col_copies(const codegen::KernelEntry& e, const ConvArgs& conv,
                       std::string* why = nullptr);
// The one-wave rule: `copies` (conv_im2col_copies' answer for a convolution
// of `channels` channels) for a launch of `blocks` blocks of which `slots`
// run at once, except two copies where the grid needs more than one wave:
// 0 then (the producer's copies) and `why`, when given, says so. Two 64-byte
// copies a k-tile win where a batch-1 grid waits on latency and lose to the
// producer's 16-byte copies where a many-wave grid streams
// (docs/convolution.md, "Two copies a k-tile").
int conv_copies_in_one_wave(int copies, int64_t blocks, int64_t slots, int channels,
                            std::string* why = nullptr);

// `halo` (KernelEntry::a_halo_bytes): the geometry with which entry `e`
// (elements of `elem_bytes`) takes the input of `conv` once a tile when a
// tile's k-tiles are cut in `slices` (split_k; 0: not known yet, the
// shared memory unchecked), or nothing, and `why` (when given) says why not:
// an entry without the halo, SCHEDC_CONV_HALO=0 in the environment (to
// compare: docs/runtime.md), or compiler::halo_fit_error's reasons for its
// BM, BK and A's stages (a_halo_bytes). The launch (Module::conv_halo) then passes the map of
// halo_box as tma_a, sets ConvArgs by set_conv_halo, and counts M as
// tiles x BM (the tiles' rows, some of them junk).
std::optional<compiler::HaloGeometry> conv_halo_plan(const codegen::KernelEntry& e,
                                                     const ConvArgs& conv, int elem_bytes,
                                                     int64_t slices, std::string* why = nullptr);
// ConvArgs::im2col = 3 (4 where C is 64 bytes a pixel of `elem_bytes`-byte
// elements: compiler::halo_row_bytes) and the halo fields of `g` (halo_bytes:
// one panel's phase images); each tap's offset its window in a panel's phase
// images, in bytes.
void set_conv_halo(ConvArgs& conv, const compiler::HaloGeometry& g, int elem_bytes);
// The error of a launch of a `halo only` entry (KernelEntry::halo_only) that
// cannot take the convolution's input once a tile, `why` being
// conv_halo_plan's reason.
std::string halo_only_refusal(const codegen::KernelEntry& e, const std::string& why);
// The tensor map's geometry for `g` (runtime/tma_map.h).
struct HaloBox;
HaloBox halo_box(const ConvArgs& conv, const compiler::HaloGeometry& g, int elem_bytes);
// How a launch of `e` with `g` takes the input, for people: "the input once a
// tile (halo): ...", its phase images "of 64-byte pixels" where `row_bytes`
// (compiler::halo_row_bytes) is 64.
std::string halo_note(const compiler::HaloGeometry& g, int64_t row_bytes);

}  // namespace schedc::runtime
