// Module's entries, compiled and loaded when a launch first needs them: the
// fallback only when main's alignment preconditions fail, the repack entry
// only when an operand is repacked. GpuSession::prepare (runtime/run.cpp)
// compiles main and its stream_k tail side by side up front, since whether
// a split uses the tail is known only once main is loaded (its occupancy).
// Each CUBIN is loaded with the CUDA runtime's library API.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>

#include "runtime/error.h"
#include "runtime/launch.h"

namespace schedc::runtime {

Module::Module(const codegen::GeneratedKernel& kernel, int device, const std::string& arch,
               const JitOptions& jit)
    : kernel_(kernel), device_(device), arch_(arch), jit_(jit) {
  check_cuda(cudaDeviceGetAttribute(&num_sms_, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(MultiProcessorCount)");
  check_cuda(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
}

Module::~Module() {
  if (kernel_hung()) return;  // cudaFree and unloading wait for the hung kernel
  for (void* p : scratch_)
    if (p) cudaFree(p);
  if (sk_partials_) cudaFree(sk_partials_);
  if (sk_counters_) cudaFree(sk_counters_);
  for (void* lib : libraries_) cudaLibraryUnload(static_cast<cudaLibrary_t>(lib));
}

std::optional<std::vector<char>> Module::read_global(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (void* lib : libraries_) {
    void* ptr = nullptr;
    size_t bytes = 0;
    if (cudaLibraryGetGlobal(&ptr, &bytes, static_cast<cudaLibrary_t>(lib), name.c_str()) !=
        cudaSuccess) {
      cudaGetLastError();  // not in this CUBIN: clear the error, try the next
      continue;
    }
    std::vector<char> out(bytes);
    check_cuda(cudaMemcpy(out.data(), ptr, bytes, cudaMemcpyDeviceToHost),
               ("cudaMemcpy (reading the module's variable " + name + ")").c_str());
    return out;
  }
  return std::nullopt;
}

void Module::load(const std::vector<char>& cubin, const std::vector<std::string>& names) const {
  cudaLibrary_t lib = nullptr;
  check_cuda(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
             "cudaLibraryLoadData (loading the generated CUBIN)");
  libraries_.push_back(lib);
  // The launch shape of each name: its dynamic shared memory.
  auto shape = [&](const std::string& name) {
    for (const codegen::KernelEntry* e : {&kernel_.main, &kernel_.fallback}) {
      if (e->name.empty()) continue;
      if (name == e->name) return *e;
      if (e->stream_k && name == e->stream_k_tail) return e->tail_launch();
    }
    return codegen::KernelEntry{};  // the repack entry: static shared memory only
  };
  for (const std::string& name : names) {
    cudaKernel_t k = nullptr;
    check_cuda(cudaLibraryGetKernel(&k, lib, name.c_str()),
               ("cudaLibraryGetKernel(\"" + name + "\")").c_str());
    // Opt in to more than 48 KB of dynamic shared memory where needed.
    const codegen::KernelEntry e = shape(name);
    if (e.dynamic_smem > 0)
      check_cuda(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 int(e.dynamic_smem), device_),
                 ("cudaKernelSetAttributeForDevice(" + name + ", MaxDynamicSharedMemorySize, " +
                  std::to_string(e.dynamic_smem) + ")")
                     .c_str());
    Loaded loaded;
    loaded.kernel = k;
    loaded.dynamic_smem = e.dynamic_smem;
    kernels_[name] = std::move(loaded);
    loaded_.push_back(name);
  }
}

Module::Required Module::require(const std::vector<std::string>& entries) const {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  std::lock_guard<std::mutex> lock(mutex_);
  Required out;
  for (const std::string& name : entries)
    if (!kernels_.count(name) &&
        std::find(out.entries.begin(), out.entries.end(), name) == out.entries.end())
      out.entries.push_back(name);
  if (out.entries.empty()) return out;
  auto t0 = Clock::now();
  // One CUBIN per entry; a person's kernel source (no entry guards) is
  // compiled whole, once, and every entry is loaded from it.
  const std::vector<JitResult> compiled = jit_entries(kernel_, arch_, out.entries, jit_);
  if (!kernel_.entry_guards) out.entries = kernel_.entry_names();
  const double compile_ms = ms_since(t0);
  t0 = Clock::now();
  if (kernel_.entry_guards)
    for (size_t i = 0; i < out.entries.size(); ++i) load(compiled[i].cubin, {out.entries[i]});
  else
    load(compiled[0].cubin, out.entries);
  out.load_ms = ms_since(t0);
  out.jit = combine(compiled, compile_ms);
  return out;
}

std::vector<std::string> Module::loaded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return loaded_;
}

void* Module::handle(const std::string& name) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return it->second.kernel;
  }
  require({name});
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(name);
  if (it == kernels_.end())
    throw Error(Error::Kind::cuda, "internal error: the module has no entry " + name);
  return it->second.kernel;
}

LaunchableEntry Module::launchable(const std::string& name) const {
  void* kernel = handle(name);
  void* context = current_context();
  std::lock_guard<std::mutex> lock(mutex_);
  Loaded& l = kernels_.at(name);
  if (!l.function || l.context != context) {
    l.function = function_in_current_context(kernel, name, l.dynamic_smem);
    l.context = context;
  }
  return {l.kernel, l.function};
}

}  // namespace schedc::runtime
