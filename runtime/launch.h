#pragma once
// A loaded generated module and the launch of one of its entries with the
// fixed kernel ABI (codegen/generated_kernel.h). Loads the CUBIN through the
// CUDA runtime's library API (cudaLibraryLoadData), never through libcuda.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "compiler/conv_halo.h"
#include "compiler/problem.h"
#include "compiler/stream_k.h"
#include "runtime/jit.h"
#include "runtime/kernel_launch.h"
#include "runtime/tma_map.h"

namespace schedc::runtime {

// Which entry runs for a problem, and why.
struct EntryChoice {
  const codegen::KernelEntry* entry = nullptr;  // into the kernel it was chosen from
  std::string name;                             // the entry's name (outlives `entry`)
  bool fallback = false;
  // A wgmma module's main entry on copies of A and/or B in aligned scratch
  // (GeneratedKernel::repack), made by the launch before the main kernel.
  bool repack_a = false, repack_b = false;
  // A transposed into row-major scratch first, B into column-major scratch
  // (GeneratedKernel::transpose).
  bool transpose_a = false, transpose_b = false;
  std::string why;  // "preconditions hold" / "lda = 1025 is not a multiple of 4" …
};

struct ConvArgs;  // runtime/conv_args.h

// The device pointers and scalars of one launch.
struct GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  const float* bias = nullptr;  // N floats, or null
  // A convolution module's last parameter (GeneratedKernel::conv; null for
  // a GEMM module): A is then the input tensor, B the filters, C the output.
  const ConvArgs* conv = nullptr;
  // N floats: the per-channel scales of `epilogue ... scale`
  // (GeneratedKernel::channel_scale; required there, ignored elsewhere).
  const float* scale = nullptr;
};

// Main when its alignment preconditions hold for these pointers and leading
// dimensions; else main on repacked operands when the module has a repack
// entry; else the fallback. Throws Error when main's preconditions fail and
// the module has neither (a codegen bug). Pure host logic.
EntryChoice choose_entry(const codegen::GeneratedKernel& kernel, const compiler::Problem& p,
                         const void* a, const void* b, const void* c);

// The entries a launch of `choice` runs: its entry, that entry's stream_k
// tail, the repack entry when it repacks an operand.
std::vector<std::string> entries_for(const codegen::GeneratedKernel& kernel,
                                     const EntryChoice& choice);
// The entries a launch on `p` runs with its operands at aligned addresses
// (as cudaMalloc returns them, and GpuSession::run allocates them): main or
// the fallback as p's leading dimensions allow, and what goes with it. A
// module without entry guards (a person's --kernel-source): every entry.
std::vector<std::string> entries_for(const codegen::GeneratedKernel& kernel,
                                     const compiler::Problem& p);
// The entries launches on each of `problems` run, each once, in first-use
// order.
std::vector<std::string> entries_for(const codegen::GeneratedKernel& kernel,
                                     const std::vector<compiler::Problem>& problems);
// Main and its stream_k tail: what most launches run.
std::vector<std::string> main_entries(const codegen::GeneratedKernel& kernel);

// A generated module on one device, its entries compiled and loaded as
// launches need them (runtime/module_load.cpp): each entry of a module with
// entry guards from a CUBIN of its own (runtime/jit.h), all of a person's
// --kernel-source from one.
class Module {
 public:
  // Compiles nothing yet: `arch` ("sm_90") and `jit` say how entries will be
  // compiled for `device` (the current device).
  Module(const codegen::GeneratedKernel& kernel, int device, const std::string& arch,
         const JitOptions& jit);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const codegen::GeneratedKernel& kernel() const { return kernel_; }

  // What require() did: the entries' compiles (or cache hits) and the wall
  // time of those, side by side, and of loading them.
  struct Required {
    std::vector<std::string> entries;  // newly loaded (none: all were loaded)
    JitResult jit;                     // runtime::combine of their compiles
    double load_ms = 0;
  };
  // Compiles, side by side, and loads those of `entries` not loaded yet,
  // raising their dynamic shared-memory limit where they need it.
  // Thread-safe. Throws Error when NVRTC rejects the source or the CUBIN does
  // not load.
  Required require(const std::vector<std::string>& entries) const;
  // Every entry compiled and loaded so far, in that order.
  std::vector<std::string> loaded() const;

  // Launches asynchronously on `stream` (a cudaStream_t). Throws Error on a
  // launch failure; execution errors appear at the next synchronization.
  // A convolution module's entries (main, fallback, their stream_k tails)
  // take *args.conv after their last GEMM parameter; it throws Error when
  // args.conv is missing (or given to a GEMM module), when the input (A)
  // breaks main's preconditions (it is never repacked: it is not a matrix),
  // or when `p` is not the convolution's implicit GEMM.
  // A stream_k entry launches twice: itself on the split's whole tiles, then
  // its tail on the shared ones, with the module's workspace (allocated at
  // the first split launch, grown when a larger split needs more; its
  // counters start at zero and each launch leaves them so).
  void launch(const EntryChoice& choice, const compiler::Problem& p, const GemmArgs& args,
              void* stream) const;

  // How the launch of `choice` on `p` reads a convolution's A: 1 or 2 TMA
  // copies in im2col mode a k-tile (conv_im2col_copies), or 0, the
  // producer's copies, with `why` (when given) set to the reason. Two copies
  // (C a multiple of BK / 2 only) are taken only where the grid runs in one
  // wave (at most blocks_per_sm x SMs blocks): 64-byte copies ask TMA for
  // twice the requests a byte, which a small grid's latency hides and a
  // many-wave grid's throughput does not (docs/convolution.md, "Two copies
  // a k-tile").
  int conv_a_copies(const EntryChoice& choice, const compiler::Problem& p, const ConvArgs& conv,
                    std::string* why = nullptr) const;
  // Whether the launch of a `halo` entry takes the convolution's input once
  // a tile (runtime/conv_launch.h, conv_halo_plan, with the split_k slices
  // of the halo tiles' grid): its geometry, or nothing and `why`.
  std::optional<compiler::HaloGeometry> conv_halo(const EntryChoice& choice,
                                                  const compiler::Problem& p, const ConvArgs& conv,
                                                  std::string* why = nullptr) const;

  // The bytes of the `__device__` variable `name` of the loaded CUBINs (a
  // person's --kernel-source may leave numbers there: `schedc run
  // --print-global`), copied once the device has finished its work; nothing
  // where no loaded CUBIN has one of that name.
  std::optional<std::vector<char>> read_global(const std::string& name) const;

  // How `choice` would be launched for `p`: its grid, or for a stream_k
  // entry the split on this device.
  std::string launch_note(const EntryChoice& choice, const compiler::Problem& p) const;

 private:
  // The loaded kernel (cudaKernel_t) of the entry named `name`, compiled and
  // loaded first when no launch has needed it yet.
  void* handle(const std::string& name) const;
  // The entry's name, once checked that the entry is this module's main or
  // fallback (an internal error otherwise).
  const std::string& checked_name(const codegen::KernelEntry* entry) const;
  // handle(name) with its function in the current context, looked up at the
  // entry's first launch in that context.
  LaunchableEntry launchable(const std::string& name) const;
  // Blocks of entry `name` (launched as `e`) that fit on one SM at once: the
  // occupancy query's answer, asked once per entry (1 should it fail: a
  // stream_k split or a persistent grid sized from it stays correct).
  int blocks_per_sm(const std::string& name, const codegen::KernelEntry& e) const;
  // Clusters of `size` blocks of entry `name` (launched as `e`, with the
  // cluster size set at launch: split_k) that run on the device at once
  // (cudaOccupancyMaxActiveClusters: a cluster's blocks share one GPC), asked
  // once per size and kept.
  int64_t clusters_that_fit(const std::string& name, const codegen::KernelEntry& e,
                            uint32_t size) const;
  // The launch grid: one block per tile, or for a persistent entry at most
  // one per slot of the device.
  codegen::Dim3 grid_for(const EntryChoice& choice, const compiler::Problem& p) const;
  // `split_k N` (KernelEntry::split_k): the CTAs, one cluster, each C tile
  // takes: the most of N, and of the problem's k-tiles (every CTA gets one
  // at least), whose clusters all fit on the device at once; 1 where not
  // even two-CTA clusters do (a split that adds a wave costs more than it
  // saves) and without split_k.
  uint32_t split_slices(const EntryChoice& choice, const compiler::Problem& p) const;
  // A persistent grid over `tiles` tiles of each of `batch` GEMMs: at most
  // one block per slot; one walk over every GEMM's tiles where the entry
  // walks the batch, else the slots shared alike among the GEMMs (grid z).
  codegen::Dim3 persistent_grid(const EntryChoice& choice, int64_t tiles, int64_t batch) const;
  compiler::StreamKSplit stream_k_split(const EntryChoice& choice,
                                        const compiler::Problem& p) const;
  void ensure_stream_k_workspace(const codegen::KernelEntry& e, const compiler::StreamKSplit& split,
                                 int64_t batch) const;
  // Loads `cubin` and looks up `names` in it (module_load.cpp).
  void load(const std::vector<char>& cubin, const std::vector<std::string>& names) const;
  codegen::GeneratedKernel kernel_;
  int device_ = 0;
  std::string arch_;
  JitOptions jit_;
  int num_sms_ = 0;
  int cc_major_ = 0;
  // A loaded entry: its kernel, its dynamic shared memory, and its function
  // in the context of its last launch.
  struct Loaded {
    void* kernel = nullptr;  // cudaKernel_t
    uint32_t dynamic_smem = 0;
    void* function = nullptr;  // CUfunction in `context`
    void* context = nullptr;   // CUcontext
    int blocks_per_sm = 0;     // 0: not asked yet
    // split_k: cluster size -> how many clusters of it fit on the device at once.
    std::map<uint32_t, int64_t> clusters;
  };
  mutable std::mutex mutex_;                       // guards the three below
  mutable std::vector<void*> libraries_;           // cudaLibrary_t, one per CUBIN loaded
  mutable std::map<std::string, Loaded> kernels_;  // entry name -> its kernel
  mutable std::vector<std::string> loaded_;        // in the order they were loaded
  // The tensor maps of the last launches (each encoded once while its
  // operand stays where it is).
  mutable TmaMapMemo maps_;
  // stream_k workspace: partial sums and per-tile arrival counters.
  mutable void* sk_partials_ = nullptr;
  mutable void* sk_counters_ = nullptr;
  mutable size_t sk_partials_bytes_ = 0, sk_counters_bytes_ = 0;
  // Repack scratch for A and B.
  mutable void* scratch_[2] = {nullptr, nullptr};
  mutable size_t scratch_bytes_[2] = {0, 0};
  // Copies rows x cols of `src` (leading dimension ld), for each of `batch`
  // GEMMs `stride` elements apart, into scratch `which`, the copies packed
  // one after the other; returns the copy's leading dimension.
  int64_t repack(int which, const void* src, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                 int64_t batch, void* stream) const;
  // Runs the copy entry `entry` ((src, rows, cols, ld, dst, dst_ld) on
  // `grid` x `block`) once per GEMM of a batch: GEMM z's source `stride`
  // elements past `src`, its copy dst_rows x dst_ld elements after the
  // previous one in scratch `which` (grown to hold them all; `what` names it
  // in errors).
  void copy_per_gemm(int which, const char* what, const std::string& entry, codegen::Dim3 grid,
                     codegen::Dim3 block, const void* src, int64_t rows, int64_t cols, int64_t ld,
                     int64_t stride, int64_t batch, int64_t dst_rows, int64_t dst_ld,
                     void* stream) const;
  // Transposes the rows x cols `src` (a column-major A as stored: K rows of
  // M; a row-major B: K rows of N), each GEMM's, into the operand's scratch
  // (`which`: 0 A, 1 B) as cols rows of K (GeneratedKernel::transpose),
  // packed; returns their leading dimension.
  int64_t transpose(int which, const void* src, int64_t rows, int64_t cols, int64_t ld,
                    int64_t stride, int64_t batch, void* stream) const;
};

}  // namespace schedc::runtime
