#pragma once
// How a convolution run is shown (`schedc run --conv`, `schedc bench
// --conv`): its name, a readable block and the JSON object.

#include <ostream>
#include <string>

#include "compiler/conv.h"
#include "report/json.h"
#include "runtime/conv_run.h"

namespace schedc::runtime {

// "8x56x56x64 filter 64x3x3 stride 1 pad 1 NHWC": the input N x H x W x C,
// the filters K x R x S, stride and padding (AxB where they differ by
// axis), the dilation when not 1, the layout.
std::string conv_string(const compiler::Conv2d& conv);
// "conv 8x56x56x64 filter 64x3x3 stride 1 pad 1 NHWC: GEMM 25088x64x576".
std::string conv_title(const compiler::Conv2d& conv);

// The block of one run (docs/runtime.md, "Convolution"):
//   int8_nhwc.sched  conv 8x28x28x128 filter 128x3x3 stride 1 pad 1 NHWC: GEMM 6272x128x1152 s8
//     ok: bit-exact vs cuBLAS int8 in, int32 accumulate on the host's im2col (GPU im2col = …)
//     kernel               0.018 ms   101.1 TOPS
//     cuBLAS GEMM alone    0.014 ms   133.2 TOPS  (kernel at 75.9% of it)
//     im2col + cuBLAS      0.017 ms   107.0 TOPS  (kernel 0.94x faster)
// (TFLOP/s for f16 and bf16); a failure's details follow as GEMM runs print them.
void print_conv_block(std::ostream& os, const std::string& label, const std::string& dtype,
                      const ConvReport& r);

// run_json's object (the implicit GEMM's m, n, k; "cublas_ms" and
// "percent_of_cublas" are timing (b), cuBLAS's GEMM alone) with "conv" (the
// convolution's sizes and its text), "im2col_checked", and when timed
// "explicit_ms", "explicit_tflops" and "x_of_explicit" (timing (c) and
// (c) / (a); null without a baseline).
report::Json conv_json(const std::string& file, const PreparedKernel& prepared, const ConvReport& r,
                       const report::Json& extra = report::Json::object());

}  // namespace schedc::runtime
