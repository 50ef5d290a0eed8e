#pragma once
// compiler::explain: why a schedule is fast or slow, from its KernelPlan
// alone (no GPU): occupancy with its limiting resource, arithmetic intensity
// and the roofline bound it implies, the predicted bank wavefronts of every
// shared-memory access (from the plan's thread -> address maps and the model
// in compiler/bank_conflicts.h), and the coalescing of global accesses.

#include <string>
#include <vector>

#include "compiler/bank_conflicts.h"
#include "compiler/kernel_plan.h"

namespace schedc::compiler {

struct Occupancy {
  int threads = 0;
  int registers = -1;  // per thread, from ptxas; -1 = unknown
  int smem_bytes = 0;
  int blocks_per_sm = 0;
  int warps_per_sm = 0;
  double occupancy = 0;  // active warps / maximum warps per SM
  std::string limited_by;
};

struct Roofline {
  // FLOPs per byte moved: global memory (the block tile's loads per k-step)
  // and shared memory (the thread's or warp's fragment loads per k).
  double intensity_global = 0, intensity_shared = 0;
  double peak_tflops = 0;  // the unit the kernel runs on
  const char* unit = "";   // "FFMA" / "tensor cores (tf32)" / …
  double dram_tbps = 0, smem_tbps = 0;
  double bound_tflops = 0;  // min(peak, I_global * DRAM, I_shared * smem)
  std::string bound_by;
};

// One shared-memory access of the kernel, over one k-step of one block.
struct SharedAccess {
  std::string what;  // "store sA (global -> shared copy of A)"
  int width_bytes = 4;
  int requests = 0;  // warp requests per k-step, whole block
  BankCost cost;
};

// One global access, over one k-step of one block (C: the whole tile).
struct GlobalAccess {
  std::string what;
  int width_bytes = 4;
  int requests = 0;
  long long bytes = 0;    // bytes the threads asked for
  long long sectors = 0;  // 32-byte sectors those requests touch
  double efficiency() const { return sectors ? double(bytes) / (32.0 * double(sectors)) : 1.0; }
};

struct Explanation {
  Occupancy occupancy;
  Roofline roofline;
  std::vector<SharedAccess> shared;
  std::vector<GlobalAccess> global;
  std::vector<std::string> notes;  // what the model leaves out
  // The tiled SIMT kernel's registers a thread, estimated before ptxas runs:
  // its accumulators (TM x TN), its fragments (TM + TN, twice with two
  // fragment slots) and about 24 for addresses and indices (sgemm_best: 200
  // estimated, 238 by ptxas). -1 on other kinds.
  int registers_estimate = -1;
  // The most a thread may hold with block_threads threads in one block (at
  // most 255): an estimate above it means ptxas will spill.
  int registers_limit = 255;
  bool spill_predicted() const { return registers_estimate > registers_limit; }
};

// `registers` = ptxas's count for the main entry, or -1 if unknown. `shape`
// gives the leading dimensions used for the global-access addresses.
Explanation explain(const KernelPlan& plan, int registers, const Shape& shape);

}  // namespace schedc::compiler
