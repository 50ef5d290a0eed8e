#pragma once
// The limits of a strided batch (compiler::Problem's batch and strides),
// checked alike by every front end: GpuSession::run, the library's launch
// and `run` / `bench`'s --batch and --stride-* (docs/runtime.md, "Strided
// batch"). Pure host logic; tested without a GPU.

#include <cstdint>
#include <string>

#include "compiler/problem.h"

namespace schedc::runtime {

using compiler::kMaxBatch;  // the most GEMMs of a batch (compiler/problem.h)
// The most elements an operand's storage may span, all GEMMs of a batch:
// 2^46 (256 TiB of f32) is more than any device holds, and keeps every byte
// count and offset well inside int64.
inline constexpr int64_t kMaxSpan = int64_t(1) << 46;

// Why `p`'s batch cannot run, or "" when it can: a batch outside 1 to
// 65535; a stride (0: packed) less than its operand's matrix, rows x leading
// dimension (the GEMMs of a batch may not overlap, A's and B's included); an
// operand spanning more than kMaxSpan elements. `stride_names` name A's, B's
// and C's stride in the message ("stride_a", "--stride-a").
std::string batch_error(const compiler::Problem& p, const char* const stride_names[3]);

}  // namespace schedc::runtime
