#pragma once
// Building blocks of `stream_k` (compiler/stream_k.h): the kernel's extra
// parameters, the loop over the segments of k-tiles a block is given, and
// the fix-up that adds up the partial sums of a tile shared by several
// blocks. The SIMT tiled kernel puts its body (copies, k loop, epilogue)
// inside the segment loop:
//
//   emit_stream_k_helpers(e, plan);      // module scope
//   emit_kernel_open(e, plan, name, stream_k_params());
//   …
//   emit_stream_k_open(e, plan);         // while (it < it_end) { tile, k_first, k_last
//   …                                    // block index, copies, k loop over [k_first, k_last)
//   emit_stream_k_fixup(e, plan);        // bool write_c
//   …                                    // if (write_c) store C
//   emit_stream_k_close(e, plan);        // barrier, }

#include <string>

#include "codegen/emitter.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// The parameters a stream_k entry takes after bias (codegen/generated_kernel.h).
std::string stream_k_params();

// Module-level helpers: stream_k_begin, stream_k_unit_of, stream_k_slot.
void emit_stream_k_helpers(Emitter& e, const compiler::KernelPlan& plan);

// This block's k-tiles and the opening of the loop over its segments; in the
// loop `tile` (1-D grid order), `k_first` and `k_last` (one past) are in
// scope, and tiles_m, tiles_n, k_tiles before it. Requires BM, BN, BK, tid.
void emit_stream_k_open(Emitter& e, const compiler::KernelPlan& plan);

// After the k loop: defines `bool write_c`. A segment that is a whole tile
// writes C; one that is part of a tile publishes rC, and the last of the
// tile's units to arrive replaces rC by the tile's sum and writes C.
void emit_stream_k_fixup(Emitter& e, const compiler::KernelPlan& plan);

// The barrier before the next segment refills shared memory, and the loop's end.
void emit_stream_k_close(Emitter& e, const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
