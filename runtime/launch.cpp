#include "runtime/launch.h"

#include <cuda_runtime.h>

#include <sstream>

#include "runtime/error.h"
#include "runtime/tma_map.h"

namespace schedc::runtime {

namespace {

// Why main's preconditions fail here, or "" when they hold.
std::string precondition_failure(const codegen::KernelEntry& e, const compiler::Problem& p,
                                 const void* a, const void* b, const void* c) {
  std::ostringstream why;
  if (e.align_bytes > 1) {
    const std::pair<const char*, const void*> ptrs[] = {{"A", a}, {"B", b}, {"C", c}};
    for (int i = 0; i < 3; ++i)
      if (auto [name, ptr] = ptrs[i];
          e.aligned[i] && reinterpret_cast<uintptr_t>(ptr) % e.align_bytes != 0) {
        why << name << " is not " << e.align_bytes << "-byte aligned";
        return why.str();
      }
  }
  if (e.ld_multiple > 1) {
    const std::pair<const char*, int64_t> lds[] = {
        {"lda", p.a_ld()}, {"ldb", p.b_ld()}, {"ldc", p.c_ld()}};
    for (int i = 0; i < 3; ++i)
      if (auto [name, ld] = lds[i]; e.aligned[i] && ld % e.ld_multiple != 0) {
        why << name << " = " << ld << " is not a multiple of " << e.ld_multiple;
        return why.str();
      }
  }
  return "";
}

}  // namespace

EntryChoice choose_entry(const codegen::GeneratedKernel& kernel, const compiler::Problem& p,
                         const void* a, const void* b, const void* c) {
  EntryChoice choice;
  std::string failure = precondition_failure(kernel.main, p, a, b, c);
  if (failure.empty()) {
    choice.entry = &kernel.main;
    choice.name = kernel.main.name;
    choice.why = kernel.main.align_bytes > 1 || kernel.main.ld_multiple > 1
                     ? "alignment preconditions hold"
                     : "no alignment preconditions";
    return choice;
  }
  if (!kernel.has_fallback())
    throw Error(Error::Kind::cuda, "internal error: the main kernel " + kernel.main.name +
                                       " cannot run here (" + failure +
                                       ") and the generated module has no fallback entry "
                                       "(a schedc code generator bug)");
  choice.entry = &kernel.fallback;
  choice.name = kernel.fallback.name;
  choice.fallback = true;
  choice.why = failure;
  return choice;
}

Module::Module(const codegen::GeneratedKernel& kernel, const std::vector<char>& cubin, int device)
    : kernel_(kernel) {
  cudaLibrary_t lib = nullptr;
  check_cuda(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
             "cudaLibraryLoadData (loading the generated CUBIN)");
  library_ = lib;
  auto get = [&](const codegen::KernelEntry& e) -> void* {
    cudaKernel_t k = nullptr;
    check_cuda(cudaLibraryGetKernel(&k, lib, e.name.c_str()),
               ("cudaLibraryGetKernel(\"" + e.name + "\")").c_str());
    // Opt in to more than 48 KB of dynamic shared memory where needed.
    if (e.dynamic_smem > 0)
      check_cuda(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 int(e.dynamic_smem), device),
                 ("cudaKernelSetAttributeForDevice(" + e.name + ", MaxDynamicSharedMemorySize, " +
                  std::to_string(e.dynamic_smem) + ")")
                     .c_str());
    return k;
  };
  try {
    main_ = get(kernel_.main);
    if (kernel_.has_fallback()) fallback_ = get(kernel_.fallback);
  } catch (...) {
    cudaLibraryUnload(lib);
    throw;
  }
}

Module::~Module() {
  if (library_) cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

void* Module::handle_for(const codegen::KernelEntry* entry) const {
  if (entry == &kernel_.main) return main_;
  if (entry == &kernel_.fallback && fallback_) return fallback_;
  // The choice was made on another copy of the kernel: match by name.
  if (entry && entry->name == kernel_.main.name) return main_;
  if (entry && fallback_ && entry->name == kernel_.fallback.name) return fallback_;
  throw Error(Error::Kind::cuda, "internal error: launch of an entry this module does not hold");
}

void Module::launch(const EntryChoice& choice, const compiler::Problem& p, const GemmArgs& args,
                    void* stream) const {
  const codegen::KernelEntry& e = *choice.entry;
  void* fn = handle_for(choice.entry);
  codegen::Dim3 g = e.grid(p.m, p.n);
  if (g.x > 2147483647u || g.y > 65535 || g.z > 65535 || g.x == 0 || g.y == 0)
    throw Error(Error::Kind::cuda, "grid " + std::to_string(g.x) + "x" + std::to_string(g.y) + "x" +
                                       std::to_string(g.z) + " for " + e.name +
                                       " is outside CUDA's limits");
  int m = int(p.m), n = int(p.n), k = int(p.k);
  int lda = int(p.a_ld()), ldb = int(p.b_ld()), ldc = int(p.c_ld());
  const void* a = args.a;
  const void* b = args.b;
  void* c = args.c;
  float alpha = args.alpha, beta = args.beta;
  const float* bias = args.bias;
  // The fixed ABI: (M, N, K, A, lda, B, ldb, C, ldc, alpha, beta, bias), then the
  // tensor maps of A and B for a TMA entry.
  TmaMap map_a{}, map_b{};
  if (e.uses_tma()) {
    map_a = encode_tma_map(kernel_.dtype, a, p.m, p.k, p.a_ld(), e.tma_a);
    map_b = encode_tma_map(kernel_.dtype, b, p.k, p.n, p.b_ld(), e.tma_b);
  }
  void* params[] = {&m, &n, &k, &a, &lda, &b, &ldb, &c, &ldc, &alpha, &beta, &bias, &map_a, &map_b};
  cudaError_t err = cudaLaunchKernel(fn, dim3(g.x, g.y, g.z), dim3(e.block.x, e.block.y, e.block.z),
                                     params, e.dynamic_smem, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) {
    cudaGetLastError();
    std::ostringstream what;
    what << "cudaLaunchKernel(" << e.name << ", grid " << g.x << "x" << g.y << "x" << g.z
         << ", block " << e.block.x << "x" << e.block.y << "x" << e.block.z << ", "
         << e.dynamic_smem << " bytes dynamic smem)";
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, fn) == cudaSuccess)
      what << " [kernel: " << attr.numRegs << " registers, at most " << attr.maxThreadsPerBlock
           << " threads per block, " << attr.sharedSizeBytes << " bytes static smem]";
    else
      cudaGetLastError();
    check_cuda(err, what.str().c_str());
  }
}

}  // namespace schedc::runtime
