#pragma once
// Building blocks of `stream_k` (compiler/stream_k.h). A stream_k module has
// two kernels per entry: the main one computes whole tiles as a kernel
// without stream_k does (same code, a 1-D grid, and on sm_90 a line that lets
// the tail launch early), and the tail (`<name>_stream_k`) computes the
// shared k-tiles of the other tiles. The tail's body is a segment function,
// k-tiles [k_first, k_last) of one C tile, called once per tile a unit
// touches. Two kernels and a function of its own, because ptxas schedules a
// k loop differently when other copies of it or an enclosing loop share its
// function: sgemm_best's whole tiles ran 6-7% slower that way on an H100.
//
//   main entry:  emit_kernel_open(…); …; emit_stream_k_launch_tail(e, plan); …
//   tail entry (plan = compiler::lower_stream_k_tail(main plan)):
//     emit_stream_k_helpers(e, plan);          // module scope, once
//     emit_stream_k_segment_open(e, plan);     // __device__ __noinline__ NAME_segment(…) {
//     …                                        // constants, thread map, shared arrays
//     emit_stream_k_segment_context(e, plan);  // tiles_m, tiles_n, k_tiles, seg_k
//     …                                        // block index, copies, k loop over seg_k
//     emit_stream_k_fixup(e, plan);            // bool write_c
//     …                                        // if (write_c) store C; }
//     emit_kernel_open(e, plan, plan.name, stream_k_params());
//     emit_stream_k_kernel_body(e, plan);      // the unit's segments; }

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// The parameters a stream_k entry takes after bias (codegen/generated_kernel.h).
std::string stream_k_params();

// Module-level helpers: stream_k_begin, stream_k_unit_of, stream_k_slot.
void emit_stream_k_helpers(Emitter& e, const compiler::KernelPlan& plan);

// The tail's segment function: `<tail name>_segment`.
std::string stream_k_segment_name(const compiler::KernelPlan& tail);

// Opens `__device__ __noinline__ void NAME_segment(<ABI>, <stream_k>, int tile,
// int k_first, int k_last)`.
void emit_stream_k_segment_open(Emitter& e, const compiler::KernelPlan& plan);

// In the segment function, after BM, BN, BK: tiles_m, tiles_n, k_tiles and
// seg_k, the k extent of the segment counted from its first k (gA and gB
// start there; the copies are bounded by seg_k instead of K).
void emit_stream_k_segment_context(Emitter& e, const compiler::KernelPlan& plan);

// After the k loop: defines `bool write_c`. A segment that is a whole tile
// writes C; one that is part of a tile publishes rC, and the last of the
// tile's units to arrive replaces rC by the tile's sum and writes C.
void emit_stream_k_fixup(Emitter& e, const compiler::KernelPlan& plan);

// In the main entry: on sm_90, `griddepcontrol.launch_dependents` (the tail
// may launch once every block of the main grid has started).
void emit_stream_k_launch_tail(Emitter& e, const compiler::KernelPlan& plan);

// The tail kernel's body: this unit's k-tiles and the segment function's calls.
// Requires BM, BN, BK.
void emit_stream_k_kernel_body(Emitter& e, const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
