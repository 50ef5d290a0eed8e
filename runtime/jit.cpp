#include "runtime/jit.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "runtime/kernel_cache.h"

namespace schedc::runtime {

JitResult jit(const codegen::GeneratedKernel& kernel, const std::string& arch,
              const JitOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  std::ostream& warn = options.warnings ? *options.warnings : std::cerr;
  JitResult out;
  std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  bool use_cache = options.use_cache && !dir.empty();

  std::string version = nvrtc_version();
  std::string key = cache_key(kernel.source, nvrtc_options(kernel, arch), version, arch);
  std::string stem = cache_stem(key, arch, version);
  KernelCache cache(dir);

  if (use_cache) {
    out.cache_path = cache.path(stem);
    KernelCache::Entry entry;
    std::string why;
    switch (cache.load(key, stem, entry, why)) {
      case KernelCache::Lookup::hit:
        out.cubin = std::move(entry.cubin);
        out.ptxas_log = std::move(entry.log);
        out.functions = parse_ptxas_log(out.ptxas_log);
        out.cache_hit = true;
        out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count();
        return out;
      case KernelCache::Lookup::corrupt:
        warn << "schedc: warning: kernel cache entry " << out.cache_path << " is corrupt (" << why
             << "); rebuilding it\n";
        break;
      case KernelCache::Lookup::miss: break;
    }
  }

  CubinResult compiled = compile_to_cubin(kernel, arch);
  out.cubin = std::move(compiled.cubin);
  out.ptxas_log = std::move(compiled.log);
  out.functions = std::move(compiled.functions);
  out.compile_ms = compiled.compile_ms;

  if (use_cache) {
    std::string why;
    if (!cache.store(key, stem, KernelCache::Entry{out.ptxas_log, out.cubin}, why))
      warn << "schedc: warning: kernel cache not written: " << why << "\n";
    const char* keep = std::getenv("SCHEDC_KEEP_SOURCE");
    if (keep && std::strcmp(keep, "1") == 0 && !cache.store_source(stem, kernel.source, why))
      warn << "schedc: warning: kernel source not kept: " << why << "\n";
  }
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace schedc::runtime
