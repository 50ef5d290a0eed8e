#pragma once
// Building blocks of `stream_k` (compiler/stream_k.h). The tile body (copies,
// k loop, epilogue) becomes a forced-inline segment function: k-tiles
// [k_first, k_last) of one C tile. A block of a whole tile calls it once,
// inline; a unit calls it once per tile it touches, through a function of
// its own (__noinline__). Inlined into the units' loop, ptxas compiled both
// copies of sgemm_best's k loop 37 instructions longer (it rematerialized
// the copies' row indices, and lost its uniform-datapath stage arithmetic);
// this way both compile as a kernel without stream_k does.
//
//   emit_stream_k_helpers(e, plan);          // module scope
//   emit_stream_k_segment_open(e, plan);     // __device__ … NAME_segment(…, tile, k_first, k_last) {
//   …                                        // constants, thread map, shared arrays
//   emit_stream_k_segment_context(e, plan);  // tiles_m, tiles_n, k_tiles, seg_k
//   …                                        // block index, copies, k loop over seg_k
//   emit_stream_k_fixup(e, plan);            // bool write_c
//   …                                        // if (write_c) store C; }
//   emit_stream_k_unit_segment(e, plan);     // __noinline__ NAME_unit_segment(…)
//   emit_kernel_open(e, plan, name, stream_k_params());
//   emit_stream_k_kernel_body(e, plan);      // the segments' calls; }

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// The parameters a stream_k entry takes after bias (codegen/generated_kernel.h).
std::string stream_k_params();

// Module-level helpers: stream_k_begin, stream_k_unit_of, stream_k_slot.
void emit_stream_k_helpers(Emitter& e, const compiler::KernelPlan& plan);

// Opens `__device__ __forceinline__ void NAME_segment(<ABI>, <stream_k>, int
// tile, int k_first, int k_last)`.
void emit_stream_k_segment_open(Emitter& e, const compiler::KernelPlan& plan);

// In the segment function, after BM, BN, BK: tiles_m, tiles_n, k_tiles and
// seg_k, the k extent of the segment counted from its first k (gA and gB
// start there; the copies are bounded by seg_k instead of K).
void emit_stream_k_segment_context(Emitter& e, const compiler::KernelPlan& plan);

// After the k loop: defines `bool write_c`. A segment that is a whole tile
// writes C; one that is part of a tile publishes rC, and the last of the
// tile's units to arrive replaces rC by the tile's sum and writes C.
void emit_stream_k_fixup(Emitter& e, const compiler::KernelPlan& plan);

// `__device__ __noinline__ void NAME_unit_segment(…)`: the segment function
// as a function of its own, for the units' loop.
void emit_stream_k_unit_segment(Emitter& e, const compiler::KernelPlan& plan);

// The kernel's body: this block's k-tiles and the segment function's calls.
// Requires BM, BN, BK.
void emit_stream_k_kernel_body(Emitter& e, const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
