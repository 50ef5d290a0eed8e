#pragma once
// Validation against cuBLAS (docs/runtime.md, "Validation").
//
// The reference is cuBLAS in the mode matching the kernel: pedantic f32 for
// SIMT f32, TF32 for tf32 tensor cores, f16/bf16 inputs with f32
// accumulation. cuBLAS computes alpha*A*B + beta*C0 into an f32 buffer; bias
// and relu are applied on the host in f32 and the result is rounded once to
// the output type, as the kernel does. dtype s8 (int8 A and B, int32 C) is
// compared bit for bit in int32 against cuBLAS int8, or, where cuBLAS int8
// rejects the problem, against cuBLAS f64 on the same integers (exact). The
// comparison itself is host code (compare(), compare_s32()) and is tested
// without a GPU.

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "compiler/problem.h"
#include "runtime/host_data.h"

namespace schedc::runtime {

enum class RefMode {
  f32_pedantic,   // SIMT f32: CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced precision)
  tf32,           // f32 data on tf32 tensor cores: CUBLAS_COMPUTE_32F_FAST_TF32
  f32_fast_f16,   // f32 data on f16 tensor cores: CUBLAS_COMPUTE_32F_FAST_16F
  f32_fast_bf16,  // f32 data on bf16 tensor cores: CUBLAS_COMPUTE_32F_FAST_16BF
  f16,            // f16 data, f32 accumulation: CUBLAS_COMPUTE_32F
  bf16,           // bf16 data, f32 accumulation: CUBLAS_COMPUTE_32F
  s8,             // int8 data, int32 accumulation and C: CUBLAS_COMPUTE_32I
  s8_via_f64,     // s8 where cuBLAS int8 rejected the reference: the integers as f64, Dgemm
};
RefMode reference_mode(const codegen::GeneratedKernel& kernel);
const char* to_string(RefMode m);

// THE tolerances of random mode, with their reasons (docs/runtime.md).
struct Tolerance {
  double rel_frobenius = 0;   // ||C - ref||_F / ||ref||_F must not exceed this
  double element_factor = 8;  // and no |C_ij - ref_ij| > factor * tol * max(|ref_ij|, rms(ref))
  std::string reason;
};
Tolerance random_tolerance(RefMode mode, ElemType out, int64_t k);

// Exact mode needs bit-exact agreement only when alpha and beta scale
// integers exactly (small dyadic values such as 1, -2, 0.5); otherwise it
// falls back to the random-mode tolerance.
bool exact_scale(float x);

// dtype s8's kernel converts alpha and beta with int(): they must be whole
// numbers, and at most 2^24 in magnitude (every such integer is a float, and
// the inputs' rule keeps the products within int32). "" when they are (or
// dtype is not "s8"), else why not, naming the value.
std::string integer_scalars_error(const std::string& dtype, float alpha, float beta);
// The same for kernel `k`: "" for a requantizing one (GeneratedKernel::c_dtype
// "s8"), whose epilogue takes alpha, beta and bias as f32.
std::string integer_scalars_error(const codegen::GeneratedKernel& k, float alpha, float beta);

// The epilogue a run of kernel `k` is validated and timed with: `given`
// (the schedule's, with the run's alpha and beta), its int8 C and
// per-channel scales as the kernel says (GeneratedKernel::c_dtype,
// channel_scale), which holds for a --kernel-source module too.
compiler::Epilogue kernel_epilogue(const codegen::GeneratedKernel& k, compiler::Epilogue given);

struct Mismatch {
  int64_t row = 0, col = 0;
  double got = 0, expected = 0;  // exact for every output type (f32 values, int32)
  int64_t batch = 0;             // the GEMM of a strided batch it is in (0 unbatched)
};

struct ValidationResult {
  InputMode mode = InputMode::exact;
  bool ok = false;
  bool bit_exact = false;  // required bit-for-bit agreement
  double rel_err = 0;      // relative Frobenius error
  double tolerance = 0;    // on rel_err (0 when bit_exact)
  std::string tolerance_reason;
  double worst_abs_err = 0;
  Mismatch worst;
  int64_t checked = 0, mismatches = 0, nan_count = 0, padding_writes = 0;
  double ref_norm = 0, got_norm = 0;
  std::vector<Mismatch> first;  // the first few, GEMM by GEMM, in row-major order
  int64_t batch = 1;            // GEMMs compared (p.batch): reports name each one's above 1
  bool integer = false;         // s32 output (compare_s32): values are whole numbers, shown so
  std::string failure;          // "" when ok; else why, in one phrase
};

// Compares the kernel's output (decoded, p.c_span() elements: every GEMM's C
// at its stride) with the reference (batch x m x n packed, already in the
// output type). `got_raw` and `sent_raw` are the output buffer's bytes after
// and before the run: any change in the ld padding, or in the gap between
// one GEMM's C and the next's, is a write outside C (padding_writes).
ValidationResult compare(const compiler::Problem& p, InputMode mode, ElemType out,
                         const std::vector<float>& got, const std::vector<char>& got_raw,
                         const std::vector<char>& sent_raw, const std::vector<float>& expected,
                         bool bit_exact, const Tolerance& tol);

// The same for an s32 output (dtype s8), always bit for bit: `got` is the
// output buffer's int32 values (p.c_span()), `expected` batch x m x n packed.
// An element still holding kPoisonS32 was not written (counted in
// nan_count, the float path's NaN); padding_writes as compare() counts them.
ValidationResult compare_s32(const compiler::Problem& p, InputMode mode,
                             const std::vector<int32_t>& got, const std::vector<char>& got_raw,
                             const std::vector<char>& sent_raw,
                             const std::vector<int32_t>& expected);

// compare_s32 for the int8 C of `epilogue ... requantize`: `got` the output
// bytes as integers; an unwritten element shows as a mismatch unless its
// reference is the poison (-128, kPaddingS8).
ValidationResult compare_s8(const compiler::Problem& p, InputMode mode,
                            const std::vector<int32_t>& got, const std::vector<char>& got_raw,
                            const std::vector<char>& sent_raw,
                            const std::vector<int32_t>& expected);

// The int8 C of `epilogue ... requantize` (compiler/schedule.h) from the
// exact int32 sums `acc` (batch x m x n packed), as the kernel's epilogue
// computes it, step by step in f32 with each product and sum rounded:
// alpha·acc (with epi.scale: (alpha·scale[n])·acc), + beta·z (z: C's prior
// content packed the same way, read when beta != 0), + bias[n], relu, then
// rint (ties to even) saturated to [-128, 127].
std::vector<int32_t> requantize_reference(const std::vector<int64_t>& acc,
                                          const compiler::Problem& p, const std::vector<float>& z,
                                          const std::vector<float>& bias,
                                          const std::vector<float>& scale,
                                          const compiler::Epilogue& epi);

// Applies bias and relu to cuBLAS's f32 result (batch x m x n packed; the
// one bias to every GEMM) and rounds to the output type, as the kernel's
// epilogue does.
std::vector<float> finish_reference(const std::vector<float>& ref32, const compiler::Problem& p,
                                    const std::vector<float>& bias, bool relu, ElemType out);

// s8's reference from alpha*A*B + beta*C0 (batch x m x n packed, exact in
// int64, as cuBLAS int8 or f64 computed it): bias (whole numbers, converted
// as the kernel's __float2int_rn) added in int64, the sum wrapped to int32
// (two's complement, as the kernel's int32 arithmetic), then relu.
std::vector<int32_t> finish_reference_s32(const std::vector<int64_t>& acc,
                                          const compiler::Problem& p,
                                          const std::vector<float>& bias, bool relu);

// Where cuBLAS writes C: f32 (the reference; s32 for s8) or the kernel's
// element type (timing; s32 for s8), its leading dimension, layout
// (column-major: (m, n) at n·ld + m) and, in a batch, the elements from one
// GEMM's C to the next's.
struct CublasC {
  void* ptr = nullptr;
  bool f32 = true;
  int64_t ld = 0;
  bool col = false;
  int64_t stride = 0;
};
// The reference's C: batch x m x n packed f32, row-major.
CublasC reference_c(const compiler::Problem& p, void* ptr);
// C as the kernel writes it: its type, ldc, layout and stride.
CublasC kernel_c(const compiler::Problem& p, void* ptr);

// cuBLAS GEMM on A and B in p's layouts: cublasGemmEx for one GEMM
// (p.batch == 1, a batched kernel's included), cublasGemmStridedBatchedEx
// with p's strides for a batch. RefMode::s8 passes alpha and beta as int32
// (CUBLAS_COMPUTE_32I's scale type) and writes C as int32. Throws Error
// when cuBLAS fails.
void cublas_gemm(void* handle, RefMode mode, ElemType in, const compiler::Problem& p, const void* a,
                 const void* b, const CublasC& c, float alpha, float beta);
// The same without throwing: "" when cuBLAS ran it, else the call and
// cuBLAS's status ("cublasGemmEx failed: CUBLAS_STATUS_NOT_SUPPORTED (…)").
// cuBLAS int8 rejects some layouts, leading dimensions and alignments; s8
// then validates against cublas_gemm_f64 and times no baseline.
std::string try_cublas_gemm(void* handle, RefMode mode, ElemType in, const compiler::Problem& p,
                            const void* a, const void* b, const CublasC& c, float alpha,
                            float beta);
// cublasDgemm (cublasDgemmStridedBatched for a batch) on f64 copies of A and
// B as they lie (p's layouts, leading dimensions and strides) into `c`, whose
// f32 flag is ignored: C is f64. s8's exact fallback reference. Throws Error.
void cublas_gemm_f64(void* handle, const compiler::Problem& p, const double* a, const double* b,
                     const CublasC& c, double alpha, double beta);

}  // namespace schedc::runtime
