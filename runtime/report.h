#pragma once
// How a run is shown: the one-line summary of DESIGN.md, the mismatch list
// and the JSON object (shared by `schedc run` and `schedc bench`).

#include <ostream>
#include <string>

#include "compiler/problem.h"
#include "report/json.h"
#include "runtime/run.h"

namespace schedc::runtime {

std::string shape_string(const compiler::Problem& p);  // "4096x4096x4096"
double tflops(const compiler::Problem& p, double ms);

// "v9.sched  4096x4096x4096 f32  ok (rel err 0.0e+00 vs cuBLAS)  2.95 ms  46.6 TFLOP/s  91.3% of
// cuBLAS"
std::string run_line(const std::string& label, const compiler::Problem& p, const std::string& dtype,
                     const RunReport& r);

// The failing validations' details: mode, error, worst element and the
// first mismatches (row, col, got, expected).
void print_failure_details(std::ostream& os, const RunReport& r);

// One JSON object for a run (report/json.h writes it). `extra` members are
// added at the end (e.g. {"stages_ms": {…}}).
report::Json run_json(const std::string& file, const compiler::Problem& p,
                      const PreparedKernel& prepared, const RunReport& r,
                      const report::Json& extra = report::Json::object());

}  // namespace schedc::runtime
