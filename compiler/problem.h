#pragma once
// One concrete GEMM: C (MxN) = epilogue(A (MxK) * B (KxN)), each of A, B, C
// row-major or column-major (`layout A col`, `layout B col`, `layout C col`;
// issue 18), with leading dimensions that may exceed the row length in memory
// (unaligned ones exercise the fallback paths of vectorized schedules); or a
// strided batch of `batch` such GEMMs (`batch N`), GEMM b's operands
// b·stride elements past GEMM 0's, as cublasGemmStridedBatchedEx takes them.

#include <cstdint>

#include "compiler/schedule.h"

namespace schedc::compiler {

// The most GEMMs of a batch (`batch N`, --batch): a batched kernel's grid
// takes one z index per GEMM, and CUDA allows 65535.
inline constexpr int64_t kMaxBatch = 65535;

struct Problem {
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;  // 0 = packed: each operand's row length in memory
  DType dtype = DType::f32;
  // Column-major A: element (m, k) at k·lda + m (rows of M in memory);
  // column-major B: (k, n) at n·ldb + k (rows of K: nn.Linear's weight).
  bool a_col = false, b_col = false;
  // Column-major C: (m, n) at n·ldc + m.
  bool c_col = false;
  // The batch: how many GEMMs, and the elements from one GEMM's A, B, C to
  // the next's (0 = packed: the operand's rows times its leading dimension).
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;

  // Row length in memory, and the number of rows, of each operand.
  int64_t a_row_len() const { return a_col ? m : k; }
  int64_t b_row_len() const { return b_col ? k : n; }
  int64_t a_rows() const { return a_col ? k : m; }
  int64_t b_rows() const { return b_col ? n : k; }
  int64_t a_ld() const { return lda ? lda : a_row_len(); }
  int64_t b_ld() const { return ldb ? ldb : b_row_len(); }
  int64_t c_row_len() const { return c_col ? m : n; }
  int64_t c_rows() const { return c_col ? n : m; }
  int64_t c_ld() const { return ldc ? ldc : c_row_len(); }
  // Offsets of A(m, k) and B(k, n) in their storage.
  int64_t a_index(int64_t i, int64_t kk) const { return a_col ? kk * a_ld() + i : i * a_ld() + kk; }
  int64_t b_index(int64_t kk, int64_t j) const { return b_col ? j * b_ld() + kk : kk * b_ld() + j; }
  int64_t c_index(int64_t i, int64_t j) const { return c_col ? j * c_ld() + i : i * c_ld() + j; }
  int64_t a_stride() const { return stride_a ? stride_a : a_rows() * a_ld(); }
  int64_t b_stride() const { return stride_b ? stride_b : b_rows() * b_ld(); }
  int64_t c_stride() const { return stride_c ? stride_c : c_rows() * c_ld(); }
  // Elements each operand's storage spans, all GEMMs of the batch: the last
  // GEMM's start plus one matrix.
  int64_t a_span() const { return (batch - 1) * a_stride() + a_rows() * a_ld(); }
  int64_t b_span() const { return (batch - 1) * b_stride() + b_rows() * b_ld(); }
  int64_t c_span() const { return (batch - 1) * c_stride() + c_rows() * c_ld(); }
  double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
};

}  // namespace schedc::compiler
