#pragma once
// runtime::jit: generated kernel -> CUBIN, through the on-disk cache: the
// whole module, or one entry alone (a module with entry guards), each cached
// on its own; jit_entries compiles several entries at once, one thread each.

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "runtime/nvrtc_compile.h"

namespace schedc::runtime {

struct JitOptions {
  bool use_cache = true;             // false: --no-cache (neither read nor write)
  std::string cache_dir;             // "" = default_cache_dir()
  std::ostream* warnings = nullptr;  // where cache warnings go (null = std::cerr)
};

struct JitResult {
  std::vector<char> cubin;
  std::map<std::string, PtxasInfo> functions;
  std::string ptxas_log;
  bool cache_hit = false;
  double ms = 0;           // NVRTC compile, or cache lookup on a hit
  double compile_ms = 0;   // NVRTC alone; 0 on a hit
  std::string cache_path;  // "" when the cache was not used
};

// The whole module (entry ""), or `entry` alone. Throws Error(nvrtc) when
// NVRTC rejects the source.
JitResult jit(const codegen::GeneratedKernel& kernel, const std::string& arch,
              const JitOptions& options = {}, const std::string& entry = "");

// Several jit() results seen as one (what `run -v` and --json report): the
// functions and ptxas logs of all, a cache hit when every one was, ms and
// compile_ms the wall time `wall_ms` (compile_ms 0 when all were hits), the
// cache paths joined by ", ". No CUBIN.
JitResult combine(const std::vector<JitResult>& parts, double wall_ms);

// jit() of each of `entries`, in parallel (NVRTC is thread-safe; one
// function's compile runs on one core, so entries compiled side by side take
// as long as the slowest). Results in the order of `entries`; the first
// entry's error is rethrown after all have finished. A module without entry
// guards (a person's --kernel-source) is compiled whole, once: one result.
std::vector<JitResult> jit_entries(const codegen::GeneratedKernel& kernel, const std::string& arch,
                                   const std::vector<std::string>& entries,
                                   const JitOptions& options = {});

// A module and the entries of it to compile.
struct CompileJob {
  const codegen::GeneratedKernel* kernel = nullptr;
  std::vector<std::string> entries;
};

// Compiles every entry of `jobs` into the kernel cache on `threads` threads
// (0: the host's cores), so that the GpuSession::prepare calls after it find
// them there: `bench` and `ablate` do so before they measure (`tune`
// overlaps its compiles with its measurements instead). Errors are left for
// prepare to report. Does nothing without a cache (use_cache off, or no
// folder). Returns the wall time in ms.
double precompile(const std::vector<CompileJob>& jobs, const std::string& arch,
                  const JitOptions& options, int threads = 0);

}  // namespace schedc::runtime
