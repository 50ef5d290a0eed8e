#pragma once
// What analyze and lower need to know about the GPU they plan for. Filled from
// a table by architecture (no GPU needed); the runtime may refine it from the
// device's own properties.

#include <algorithm>
#include <string>

namespace schedc::compiler {

struct Target {
  int sm = 90;  // compute capability * 10
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int smem_per_block_optin = 227 * 1024;   // after cudaFuncSetAttribute opt-in
  int smem_per_block_default = 48 * 1024;  // without opt-in
  int smem_per_sm = 228 * 1024;
  int smem_reserved_per_block = 1024;  // CUDA's own, per resident block (sm_80 and later)
  int regs_per_sm = 64 * 1024;
  // The most registers a thread may have with `threads` threads in one block
  // (64K / threads in steps of 8, at most 255): ptxas's bound for a kernel
  // launched with them, and what each thread owns from launch.
  int registers_per_thread(int threads) const {
    return std::min(255, regs_per_sm / std::max(threads, 1) / 8 * 8);
  }
  // The registers such a block owns from launch when `blocks` of it share an
  // SM (`blocks_per_sm`): the pool setmaxnreg moves between its warpgroups
  // (384 threads: 168 each; 640 threads: 96 each; 256 threads, 2 blocks: 128).
  int register_pool(int threads, int blocks = 1) const {
    return registers_per_thread(threads * std::max(blocks, 1)) * threads;
  }
  int num_sms = 132;
  int warp_size = 32;
  int reg_alloc_unit = 256;  // registers are allocated per warp in units of 256

  // Datasheet peaks (dense), for `schedc explain`'s roofline: leads, not
  // measurements. Shared memory moves 128 bytes per clock per SM.
  double fp32_tflops = 66.9;   // FFMA
  double tf32_tflops = 494.7;  // tensor cores
  double f16_tflops = 989.4;   // tensor cores, f16/bf16 with f32 accumulation
  double s8_tops = 1978.9;     // tensor cores, int8 with s32 accumulation
  double dram_tbps = 3.35;     // HBM3 (H100 SXM); H200: 4.8
  double clock_ghz = 1.98;
  double smem_tbps() const { return 128.0 * num_sms * clock_ghz / 1000.0; }

  std::string arch_name() const { return "sm_" + std::to_string(sm); }
};

// The target for an architecture name such as "sm_90" or "sm_80".
// Returns false (and leaves `out` alone) for an architecture schedc does not know.
bool target_for_arch(const std::string& arch, Target& out);

}  // namespace schedc::compiler
