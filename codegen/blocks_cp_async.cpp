#include "codegen/blocks_cp_async.h"

namespace schedc::codegen {

void emit_cp_async_helpers(Emitter& e) {
  e.lines(R"(__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
})");
  emit_cp_async_copy_helpers(e);
}

void emit_cp_async_copy_helpers(Emitter& e) {
  e.lines(R"(// 16-byte global->shared copy; bytes past src_bytes (0..16) are zero-filled.
__device__ __forceinline__ void cp_async_16(unsigned dst_smem, const void* src_global, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_smem), "l"(src_global),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Wait until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
})");
  e.line();
}

void emit_cp_async_pipeline(Emitter& e, int stages, const std::string& num_k_tiles,
                            const StageLoad& load, const StageCompute& compute) {
  if (stages <= 1) {
    e.comment("single stage: load, wait, compute (two barriers per k-step)");
    e.open_scope(format("for (int k_tile = 0; k_tile < %s; ++k_tile)", num_k_tiles.c_str()));
    load(e, "0", "k_tile");
    e.line("cp_async_commit();");
    e.line("cp_async_wait<0>();");
    e.line("__syncthreads();");
    compute(e, "0");
    e.line("__syncthreads();  // the next load overwrites the stage");
    e.close_scope("k_tile");
    return;
  }
  e.comment(format("prologue: tiles 0..%d in flight, one commit group each", stages - 2));
  e.line("#pragma unroll");
  e.open_scope(format("for (int s = 0; s < %d; ++s)", stages - 1));
  e.open_scope(format("if (s < %s)", num_k_tiles.c_str()));
  load(e, "s", "s");
  e.close_scope();
  e.line("cp_async_commit();");
  e.close_scope();
  e.line("int read_stage = 0;");
  e.line(format("int write_stage = %d;", stages - 1));
  e.open_scope(format("for (int k_tile = 0; k_tile < %s; ++k_tile)", num_k_tiles.c_str()));
  e.line(
      format("cp_async_wait<%d>();  // tile k_tile has landed (this thread's copies)", stages - 2));
  e.line("__syncthreads();  // ... and everyone's; the stage read last step is free");
  e.line(format("const int next_tile = k_tile + %d;", stages - 1));
  e.open_scope(format("if (next_tile < %s)", num_k_tiles.c_str()));
  load(e, "write_stage", "next_tile");
  e.close_scope();
  e.line("cp_async_commit();  // possibly empty: keeps the group count in step");
  compute(e, "read_stage");
  e.line(format("read_stage = read_stage == %d ? 0 : read_stage + 1;", stages - 1));
  e.line(format("write_stage = write_stage == %d ? 0 : write_stage + 1;", stages - 1));
  e.close_scope("k_tile");
  e.line("cp_async_wait<0>();  // only empty groups remain; leave nothing in flight");
}

}  // namespace schedc::codegen
