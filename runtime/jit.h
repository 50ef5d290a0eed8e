#pragma once
// runtime::jit: generated kernel -> CUBIN, through the on-disk cache.

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

// Throws Error(nvrtc) when NVRTC rejects the source.
JitResult jit(const codegen::GeneratedKernel& kernel, const std::string& arch,
              const JitOptions& options = {});

}  // namespace schedc::runtime
