#pragma once
// A loaded generated module and the launch of one of its entries with the
// fixed kernel ABI (codegen/generated_kernel.h). Loads the CUBIN through the
// CUDA runtime's library API (cudaLibraryLoadData), never through libcuda.

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "compiler/problem.h"
#include "compiler/stream_k.h"

namespace schedc::runtime {

// Which entry runs for a problem, and why.
struct EntryChoice {
  const codegen::KernelEntry* entry = nullptr;  // into the kernel it was chosen from
  std::string name;                             // the entry's name (outlives `entry`)
  bool fallback = false;
  // A wgmma module's main entry on copies of A and/or B in aligned scratch
  // (GeneratedKernel::repack), made by the launch before the main kernel.
  bool repack_a = false, repack_b = false;
  std::string why;  // "preconditions hold" / "lda = 1025 is not a multiple of 4" …
};

// The device pointers and scalars of one launch.
struct GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  const float* bias = nullptr;  // N floats, or null
};

// Main when its alignment preconditions hold for these pointers and leading
// dimensions; else main on repacked operands when the module has a repack
// entry; else the fallback. Throws Error when main's preconditions fail and
// the module has neither (a codegen bug). Pure host logic.
EntryChoice choose_entry(const codegen::GeneratedKernel& kernel, const compiler::Problem& p,
                         const void* a, const void* b, const void* c);

class Module {
 public:
  // Loads `cubin` on the current device and looks up main (and fallback);
  // raises their dynamic shared-memory limit where they need it.
  Module(const codegen::GeneratedKernel& kernel, const std::vector<char>& cubin, int device);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const codegen::GeneratedKernel& kernel() const { return kernel_; }

  // Launches asynchronously on `stream` (a cudaStream_t). Throws Error on a
  // launch failure; execution errors appear at the next synchronization.
  // A stream_k entry launches twice: itself on the split's whole tiles, then
  // its tail on the shared ones, with the module's workspace (allocated at
  // the first split launch, grown when a larger split needs more; its
  // counters start at zero and each launch leaves them so).
  void launch(const EntryChoice& choice, const compiler::Problem& p, const GemmArgs& args,
              void* stream) const;

  // How `choice` would be launched for `p`: its grid, or for a stream_k
  // entry the split on this device.
  std::string launch_note(const EntryChoice& choice, const compiler::Problem& p) const;

 private:
  void* handle_for(const codegen::KernelEntry* entry) const;
  // The launch grid: one block per tile, or for a persistent entry at most
  // one per slot of the device.
  codegen::Dim3 grid_for(const EntryChoice& choice, const compiler::Problem& p) const;
  // Blocks of a persistent grid over `tiles` tiles: at most one per slot.
  int64_t persistent_blocks(const EntryChoice& choice, int64_t tiles) const;
  // The stream_k tail of the entry whose handle is `entry_handle`.
  void* tail_for(void* entry_handle) const;
  compiler::StreamKSplit stream_k_split(const EntryChoice& choice,
                                        const compiler::Problem& p) const;
  void ensure_stream_k_workspace(const codegen::KernelEntry& e,
                                 const compiler::StreamKSplit& split) const;
  codegen::GeneratedKernel kernel_;
  int num_sms_ = 0;
  int cc_major_ = 0;
  void* library_ = nullptr;  // cudaLibrary_t
  void* main_ = nullptr;     // cudaKernel_t
  void* fallback_ = nullptr;
  void* repack_ = nullptr;     // wgmma modules: the repack entry (cudaKernel_t)
  void* main_tail_ = nullptr;  // stream_k tails (cudaKernel_t)
  void* fallback_tail_ = nullptr;
  // stream_k workspace: partial sums and per-tile arrival counters.
  mutable void* sk_partials_ = nullptr;
  mutable void* sk_counters_ = nullptr;
  mutable size_t sk_partials_bytes_ = 0, sk_counters_bytes_ = 0;
  // Repack scratch for A and B.
  mutable void* scratch_[2] = {nullptr, nullptr};
  mutable size_t scratch_bytes_[2] = {0, 0};
  // Copies rows x cols of `src` (leading dimension ld) into scratch `which`;
  // returns the copy's leading dimension.
  int64_t repack(int which, const void* src, int64_t rows, int64_t cols, int64_t ld,
                 void* stream) const;
};

}  // namespace schedc::runtime
