#pragma once
// CUDA tensor maps for the TMA copies of a `tma` kernel (codegen/generated_kernel.h,
// KernelEntry::tma_a / tma_b). Encoded on the host for each launch's pointer and
// leading dimension through the driver's cuTensorMapEncodeTiled, which the CUDA
// runtime hands out (cudaGetDriverEntryPointByVersion): schedc never links libcuda.

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "compiler/conv_im2col.h"

namespace schedc::runtime {

// The 128 opaque bytes of a CUtensorMap, passed by value as a kernel argument.
struct alignas(64) TmaMap {
  uint64_t opaque[16];
};

// A row-major `rows` x `cols` matrix of `dtype` ("f16", "bf16", "f32", "s8"; "s32": an s8 kernel's
// C) at `base` with `ld` elements between rows, read in `box` boxes, 128-byte swizzle, zero fill
// out of bounds. With batch > 0, a batched kernel's 3-D map: `batch` such matrices, `batch_stride`
// elements apart (codegen/generated_kernel.h), boxes one matrix deep. Throws Error(cuda) when the
// driver rejects it (its preconditions: base 16-byte aligned, ld and batch_stride times the element
// size multiples of 16).
TmaMap encode_tma_map(const std::string& dtype, const void* base, int64_t rows, int64_t cols,
                      int64_t ld, const codegen::TmaBox& box, int64_t batch = 0,
                      int64_t batch_stride = 0);

// The NHWC input of a convolution (`g`, at `base`, 16-byte aligned, C times
// the element size a multiple of 16) in TMA's im2col mode
// (compiler/conv_im2col.h): copies of box.box_rows pixels x box.box_cols
// channels, the corners im2col_corners(g), the element strides the
// convolution's, zeros outside the tensor, and the swizzle of the box's
// rows: 128 bytes (one copy a k-tile) or 64 (a k-tile's two halves,
// compiler::im2col_copies). Throws Error(cuda) when the driver rejects it.
TmaMap encode_im2col_map(const std::string& dtype, const void* base,
                         const compiler::Im2colGeometry& g, const codegen::TmaBox& box);

// The NHWC input of a convolution (`n` x `h` x `w` x `c` at `base`) for a
// `halo` launch (compiler/conv_halo.h): tile-mode boxes of one 128-byte
// panel of channels (or, `row_bytes` 64, a pixel's 64 bytes) x `box_w` x
// `box_h` pixels x `box_n` images, taken every `stride_w` columns and
// `stride_h` rows (the box's sides count the elements walked: box_w /
// stride_w pixels land a row), the 128-byte swizzle (64-byte with 64-byte
// rows), zeros outside the tensor (the padding). Throws Error(cuda) when the
// driver rejects it.
struct HaloBox {
  int64_t n = 1, h = 1, w = 1, c = 1;
  int64_t box_w = 1, box_h = 1, box_n = 1, stride_h = 1, stride_w = 1;
  int64_t row_bytes = 128;
};
TmaMap encode_halo_map(const std::string& dtype, const void* base, const HaloBox& b);

// The maps a module's launches encoded last, each under everything its
// encoding reads: a launch whose operand lies where the last one's did (a
// benchmark's runs, a network's layers called again) takes the map from here
// instead of calling the driver, whose encoding costs a launch 0.3-0.5 µs of
// host time in place (bench/NOTES.md, session 29). Thread-safe.
class TmaMapMemo {
 public:
  TmaMap tiled(const std::string& dtype, const void* base, int64_t rows, int64_t cols, int64_t ld,
               const codegen::TmaBox& box, int64_t batch = 0, int64_t batch_stride = 0);
  TmaMap im2col(const std::string& dtype, const void* base, const compiler::Im2colGeometry& g,
                const codegen::TmaBox& box);
  TmaMap halo(const std::string& dtype, const void* base, const HaloBox& b);

  // What the two above share: the map kept under `key`, else encode()'s,
  // kept (the least recently used of kEntries dropped first). An encode that
  // throws keeps nothing.
  using Key = std::array<int64_t, 16>;
  TmaMap find_or_encode(const Key& key, const std::function<TmaMap()>& encode);
  static constexpr size_t kEntries = 8;  // a launch encodes at most three

 private:
  struct Entry {
    Key key;
    TmaMap map;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;  // the most recently used last
};

}  // namespace schedc::runtime
