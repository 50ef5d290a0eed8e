// codegen::emit_cuda: the SIMT kernels from their building blocks; the
// tensor-core path goes to emit_mma. A vectorized plan yields a module with
// two entries: the main kernel and its alignment-checked twin (the fallback),
// which the runtime launches when the main entry's alignment fails.
#include "codegen/emit_cuda.h"

#include "codegen/blocks_common.h"
#include "codegen/blocks_simt.h"
#include "codegen/blocks_stream_k.h"
#include "codegen/emit_mma.h"
#include "codegen/emit_wgmma.h"
#include "compiler/lower.h"
#include "dsl/diagnostics.h"

namespace schedc::codegen {

using compiler::KernelKind;
using compiler::KernelPlan;

namespace {

void emit_naive_kernel(Emitter& e, const KernelPlan& p) {
  e.comment("Naive kernel: one thread per C element, A and B read from global memory.");
  emit_entry_guard_open(e, p.name);
  emit_kernel_open(e, p, p.name);
  emit_tile_constants(e, p);
  emit_block_index(e, p);
  emit_naive_body(e, p);
  e.close_scope(p.name);
  emit_entry_guard_close(e, p.name);
}

// What a tiled kernel does once it knows its tile: the C tile's corner, the
// shared arrays, the copies and the k loop, leaving rC. The main kernel and
// the stream_k tail differ only before (the tail's slice) and after (its
// fix-up).
void emit_tile_k_loop(Emitter& e, const KernelPlan& p) {
  emit_block_index(e, p);
  emit_smem_decls(e, p);
  emit_copy_setup(e, p);
  e.line();
  emit_main_loop(e, p);
  e.line();
}

// The stream_k tail of `main`'s entry: one slice of one shared tile per block.
void emit_stream_k_tail_kernel(Emitter& e, const KernelPlan& main) {
  const KernelPlan p = compiler::lower_stream_k_tail(main);
  emit_entry_guard_open(e, p.name);
  emit_kernel_open(e, p, p.name, stream_k_params());
  emit_tile_constants(e, p);
  emit_thread_map(e, p);
  emit_stream_k_slice(e, p);
  emit_tile_k_loop(e, p);
  emit_stream_k_fixup(e, p);
  e.open_scope("if (write_c)");
  emit_store_c(e, p);
  e.close_scope();
  emit_stream_k_tail_end(e, p);
  emit_entry_guard_close(e, p.name);
}

void emit_tiled_kernel(Emitter& e, const KernelPlan& p) {
  if (p.fallback)
    e.comment(
        "Fallback: the same kernel, but A, B and C each use vector accesses only where their "
        "pointer and leading dimension allow it (checked here, operand by operand), element by "
        "element otherwise: correct for any alignment.");
  else
    e.comment("Tiled kernel: block tile staged through shared memory, register tile per thread.");
  emit_entry_guard_open(e, p.name);
  emit_kernel_open(e, p, p.name);
  emit_tile_constants(e, p);
  if (p.stream_k) emit_stream_k_launch_tail(e, p);
  emit_thread_map(e, p);
  emit_tile_k_loop(e, p);
  emit_store_c(e, p);
  e.close_scope(p.name);
  emit_entry_guard_close(e, p.name);
  if (p.stream_k) {
    e.line();
    emit_stream_k_tail_kernel(e, p);
  }
}

// The SIMT and naive kernels.
GeneratedKernel emit_simt(const KernelPlan& plan) {
  SCHEDC_INTERNAL_ASSERT(plan.kind == KernelKind::naive || plan.dtype == compiler::DType::f32,
                         "the tiled SIMT path generates f32 kernels only");
  GeneratedKernel k;
  k.dtype = compiler::dtype_name(plan.dtype);
  k.min_sm = 70;
  Emitter e;
  emit_module_header(e, plan);
  emit_epilogue_helpers(e, plan);
  if (plan.pipeline == compiler::Pipeline::cp_async) {
    emit_cp_async_helpers(e, plan);
    k.min_sm = 80;
  }
  if (plan.stream_k) emit_stream_k_helpers(e, plan);
  if (plan.kind == KernelKind::naive) {
    emit_naive_kernel(e, plan);
  } else {
    emit_tiled_kernel(e, plan);
  }
  k.main = make_entry(plan, plan.name);
  if (plan.needs_fallback()) {
    KernelPlan fb = compiler::lower_fallback(plan);
    e.line();
    emit_tiled_kernel(e, fb);
    k.fallback = make_entry(fb, fb.name);
  }
  k.source = e.str();
  k.entry_guards = true;
  return k;
}

}  // namespace

GeneratedKernel emit_cuda(const KernelPlan& plan) {
  GeneratedKernel k = plan.wgmma ? emit_wgmma(plan) : plan.mma ? emit_mma(plan) : emit_simt(plan);
  // Every path's problems lie in the schedule's layouts (runtime, validation).
  k.a_col = plan.schedule.a_col;
  k.b_col = plan.schedule.b_col;
  k.c_col = plan.schedule.c_col;
  k.batched = plan.schedule.batch > 0;
  return k;
}

}  // namespace schedc::codegen
