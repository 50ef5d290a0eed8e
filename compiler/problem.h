#pragma once
// One concrete GEMM: C (MxN) = epilogue(A (MxK) * B (KxN)), all row-major,
// with leading dimensions that may exceed the row length (unaligned ones
// exercise the fallback paths of vectorized schedules).

#include <cstdint>

#include "compiler/schedule.h"

namespace schedc::compiler {

struct Problem {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0 = packed (K, N, N)
  DType dtype = DType::f32;

  int64_t a_ld() const { return lda ? lda : k; }
  int64_t b_ld() const { return ldb ? ldb : n; }
  int64_t c_ld() const { return ldc ? ldc : n; }
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

}  // namespace schedc::compiler
