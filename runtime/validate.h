#pragma once
// Validation against cuBLAS (docs/runtime.md, "Validation").
//
// The reference is cuBLAS in the mode matching the kernel: pedantic f32 for
// SIMT f32, TF32 for tf32 tensor cores, f16/bf16 inputs with f32
// accumulation. cuBLAS computes alpha*A*B + beta*C0 into an f32 buffer; bias
// and relu are applied on the host in f32 and the result is rounded once to
// the output type, as the kernel does. The comparison itself is host code
// (compare()) and is tested without a GPU.

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

struct Mismatch {
  int64_t row = 0, col = 0;
  float got = 0, expected = 0;
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
  std::vector<Mismatch> first;  // the first few, in row-major order
  std::string failure;          // "" when ok; else why, in one phrase
};

// Compares the kernel's output (decoded, m x ldc) with the reference
// (m x n packed, already in the output type). `got_raw` and `sent_raw` are
// the output buffer's bytes after and before the run: any change in the ld
// padding is a write outside C.
ValidationResult compare(const compiler::Problem& p, InputMode mode, ElemType out,
                         const std::vector<float>& got, const std::vector<char>& got_raw,
                         const std::vector<char>& sent_raw, const std::vector<float>& expected,
                         bool bit_exact, const Tolerance& tol);

// Applies bias and relu to cuBLAS's f32 result (m x n packed) and rounds to
// the output type, as the kernel's epilogue does.
std::vector<float> finish_reference(const std::vector<float>& ref32, const compiler::Problem& p,
                                    const std::vector<float>& bias, bool relu, ElemType out);

// cuBLAS GEMM on A and B in p's layouts. `c_f32`: C is f32 (the reference);
// otherwise C has the kernel's element type (timing). `ldc` is C's leading
// dimension, and `c_col` its layout (column-major: (m, n) at n·ldc + m).
void cublas_gemm(void* handle, RefMode mode, ElemType in, const compiler::Problem& p, const void* a,
                 const void* b, void* c, bool c_f32, int64_t ldc, float alpha, float beta,
                 bool c_col = false);

}  // namespace schedc::runtime
