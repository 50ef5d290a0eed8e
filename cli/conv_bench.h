#pragma once
// `schedc bench` on convolution modules (issue 21): every file's
// convolutions (--conv, else each schedule's `conv`) validated and timed by
// runtime::GpuSession::run_conv, one row each, beside cuBLAS's GEMM alone
// on the same (M, N, K) and the explicit im2col + cuBLAS pipeline.

#include <string>
#include <vector>

#include "cli/pipeline.h"
#include "cli/scalars.h"
#include "cli/timing_flags.h"
#include "runtime/conv_layers.h"
#include "runtime/run.h"

namespace schedc::cli {

struct ConvBenchFile {
  std::string file;
  Compiled c;
  std::vector<runtime::NamedConv> convs;
};

struct ConvBenchOptions {
  uint64_t seed = 1;
  Scalars scalars;
  bool json = false, csv = false;
  TimingFlags timing;
};

// Compiles every file's entries (through `jit`'s cache, side by side), runs
// every row on `session` and prints the table (--json: an array of
// runtime::conv_json objects; --csv) on stdout, progress on stderr. Returns
// the worst exit code of `rc` and the rows' (1 a wrong result, 3 an error).
int bench_convs(const std::vector<ConvBenchFile>& files, const ConvBenchOptions& o,
                runtime::GpuSession& session, const runtime::JitOptions& jit, int rc);

}  // namespace schedc::cli
