#pragma once
// cuBLAS's reference of one validation case (docs/runtime.md, "Validation"):
// shared by GpuSession::run and run_conv (whose implicit GEMM's A is the
// im2col of the input). Includes the CUDA runtime: runtime-internal.

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "compiler/problem.h"
#include "compiler/schedule.h"
#include "runtime/device_buffer.h"
#include "runtime/host_cases.h"

namespace schedc::runtime {

// C as stored (its layout, ldc and stride, compiler::Problem::c_index) as
// packed row-major M x N matrices, one per GEMM of the batch.
std::vector<float> packed(const std::vector<float>& c, const compiler::Problem& p);

// The reference of `p` into `hc`, A and B already in dA and dB (hc.a and
// hc.b their bytes, as they lie), C0 and the bias in `in` (in.c0 as C is
// stored, read when epi.beta != 0): alpha*A*B + beta*C0 by cuBLAS in mode
// `ref`, then bias and relu on the host as the kernel's epilogue applies
// them. A float type `t`: into hc.expected (f32 by cuBLAS, one rounding to
// t). s8: into hc.expected_s32, by cuBLAS int8 (exact in int32) or, where
// cuBLAS int8 rejects the problem, cublasDgemm on the same integers (exact
// too; hc.ref = s8_via_f64); with epi.requantize (an int8 C) the exact sums
// requantized on the host (requantize_reference). dRef holds batch x m x n
// 4-byte elements.
void compute_reference(HostCase& hc, const GemmInputs& in, void* cublas_handle, cudaStream_t stream,
                       const compiler::Problem& p, ElemType t, RefMode ref,
                       const compiler::Epilogue& epi, const DeviceBuffer& dA,
                       const DeviceBuffer& dB, const DeviceBuffer& dRef);

// cuBLAS's timed baseline (GpuSession::run, run_conv) writes a C of its
// own: `elements` of the kernel's C type holding what the kernel was sent
// (`sent`), computed with the kernel's alpha and beta. For an int8 C
// (epi.requantize) it is cuBLAS int8's int32 GEMM instead, alpha 1, beta 0,
// into int32 zeros: no requantization pass is charged to cuBLAS.
struct BaselineC {
  std::unique_ptr<DeviceBuffer> c;
  compiler::Epilogue epi;  // alpha, beta (and the rest) cuBLAS runs with
};
BaselineC baseline_c(const compiler::Epilogue& epi, int64_t elements, const std::vector<char>& sent,
                     cudaStream_t stream);

// Whether the timed baseline of `p` runs: "" for a float type `t`, and for
// s8 when cuBLAS int8 takes the problem with the kernel's C at `c` (one
// call, which writes it); else "cuBLAS int8 rejects this problem: <the
// call and cuBLAS's status>". cuBLAS int8 may reject the kernel's C (its
// ldc, layout) even where it took the reference's packed one; without a
// baseline the kernel is timed alone and no ratio is given, never one
// against another kind of GEMM.
std::string int8_baseline_refusal(void* cublas_handle, RefMode mode, ElemType t,
                                  const compiler::Problem& p, const void* a, const void* b, void* c,
                                  const compiler::Epilogue& epi);

}  // namespace schedc::runtime
