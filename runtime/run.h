#pragma once
// runtime::GpuSession: one device, one stream, one cuBLAS handle, reused by
// every run of a process (schedc run, schedc bench, the GPU tests).
//   prepare(): JIT (through the cache) and load a generated kernel;
//   run():     validate it in both modes against cuBLAS, then time it and
//              cuBLAS with the same harness. The inputs and cuBLAS's
//              reference of a problem are drawn and computed once a session
//              (up to 3 GiB of them, runtime/host_cases.h).
// Tests plant hand-written kernels through exactly this API.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "compiler/problem.h"
#include "compiler/schedule.h"
#include "runtime/batch.h"
#include "runtime/device.h"
#include "runtime/jit.h"
#include "runtime/launch.h"
#include "runtime/timing.h"
#include "runtime/validate.h"

namespace schedc::runtime {

class HostCaseCache;  // runtime/host_cases.h
class Im2colKernel;   // runtime/im2col.h
struct ConvRunOptions;
struct ConvReport;  // runtime/conv_run.h

struct RunOptions {
  // ld 0 = packed; batch > 1 (strides 0 = packed) needs a batched kernel.
  compiler::Problem problem;
  compiler::Epilogue epilogue;  // alpha, beta, bias, relu
  uint64_t seed = 1;
  bool validate = true;  // exact and random modes
  bool time = true;      // schedc's kernel and cuBLAS
  bool flush_l2 = false;
  TimingOptions timing;
  std::string save_dir;  // "" = do not write .npy files
};

struct PreparedKernel {
  codegen::GeneratedKernel kernel;
  // What prepare() compiled (or found in the cache) and loaded: the entries
  // the first launch needs, compiled side by side (runtime/jit.h).
  std::vector<std::string> entries;
  JitResult jit;  // runtime::combine of their compiles: ms is the wall time
  double load_ms = 0;
  std::unique_ptr<Module> module;  // compiles more entries when a launch needs them
};

struct RunReport {
  EntryChoice entry;  // points into the PreparedKernel's kernel
  // Entries this run compiled (or found in the cache) before its first
  // launch because prepare() had not (the fallback, a repack entry).
  Module::Required late;
  RefMode ref_mode = RefMode::f32_pedantic;
  std::vector<ValidationResult> validations;  // exact, then random
  std::string race;  // non-empty: the result changed between runs on the same inputs
  bool timed = false;
  TimingStats kernel, cublas;
  // Non-empty when the kernel was timed without a cuBLAS baseline, and why
  // (dtype s8: cuBLAS int8 rejected the problem); cublas is then empty.
  std::string no_baseline;
  double validate_ms = 0, time_ms = 0;  // host wall time of each phase
  std::vector<std::string> saved;       // .npy files written

  bool ok() const;              // every validation passed and no race seen
  std::string failure() const;  // why not, in one line ("" when ok)
  double rel_err() const;       // random mode's (else exact's) relative error
  bool has_baseline() const { return timed && no_baseline.empty(); }
  // cuBLAS median / kernel median * 100; 0 when not timed, NaN when timed
  // without a baseline.
  double percent_of_cublas() const;
};

// One thread at a time: run() reuses the session's host buffers, and its
// stream and cuBLAS handle are the session's. Tune runs a session per GPU.
class GpuSession {
 public:
  // Initializes the CUDA context, a stream and a cuBLAS handle on `device`.
  explicit GpuSession(const DeviceInfo& device);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const DeviceInfo& device() const { return device_; }
  double init_ms() const { return init_ms_; }

  // Compiles and loads the entries the first launch needs: for `problem`
  // (packed operands at aligned addresses, as run() allocates them), the
  // entry choose_entry picks; without one, main; and that entry's stream_k
  // tail. Other entries compile when a launch first needs them.
  std::shared_ptr<PreparedKernel> prepare(const codegen::GeneratedKernel& kernel,
                                          const JitOptions& jit = {},
                                          const compiler::Problem* problem = nullptr);
  // Throws Error on an invalid problem (sizes, leading dimensions, a batch
  // out of 1..65535, a stride less than its operand's matrix) and on a batch
  // of more than one GEMM for a kernel without `batch` (GeneratedKernel::
  // batched); a strided batch is validated and timed whole, beside
  // cublasGemmStridedBatchedEx (docs/runtime.md, "Strided batch").
  RunReport run(const PreparedKernel& prepared, const RunOptions& options);
  // A convolution module (GeneratedKernel::conv) on options.conv: validated
  // against im2col + cuBLAS, timed beside cuBLAS's GEMM and the explicit
  // im2col + cuBLAS pipeline (runtime/conv_run.h). Throws Error on a GEMM
  // module and on a convolution it cannot compute (conv_run_error).
  ConvReport run_conv(const PreparedKernel& prepared, const ConvRunOptions& options);

 private:
  DeviceInfo device_;
  void* stream_ = nullptr;  // cudaStream_t
  void* cublas_ = nullptr;  // cublasHandle_t
  // cuBLAS's workspace, the size its documentation recommends (32 MiB on
  // sm_90 and later, 4 MiB before): the baseline every ratio is taken
  // against runs as NVIDIA (and torch) set it up, not on the default pool.
  void* cublas_workspace_ = nullptr;
  double init_ms_ = 0;
  // Inputs and references of earlier validations, reused by later runs of
  // the same problem (runtime/host_cases.h).
  std::unique_ptr<HostCaseCache> cases_;
  // run_conv's GPU im2col, compiled and loaded at its first use.
  std::shared_ptr<Im2colKernel> im2col_;
  // Host copies of C, kept from run to run: their pages are faulted in once,
  // not on every validation of a 64 MB C (a tune validates hundreds).
  struct Scratch {
    std::vector<char> got_raw, random_result, again;
    std::vector<float> got;
    std::vector<int32_t> got_s32;  // an s32 output's values (dtype s8)
  } scratch_;
};

// A GpuSession on `device`, or nothing with `error` set when the context,
// stream or cuBLAS handle cannot be created.
std::unique_ptr<GpuSession> start_session(const DeviceInfo& device, std::string& error);

}  // namespace schedc::runtime
