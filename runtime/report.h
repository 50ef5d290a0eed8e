#pragma once
// How a run is shown: the one-line summary of DESIGN.md, the mismatch list
// and the JSON object (shared by `schedc run` and `schedc bench`).

#include <ostream>
#include <string>

#include "compiler/problem.h"
#include "report/json.h"
#include "runtime/run.h"

namespace schedc::runtime {

// `v` printed by the printf format `f` ("%.1f", "%.3g").
std::string format_number(const char* f, double v);

// "4096x4096x4096"; a batch adds its size, and the strides when any was given
// ("127x129x65 batch 3", "127x129x65 batch 3 (strides A 8390, B 8392, C 16400)").
std::string shape_string(const compiler::Problem& p);
// "strides A 8255, B 8385, C 16383": every operand's, given or packed.
std::string strides_string(const compiler::Problem& p);
// 2·M·N·K (times the batch) per second, in 10^12: FLOP/s, or for dtype s8
// integer operations per second (TOPS, rate_unit).
double tflops(const compiler::Problem& p, double ms);
// "TFLOP/s", or "TOPS" for dtype s8.
const char* rate_unit(const std::string& dtype);

// "v9.sched  4096x4096x4096 f32  ok (rel err 0.0e+00 vs cuBLAS)  2.95 ms  46.6 TFLOP/s  91.3% of
// cuBLAS"; for s8 the rate is in TOPS, "vs cuBLAS f64" where the reference
// fell back to f64, and "no cuBLAS baseline (why)" in place of the ratio
// when cuBLAS int8 rejected the timed problem.
std::string run_line(const std::string& label, const compiler::Problem& p, const std::string& dtype,
                     const RunReport& r);

// The failing validations' details: mode, error, worst element and the
// first mismatches (row, col, got, expected; in a batch C[g][row,col], g
// the GEMM). An s32 output's values are printed as exact integers.
void print_failure_details(std::ostream& os, const RunReport& r);

// The problem's batch members (`batch`, `stride_a`, `stride_b`, `stride_c`)
// added to `o` when p.batch > 1.
void add_batch_json(report::Json& o, const compiler::Problem& p);

// {"median", "min", "max", "runs"} of one timed kernel (ms).
report::Json timing_json(const TimingStats& t);

// One JSON object for a run (report/json.h writes it). `extra` members are
// added at the end (e.g. {"stages_ms": {…}}). A batch (p.batch > 1) adds
// `batch` and the strides in elements, `stride_a`, `stride_b`, `stride_c`;
// its mismatches carry their GEMM (`worst.batch`, a fifth number in each
// of `first`). An s32 output's got/expected are JSON integers. Timed without
// a baseline (s8): cublas_ms, cublas_tflops and percent_of_cublas are null
// and `no_baseline` says why.
report::Json run_json(const std::string& file, const compiler::Problem& p,
                      const PreparedKernel& prepared, const RunReport& r,
                      const report::Json& extra = report::Json::object());

}  // namespace schedc::runtime
