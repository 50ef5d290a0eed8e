#pragma once
// What `schedc bench`'s GEMM rows (cli/cmd_bench.cpp) and convolution rows
// (cli/conv_bench.cpp) share: a schedule prepared once for its rows, a row
// measured, its status and the exit code it makes.

#include <memory>
#include <string>

#include "cli/exit_codes.h"
#include "runtime/error.h"
#include "runtime/run.h"

namespace schedc::cli {

// A schedule compiled and loaded for its rows, or why not.
struct PreparedSchedule {
  std::shared_ptr<runtime::PreparedKernel> kernel;
  std::string error;  // prepare's failure: each of the schedule's rows is an ERROR
};

inline PreparedSchedule prepare_schedule(runtime::GpuSession& session,
                                         const codegen::GeneratedKernel& kernel,
                                         const runtime::JitOptions& jit) {
  PreparedSchedule p;
  try {
    p.kernel = session.prepare(kernel, jit);
  } catch (const runtime::Error& e) {
    p.error = e.what();
  }
  return p;
}

// A row's status: "ok", "FAILED" (a wrong result, exit 1) or "ERROR" (no
// result: a toolchain or device failure, exit 3), and why not ok.
struct RowStatus {
  std::string status, detail;
  int exit_code() const {
    return status == "ok" ? kOk : status == "FAILED" ? kWrongResult : kToolchain;
  }
};

// `report` = run() (a session's run of the prepared schedule), unless the
// schedule could not be prepared or a kernel of this process hung (the GPU
// may still be running it: every later row is an ERROR, not run); a
// runtime::Error is the row's ERROR.
template <typename Report, typename Run>
RowStatus measure_row(const PreparedSchedule& prepared, Report& report, Run&& run) {
  if (runtime::kernel_hung())
    return {"ERROR", "not run: an earlier kernel hung (the GPU may still be running it)"};
  if (!prepared.kernel) return {"ERROR", prepared.error};
  try {
    report = run();
    return {report.ok() ? "ok" : "FAILED", report.failure()};
  } catch (const runtime::Error& e) {
    return {"ERROR", e.what()};
  }
}

}  // namespace schedc::cli
