#include "runtime/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <thread>

#include "runtime/error.h"
#include "runtime/kernel_cache.h"

namespace schedc::runtime {

JitResult jit(const codegen::GeneratedKernel& kernel, const std::string& arch,
              const JitOptions& options, const std::string& entry) {
  auto t0 = std::chrono::steady_clock::now();
  std::ostream& warn = options.warnings ? *options.warnings : std::cerr;
  JitResult out;
  std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  bool use_cache = options.use_cache && !dir.empty();

  std::string version = nvrtc_version();
  std::string key =
      cache_key(kernel.source, nvrtc_options(kernel, arch, true, true, entry), version, arch);
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

  CubinResult compiled = compile_to_cubin(kernel, arch, entry);
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

JitResult combine(const std::vector<JitResult>& parts, double wall_ms) {
  JitResult out;
  out.cache_hit = !parts.empty();
  for (const JitResult& j : parts) {
    out.cache_hit = out.cache_hit && j.cache_hit;
    out.functions.insert(j.functions.begin(), j.functions.end());
    out.ptxas_log += j.ptxas_log + (j.ptxas_log.empty() ? "" : "\n");
    if (!j.cache_path.empty())
      out.cache_path += (out.cache_path.empty() ? "" : ", ") + j.cache_path;
  }
  out.ms = wall_ms;
  out.compile_ms = out.cache_hit ? 0 : wall_ms;
  return out;
}

std::vector<JitResult> jit_entries(const codegen::GeneratedKernel& kernel, const std::string& arch,
                                   const std::vector<std::string>& entries,
                                   const JitOptions& options) {
  if (!kernel.entry_guards) return {jit(kernel, arch, options)};  // compiled whole, once
  std::vector<JitResult> out(entries.size());
  if (entries.size() == 1) {
    out[0] = jit(kernel, arch, options, entries[0]);
    return out;
  }
  nvrtc_version();  // opens NVRTC (or throws) before the threads start
  std::vector<std::exception_ptr> errors(entries.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < entries.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        out[i] = jit(kernel, arch, options, entries[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

double precompile(const std::vector<CompileJob>& jobs, const std::string& arch,
                  const JitOptions& options, int threads) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  if (!options.use_cache || dir.empty()) return 0;
  std::vector<std::pair<const codegen::GeneratedKernel*, std::string>> work;
  for (const CompileJob& j : jobs) {
    if (!j.kernel) continue;
    if (!j.kernel->entry_guards) {
      work.emplace_back(j.kernel, "");  // compiled whole, once
      continue;
    }
    for (const std::string& e : j.entries) work.emplace_back(j.kernel, e);
  }
  if (work.empty()) return 0;
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, int(work.size()));
  try {
    nvrtc_version();  // opens NVRTC before the threads start
  } catch (const Error&) {
    return 0;  // prepare will say why
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < work.size();) {
        try {
          jit(*work[i].first, arch, options, work[i].second);
        } catch (const Error&) {
          // prepare compiles it again and reports the error in its place
        }
      }
    });
  for (std::thread& t : pool) t.join();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace schedc::runtime
