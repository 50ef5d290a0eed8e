#pragma once
// How a run is shown: the one-line summary of DESIGN.md, the mismatch list
// and the JSON object (shared by `schedc run` and `schedc bench`).

#include <ostream>
#include <string>

#include "compiler/problem.h"
#include "report/json.h"
#include "runtime/run.h"

namespace schedc::runtime {

// "4096x4096x4096"; a batch adds its size, and the strides when any was given
// ("127x129x65 batch 3", "127x129x65 batch 3 (strides A 8390, B 8392, C 16400)").
std::string shape_string(const compiler::Problem& p);
// "strides A 8255, B 8385, C 16383": every operand's, given or packed.
std::string strides_string(const compiler::Problem& p);
double tflops(const compiler::Problem& p, double ms);

// "v9.sched  4096x4096x4096 f32  ok (rel err 0.0e+00 vs cuBLAS)  2.95 ms  46.6 TFLOP/s  91.3% of
// cuBLAS"
std::string run_line(const std::string& label, const compiler::Problem& p, const std::string& dtype,
                     const RunReport& r);

// The failing validations' details: mode, error, worst element and the
// first mismatches (row, col, got, expected; in a batch C[g][row,col], g
// the GEMM).
void print_failure_details(std::ostream& os, const RunReport& r);

// The problem's batch members (`batch`, `stride_a`, `stride_b`, `stride_c`)
// added to `o` when p.batch > 1.
void add_batch_json(report::Json& o, const compiler::Problem& p);

// One JSON object for a run (report/json.h writes it). `extra` members are
// added at the end (e.g. {"stages_ms": {…}}). A batch (p.batch > 1) adds
// `batch` and the strides in elements, `stride_a`, `stride_b`, `stride_c`;
// its mismatches carry their GEMM (`worst.batch`, a fifth number in each
// of `first`).
report::Json run_json(const std::string& file, const compiler::Problem& p,
                      const PreparedKernel& prepared, const RunReport& r,
                      const report::Json& extra = report::Json::object());

}  // namespace schedc::runtime
