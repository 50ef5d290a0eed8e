#include "runtime/tma_map.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>

#include "runtime/error.h"

namespace schedc::runtime {

namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_fn() {
  static EncodeTiled fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    // The entry point as of CUDA 12.0, when cuTensorMapEncodeTiled appeared.
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiled>(p);
    else
      cudaGetLastError();
  });
  if (!fn)
    throw Error(Error::Kind::cuda,
                "the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)");
  return fn;
}

}  // namespace

TmaMap encode_tma_map(const std::string& dtype, const void* base, int64_t rows, int64_t cols,
                      int64_t ld, const codegen::TmaBox& box, int64_t batch, int64_t batch_stride) {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  int64_t elem = 4;
  if (dtype == "f16") {
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    elem = 2;
  } else if (dtype == "bf16") {
    type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    elem = 2;
  } else if (dtype == "s8") {  // A and B of an s8 kernel: bytes (zero past the edges)
    type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    elem = 1;
  } else if (dtype == "s32") {  // C of an s8 kernel
    type = CU_TENSOR_MAP_DATA_TYPE_INT32;
  }
  // Innermost dimension first: columns, then rows with the leading dimension as
  // pitch, then (batched) the GEMMs with the batch stride as pitch.
  const cuuint32_t rank = batch > 0 ? 3 : 2;
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(batch)};
  const cuuint64_t pitch[2] = {cuuint64_t(ld * elem), cuuint64_t(batch_stride * elem)};
  const cuuint32_t box_dims[3] = {box.box_cols, box.box_rows, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  CUtensorMap map;
  CUresult r =
      encode_fn()(&map, type, rank, const_cast<void*>(base), dims, pitch, box_dims, element_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
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
  TmaMap out{};
  static_assert(sizeof(out) == sizeof(map), "CUtensorMap is 128 bytes");
  std::memcpy(&out, &map, sizeof out);
  return out;
}

}  // namespace schedc::runtime
