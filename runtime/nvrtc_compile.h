#pragma once
// NVRTC: generated CUDA C++ -> CUBIN for one architecture. Needs no GPU, so
// CI compiles every example with it. A compile failure is a schedc bug: it
// throws Error(nvrtc) whose message holds NVRTC's log and the generated
// source with line numbers.

#include <map>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"

namespace schedc::runtime {

// What `ptxas -v` says about one __global__ function.
struct PtxasInfo {
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int shared_bytes = 0;  // static shared memory
  // A kernel; else a device function ptxas compiled on its own (a
  // __noinline__ one), for which
  // it reports no registers.
  bool entry = false;
};

struct CubinResult {
  std::vector<char> cubin;
  std::string log;                             // ptxas -v log (kept for --verbose)
  std::map<std::string, PtxasInfo> functions;  // by extern "C" name
  double compile_ms = 0;
};

// "13.0" for NVRTC 13.0 (the one schedc is linked with).
std::string nvrtc_version();

// The exact NVRTC options used for `kernel` on `arch` ("sm_90"). `verbose`
// adds --ptxas-options=-v, `split` --split-compile=0 (the optimizer on every
// core); a non-empty `entry` of a module with entry guards selects that entry
// alone (-DSCHEDC_ONE_ENTRY -DSCHEDC_ENTRY_<entry>, codegen/blocks_common.h).
// Part of the cache key.
std::vector<std::string> nvrtc_options(const codegen::GeneratedKernel& kernel,
                                       const std::string& arch, bool verbose = true,
                                       bool split = true, const std::string& entry = "");

// Compiles kernel.source to a CUBIN for `arch`: the whole module, or with
// `entry` (a module with entry guards) that entry alone. Throws Error(nvrtc)
// on failure.
CubinResult compile_to_cubin(const codegen::GeneratedKernel& kernel, const std::string& arch,
                             const std::string& entry = "");

// Parses a ptxas -v log into per-function figures (pure text; tested alone).
std::map<std::string, PtxasInfo> parse_ptxas_log(const std::string& log);

// `source` with each line prefixed by its number, for error reports.
std::string number_lines(const std::string& source);

}  // namespace schedc::runtime
