#pragma once
// Building blocks of `stream_k` (compiler/stream_k.h). A stream_k module has
// two kernels per entry: the main one computes whole tiles as a kernel
// without stream_k does (same code, a 1-D grid, and on sm_90 a line that lets
// the tail launch early), and the tail (`<name>_stream_k`) computes one slice
// of one shared tile per block: the main entry's code with the slice's k
// range, then the fix-up. Two kernels, because ptxas schedules a k loop
// differently when other code shares its function: sgemm_best's whole tiles
// ran 6-7% slower that way on an H100.
//
//   main entry:  emit_kernel_open(…); …; emit_stream_k_launch_tail(e, plan); …
//   tail entry (plan = compiler::lower_stream_k_tail(main plan)):
//     emit_stream_k_helpers(e, plan);          // module scope, once
//     emit_kernel_open(e, plan, plan.name, stream_k_params());
//     …                                        // constants, thread map
//     emit_stream_k_slice(e, plan);            // tile, k_first, k_last, seg_k
//     …                                        // block index, shared arrays, copies, k loop
//     emit_stream_k_fixup(e, plan);            // bool write_c
//     …                                        // if (write_c) store C
//     emit_stream_k_tail_end(e, plan);         // }

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// The parameters a stream_k tail takes after bias (codegen/generated_kernel.h).
std::string stream_k_params();

// Module-level helper: stream_k_slice_begin.
void emit_stream_k_helpers(Emitter& e, const compiler::KernelPlan& plan);

// In the tail, after BM, BN, BK: tiles_m, tiles_n, k_tiles, this block's
// slice, shared_tile, tile, its k-tiles [k_first, k_last) and seg_k, the k
// extent of the slice counted from its first k (gA and gB start there; the
// copies are bounded by seg_k instead of K).
void emit_stream_k_slice(Emitter& e, const compiler::KernelPlan& plan);

// After the k loop: defines `bool write_c`. Every slice publishes rC; the
// last of the tile's slices to arrive replaces rC by the tile's sum and
// writes C.
void emit_stream_k_fixup(Emitter& e, const compiler::KernelPlan& plan);

// In the main entry: on sm_90, `griddepcontrol.launch_dependents` (the tail
// may launch once every block of the main grid has started).
void emit_stream_k_launch_tail(Emitter& e, const compiler::KernelPlan& plan);

// The tail's last lines (on sm_90 it waits for the main grid, so that what
// follows on the stream follows both) and its closing brace.
void emit_stream_k_tail_end(Emitter& e, const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
