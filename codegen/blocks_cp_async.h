#pragma once
// Building blocks for asynchronous global->shared copies (`stages N`, sm_80+):
// 16-byte cp.async with src-size zero-fill, commit/wait groups, and the
// N-stage pipeline skeleton with one barrier per k-step. Written for any
// kernel that stages tiles through shared memory (tensor-core or SIMT).

#include <functional>
#include <string>

#include "codegen/emitter.h"

namespace schedc::codegen {

// Device helpers: smem_u32 (generic->shared address), cp_async_16 (16 bytes,
// bytes past src_bytes zero-filled, nothing read when src_bytes == 0),
// cp_async_commit, cp_async_wait<N>.
void emit_cp_async_helpers(Emitter& e);
// The same without smem_u32 (for a module that has it already).
void emit_cp_async_copy_helpers(Emitter& e);

// The stage loop. `load(e, stage, k_tile)` emits the copy of k-tile `k_tile`
// (an expression) into shared stage `stage` (an expression) as cp.async
// copies; `compute(e, stage)` emits the math on a ready stage. Structure for
// stages >= 2 (one __syncthreads per k-step):
//
//   prologue: load tiles 0 .. stages-2, one commit_group each
//   for k_tile: wait_group<stages-2>; __syncthreads();
//               load tile k_tile+stages-1 into the stage read last step; commit
//               compute(k_tile's stage)
//
// The barrier both publishes tile k_tile and retires every warp's reads of
// the stage the new load overwrites. stages == 1: load, wait_group<0>,
// barrier, compute, barrier.
using StageLoad =
    std::function<void(Emitter&, const std::string& stage, const std::string& k_tile)>;
using StageCompute = std::function<void(Emitter&, const std::string& stage)>;
void emit_cp_async_pipeline(Emitter& e, int stages, const std::string& num_k_tiles,
                            const StageLoad& load, const StageCompute& compute);

}  // namespace schedc::codegen
