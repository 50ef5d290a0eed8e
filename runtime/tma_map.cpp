#include "runtime/tma_map.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "compiler/conv_halo.h"
#include "runtime/driver_api.h"
#include "runtime/error.h"

namespace schedc::runtime {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

using EncodeIm2col = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                  const cuuint64_t*, const cuuint64_t*, const int*, const int*,
                                  cuuint32_t, cuuint32_t, const cuuint32_t*, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion,
                                  CUtensorMapFloatOOBfill);

CUtensorMapDataType map_type(const std::string& dtype, int64_t& elem) {
  elem = 4;
  if (dtype == "f16") {
    elem = 2;
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  }
  if (dtype == "bf16") {
    elem = 2;
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  }
  if (dtype == "s8") {  // A and B of an s8 kernel: bytes (zero past the edges)
    elem = 1;
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  if (dtype == "s32") return CU_TENSOR_MAP_DATA_TYPE_INT32;  // C of an s8 kernel
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

TmaMap to_map(const CUtensorMap& map) {
  TmaMap out{};
  static_assert(sizeof(out) == sizeof(map), "CUtensorMap is 128 bytes");
  std::memcpy(&out, &map, sizeof out);
  return out;
}

}  // namespace

TmaMap encode_tma_map(const std::string& dtype, const void* base, int64_t rows, int64_t cols,
                      int64_t ld, const codegen::TmaBox& box, int64_t batch, int64_t batch_stride) {
  int64_t elem = 4;
  const CUtensorMapDataType type = map_type(dtype, elem);
  // Innermost dimension first: columns, then rows with the leading dimension as
  // pitch, then (batched) the GEMMs with the batch stride as pitch.
  const cuuint32_t rank = batch > 0 ? 3 : 2;
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(batch)};
  const cuuint64_t pitch[2] = {cuuint64_t(ld * elem), cuuint64_t(batch_stride * elem)};
  const cuuint32_t box_dims[3] = {box.box_cols, box.box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map;
  static const auto encode =
      driver_function<EncodeTiled>("cuTensorMapEncodeTiled", "TMA needs a CUDA 12 driver");
  CUresult r = encode(&map, type, rank, const_cast<void*>(base), dims, pitch, box_dims,
                      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(Error::Kind::cuda,
                "cuTensorMapEncodeTiled(" +
                    (batch > 0 ? std::to_string(batch) + " x " : std::string()) +
                    std::to_string(rows) + " x " + std::to_string(cols) + " " + dtype + ", ld " +
                    std::to_string(ld) +
                    (batch > 0 ? ", batch stride " + std::to_string(batch_stride) : "") + ", box " +
                    std::to_string(box.box_rows) + " x " + std::to_string(box.box_cols) +
                    ") failed with CUresult " + std::to_string(int(r)));
  return to_map(map);
}

TmaMap encode_im2col_map(const std::string& dtype, const void* base,
                         const compiler::Im2colGeometry& g, const codegen::TmaBox& box) {
  int64_t elem = 1;
  const CUtensorMapDataType type = map_type(dtype, elem);
  // Innermost first: C, W, H, N; the pitches of W, H and N in bytes.
  const cuuint64_t dims[4] = {cuuint64_t(g.c), cuuint64_t(g.w), cuuint64_t(g.h), cuuint64_t(g.n)};
  const cuuint64_t pitch[3] = {cuuint64_t(g.c * elem), cuuint64_t(g.w * g.c * elem),
                               cuuint64_t(g.h * g.w * g.c * elem)};
  // The corners and strides innermost first too: W, then H.
  const compiler::Im2colCorners b = compiler::im2col_corners(g);
  const int lower[2] = {int(b.lower_w), int(b.lower_h)};
  const int upper[2] = {int(b.upper_w), int(b.upper_h)};
  const cuuint32_t element_strides[4] = {1, cuuint32_t(g.stride_w), cuuint32_t(g.stride_h), 1};
  // A box row of 64 bytes is half a k-tile's row: the stage's 64-byte panels.
  const CUtensorMapSwizzle swizzle =
      box.box_cols * elem == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B;
  CUtensorMap map;
  static const auto encode =
      driver_function<EncodeIm2col>("cuTensorMapEncodeIm2col", "TMA needs a CUDA 12 driver");
  const CUresult r =
      encode(&map, type, 4, const_cast<void*>(base), dims, pitch, lower, upper, box.box_cols,
             box.box_rows, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(Error::Kind::cuda,
                "cuTensorMapEncodeIm2col(NHWC " + std::to_string(g.n) + "x" + std::to_string(g.h) +
                    "x" + std::to_string(g.w) + "x" + std::to_string(g.c) + " " + dtype +
                    ", corners (" + std::to_string(b.lower_h) + ", " + std::to_string(b.lower_w) +
                    ") (" + std::to_string(b.upper_h) + ", " + std::to_string(b.upper_w) +
                    "), stride " + std::to_string(g.stride_h) + "x" + std::to_string(g.stride_w) +
                    ", " + std::to_string(box.box_rows) + " pixels x " +
                    std::to_string(box.box_cols) + " channels) failed with CUresult " +
                    std::to_string(int(r)));
  return to_map(map);
}

TmaMap encode_halo_map(const std::string& dtype, const void* base, const HaloBox& b) {
  int64_t elem = 1;
  const CUtensorMapDataType type = map_type(dtype, elem);
  // Innermost first: C, W, H, N; the pitches of W, H and N in bytes.
  const cuuint64_t dims[4] = {cuuint64_t(b.c), cuuint64_t(b.w), cuuint64_t(b.h), cuuint64_t(b.n)};
  const cuuint64_t pitch[3] = {cuuint64_t(b.c * elem), cuuint64_t(b.w * b.c * elem),
                               cuuint64_t(b.h * b.w * b.c * elem)};
  const cuuint32_t box[4] = {cuuint32_t(b.row_bytes / elem), cuuint32_t(b.box_w),
                             cuuint32_t(b.box_h), cuuint32_t(b.box_n)};
  const cuuint32_t element_strides[4] = {1, cuuint32_t(b.stride_w), cuuint32_t(b.stride_h), 1};
  CUtensorMap map;
  static const auto encode =
      driver_function<EncodeTiled>("cuTensorMapEncodeTiled", "TMA needs a CUDA 12 driver");
  const CUresult r = encode(&map, type, 4, const_cast<void*>(base), dims, pitch, box,
                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            b.row_bytes < compiler::kHaloPanelBytes ? CU_TENSOR_MAP_SWIZZLE_64B
                                                                    : CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(Error::Kind::cuda,
                "cuTensorMapEncodeTiled(NHWC " + std::to_string(b.n) + "x" + std::to_string(b.h) +
                    "x" + std::to_string(b.w) + "x" + std::to_string(b.c) + " " + dtype +
                    ", halo box " + std::to_string(b.box_n) + "x" + std::to_string(b.box_h) + "x" +
                    std::to_string(b.box_w) + " every " + std::to_string(b.stride_h) + "x" +
                    std::to_string(b.stride_w) + ") failed with CUresult " +
                    std::to_string(int(r)));
  return to_map(map);
}

TmaMap TmaMapMemo::find_or_encode(const Key& key, const std::function<TmaMap()>& encode) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = entries_.size(); i-- > 0;)
      if (entries_[i].key == key) {
        const TmaMap map = entries_[i].map;
        if (i + 1 != entries_.size()) {
          Entry e = entries_[i];
          entries_.erase(entries_.begin() + ptrdiff_t(i));
          entries_.push_back(e);
        }
        return map;
      }
  }
  const TmaMap map = encode();  // throws on a map the driver rejects: nothing kept
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() == kEntries) entries_.erase(entries_.begin());
  entries_.push_back({key, map});
  return map;
}

TmaMap TmaMapMemo::tiled(const std::string& dtype, const void* base, int64_t rows, int64_t cols,
                         int64_t ld, const codegen::TmaBox& box, int64_t batch,
                         int64_t batch_stride) {
  int64_t elem = 0;
  const Key key = {1,
                   int64_t(map_type(dtype, elem)),
                   int64_t(reinterpret_cast<uintptr_t>(base)),
                   rows,
                   cols,
                   ld,
                   int64_t(box.box_rows),
                   int64_t(box.box_cols),
                   batch,
                   batch_stride};
  return find_or_encode(
      key, [&] { return encode_tma_map(dtype, base, rows, cols, ld, box, batch, batch_stride); });
}

TmaMap TmaMapMemo::im2col(const std::string& dtype, const void* base,
                          const compiler::Im2colGeometry& g, const codegen::TmaBox& box) {
  int64_t elem = 0;
  const Key key = {2,
                   int64_t(map_type(dtype, elem)),
                   int64_t(reinterpret_cast<uintptr_t>(base)),
                   g.n,
                   g.h,
                   g.w,
                   g.c,
                   g.stride_h,
                   g.stride_w,
                   g.pad_h,
                   g.pad_w,
                   g.reach_h,
                   g.reach_w,
                   int64_t(g.nhwc),
                   int64_t(box.box_rows),
                   int64_t(box.box_cols)};
  return find_or_encode(key, [&] { return encode_im2col_map(dtype, base, g, box); });
}

TmaMap TmaMapMemo::halo(const std::string& dtype, const void* base, const HaloBox& b) {
  int64_t elem = 0;
  const Key key = {3,
                   int64_t(map_type(dtype, elem)),
                   int64_t(reinterpret_cast<uintptr_t>(base)),
                   b.n,
                   b.h,
                   b.w,
                   b.c,
                   b.box_w,
                   b.box_h,
                   b.box_n,
                   b.stride_h,
                   b.stride_w,
                   b.row_bytes};
  return find_or_encode(key, [&] { return encode_halo_map(dtype, base, b); });
}

}  // namespace schedc::runtime
