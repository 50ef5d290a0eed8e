#pragma once
// A convolution module's run (docs/runtime.md, "Convolution"):
// GpuSession::run_conv draws the input, filters, z and bias, validates the
// kernel against im2col (from the convolution's definition, on the host)
// followed by cuBLAS, and times three things with the GEMM path's harness:
//   (a) the convolution kernel;
//   (b) cuBLAS's GEMM alone on the same (M, N, K), A already materialized:
//       the GEMM without the im2col cost;
//   (c) the explicit pipeline, a GPU im2col and the same cuBLAS GEMM, timed
//       as one.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/conv.h"
#include "compiler/problem.h"
#include "compiler/schedule.h"
#include "runtime/host_cases.h"
#include "runtime/host_data.h"
#include "runtime/run.h"

namespace schedc::runtime {

struct ConvRunOptions {
  compiler::Conv2d conv;
  // alpha, beta (on z, the output's prior content, drawn at random), bias
  // (one per output channel: per GEMM column), relu.
  compiler::Epilogue epilogue;
  uint64_t seed = 1;
  bool validate = true;
  bool time = true;  // (a), (b) and (c)
  bool flush_l2 = false;
  TimingOptions timing;
  JitOptions jit;  // for the im2col kernel
};

// A RunReport (validations: one, random inputs; `cublas`: timing (b);
// percent_of_cublas(): (b) / (a)) and what a convolution adds.
struct ConvReport : RunReport {
  compiler::Conv2d conv;
  compiler::Problem problem;      // the implicit GEMM: M = N·P·Q, N = K, K = C·R·S
  TimingStats explicit_pipeline;  // (c): GPU im2col + cuBLAS
  // The GPU im2col's A equalled the host's byte for byte (checked once a
  // run; a difference throws Error).
  bool im2col_checked = false;
  // How the Hopper NHWC kernel read A: "by TMA's im2col mode" (", two
  // copies a k-tile (64-byte panels)" where C is a multiple of BK / 2 only)
  // or "by the producer's copies (why not TMA's)"; "" for other kernels.
  std::string a_copy;
  // The implicit GEMM as the launch's grid counts it (Module::launch_note):
  // `problem`, but a `halo` launch's M is its tiles' rows (one image or band
  // a tile, some rows junk that the epilogue does not store).
  compiler::Problem grid_problem;
  // (c) / (a): how many times the explicit pipeline's time the kernel
  // takes less; 0 when not timed, NaN when timed without a baseline.
  double x_of_explicit() const;
};

// The host half of a convolution's validation case, as run_conv draws it:
// the inputs of `seed` (make_conv_inputs, ranges for alpha, beta and the
// bias) as a module of `dtype` ("s8", "f16", "bf16") takes them, and A from
// the convolution's definition.
// A kernel's output is checked against compute_reference(hc, reference_inputs,
// …) with hc.a uploaded as A and hc.b as the filters (the library's GPU
// test, tests/api/conv_gpu_test.cpp, does as run_conv does).
struct ConvCase {
  std::vector<char> input;  // the input tensor's bytes, NHWC
  // a: im2col_host's A (M x K); b: the filters [K][R][S][C]; bias; sent:
  // the output before the run (z where beta reads it, else the poison).
  HostCase hc;
  GemmInputs reference_inputs;  // c0 (z) and the bias, for compute_reference
};
// With epi.requantize (an int8 C) the operands are drawn for alpha 1, z in
// int8 and the bias small (drawn_scalars, requantize_inputs), with
// epi.scale K per-channel scales (channel_scales), and the reference
// compute_reference gives is the requantized one.
ConvCase make_conv_case(const compiler::Conv2d& conv, const std::string& dtype, uint64_t seed,
                        const compiler::Epilogue& epi);

// The output of `conv` (the GEMM's C, M x N row-major: NHWC) laid out in
// the convolution's layout (NCHW32: [N][K/32][P][Q][32]), and back; NHWC
// returns it unchanged. `elem` bytes an element.
std::vector<char> output_in_layout(const compiler::Conv2d& conv, const std::vector<char>& c,
                                   int elem);
std::vector<char> output_as_matrix(const compiler::Conv2d& conv, const std::vector<char>& out,
                                   int elem);

// The implicit GEMM of `conv` as the convolution modules take it: M x N x K
// with A the input (lda unused: packed), B column-major (the filters, ldb =
// C·R·S), C row-major (the NHWC output, ldc = K; an NCHW32 output is
// validated as that matrix after output_as_matrix).
compiler::Problem conv_problem(const compiler::Conv2d& conv, compiler::DType dtype);

}  // namespace schedc::runtime
