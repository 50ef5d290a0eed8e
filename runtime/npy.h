#pragma once
// NumPy .npy files (format version 1.0), so a result can be checked outside
// schedc with numpy.load. Matrices are written as little-endian float32
// ('<f4'), C order, without leading-dimension padding: every f16/bf16 value
// is exactly representable in f32, and NumPy has no bf16. dtype s8's int32
// C is written as int32 ('<i4'): f32 holds integers exactly only to 2^24.

#include <cstdint>
#include <string>
#include <vector>

namespace schedc::runtime {

// Writes rows x cols of `data` (row stride `ld`) to `path`; with batch > 1,
// `batch` such matrices `stride` elements apart, as a batch x rows x cols
// array. Returns false with `why` on an I/O error.
bool write_npy(const std::string& path, const std::vector<float>& data, int64_t rows, int64_t cols,
               int64_t ld, std::string& why, int64_t batch = 1, int64_t stride = 0);

// The same for int32 values, as '<i4'.
bool write_npy(const std::string& path, const std::vector<int32_t>& data, int64_t rows,
               int64_t cols, int64_t ld, std::string& why, int64_t batch = 1, int64_t stride = 0);

// The bytes write_npy puts in a file (tested alone).
std::string npy_bytes(const std::vector<float>& data, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batch = 1, int64_t stride = 0);
std::string npy_bytes(const std::vector<int32_t>& data, int64_t rows, int64_t cols, int64_t ld,
                      int64_t batch = 1, int64_t stride = 0);

}  // namespace schedc::runtime
