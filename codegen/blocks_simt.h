#pragma once
// Building blocks of the SIMT (f32 FMA) kernels, each printing one decision
// of the plan. Names carry the memory space: gA (global), sA (shared),
// rgA (registers staging a global tile), rA/rB (fragments), rC (accumulators).

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// The naive kernel's body: one thread per C element, global memory only.
void emit_naive_body(Emitter& e, const compiler::KernelPlan& plan);

// constexpr thread-tile constants and `thread_m`, `thread_n`: the corner of
// this thread's first piece in the block tile (the plan's ThreadMap).
void emit_thread_map(Emitter& e, const compiler::KernelPlan& plan);

// The shared arrays sA, sB (static, or carved from dynamic shared memory
// above 48 KB), with their shapes.
void emit_smem_decls(Emitter& e, const compiler::KernelPlan& plan);

// Per-thread constants of the global -> shared copies (first row/col).
void emit_copy_setup(Emitter& e, const compiler::KernelPlan& plan);

// Global tile at k offset `k0` -> staging registers rgA / rgB, zero-filled
// outside M, N, K; vector loads when the whole vector is inside.
void emit_load_tiles(Emitter& e, const compiler::KernelPlan& plan, const std::string& k0);

// Staging registers -> shared buffer `buf` ("" when single-buffered).
void emit_store_tiles(Emitter& e, const compiler::KernelPlan& plan, const std::string& buf);

// The k-step's work on shared buffer `buf`: for each kk in BK, fragments
// sA -> rA, sB -> rB, then the TM x TN outer product into rC.
void emit_compute(Emitter& e, const compiler::KernelPlan& plan, const std::string& buf);

// Module-level cp.async helpers (cp_async4/8/16, commit, wait) for `stages`.
void emit_cp_async_helpers(Emitter& e, const compiler::KernelPlan& plan);

// Global tile at k offset `k0` -> shared buffer `buf` by cp.async, zero-filled
// outside M, N, K (the `stages` pipeline).
void emit_issue_tiles(Emitter& e, const compiler::KernelPlan& plan, const std::string& k0,
                      const std::string& buf);

// The k loop: single buffer (two barriers per k-step) or double buffer
// (prefetch through registers, one barrier per k-step) or cp.async stages.
void emit_main_loop(Emitter& e, const compiler::KernelPlan& plan);

// rC -> C through the epilogue helpers, predicated on M and N.
void emit_store_c(Emitter& e, const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
