#pragma once
// compiler::analyze: Ast -> validated Schedule for a Target, or diagnostics.
// Checks every rule of docs/language.md ("What a schedule can get wrong")
// and reports all violations it finds, each with its place.

#include <optional>

#include "compiler/schedule.h"
#include "compiler/target.h"
#include "dsl/ast.h"
#include "dsl/diagnostics.h"

namespace schedc::compiler {

std::optional<Schedule> analyze(const dsl::Ast& ast, const std::string& file_name,
                                const Target& target, dsl::Diagnostics& diags);

// `--conv`'s text ("8x56x56x64 filter 64x3x3 stride 1 pad 1"), read as the
// `conv` directive's arguments with the same grammar and checks: the
// convolution, or nothing with the errors in `diags`, which must be made on
// `source` = conv_option_source(text) (a source named "--conv" holding
// "conv " + text, so carets point into the option).
dsl::SourceFile conv_option_source(const std::string& text);
std::optional<Conv2d> parse_conv_option(const dsl::SourceFile& source, const Target& target,
                                        dsl::Diagnostics& diags);

// Static resources of a valid schedule (what `schedc check` prints).
struct Resources {
  int threads_per_block = 0;
  int smem_bytes = 0;            // shared memory per block, padding and stages included
  int blocks_per_sm = 0;         // bounded by shared memory and threads; by registers only
                                 // where setmaxnreg fixes them (else ptxas decides: unknown)
  const char* limited_by = "";   // "threads", "shared memory", "registers: setmaxnreg" or
                                 // "blocks per SM"
  int a_tile_bytes = 0;          // one buffer of the A tile, padding included
  int b_tile_bytes = 0;          // one buffer of the B tile
  int buffers = 0;               // 1, 2 (double_buffer) or N (stages N); 0 for the naive kernel
  int a_region_bytes = 0;        // `halo only`: A's shared memory, the file's convolution's phase
                                 // images (instead of buffers x a_tile_bytes); else 0
  int epilogue_bytes = 0;        // wmma: one 16x16 f32 scratch tile per warp (1024 bytes); else 0
  int barrier_bytes = 0;         // `tma`: the pipeline's mbarriers
  int c_stage_bytes = 0;         // C staged in shared memory: for TMA stores, or tf32's
                                 // stores of C rows off 32-byte sectors (WgmmaPlan::sector_rows)
  const char* c_stage_for = "";  // "tma_store", "C rows off 32-byte sectors" or ""
  std::string smem_parts;        // smem_parts_text: smem_bytes's parts
  int split_recv_bytes = 0;      // split_k: the receive area for the others' sums
                                 // (wgmma_split_recv_bytes), 0 where it does not fit
  std::string tma_copies;        // `tma`: how the copies are made on this target, else ""
};
Resources static_resources(const Schedule& s, const Target& t);

// Shared-memory use of a schedule, in 64-bit arithmetic so that analyze can
// measure a schedule before its numbers are known to be in range.
//   elem = size_of(dtype) (tensor cores read f32 as tf32: still 4 bytes)
//   A tile: transpose A ? BK rows x (BM + pad A) : BM rows x (BK + pad A)
//   B tile: transpose B ? BN rows x (BK + pad B) : BK rows x (BN + pad B)
//   buffers = 2 with double_buffer, N with stages N, else 1
//   bytes = buffers x (A + B) x elem
// (`halo only`: A's term is the file's convolution's phase images instead,
// Schedule::halo_a_bytes.)
// With `wmma` the epilogue stores each accumulator fragment through a 16x16
// f32 scratch tile per warp in the same (then idle) shared memory, so
//   bytes = max(buffers x (A + B) x elem, warps x 1024)
// (compiler/lower_mma.cpp sizes the block the same way).
struct SmemUse {
  int64_t a_bytes = 0, b_bytes = 0;  // one buffer each
  int buffers = 0;
  int64_t epilogue_bytes = 0;    // wmma epilogue scratch, else 0
  int64_t barrier_bytes = 0;     // `tma`: two 8-byte mbarriers per stage
  int64_t c_stage_bytes = 0;     // C staged besides the pipeline (Resources::c_stage_bytes)
  int64_t split_recv_bytes = 0;  // split_k's receive area (Resources::split_recv_bytes)
  int64_t a_region_bytes = 0;    // `halo only`: A's shared memory (Schedule::halo_a_bytes)
  const char* c_stage_for = "";  // what C is staged for (Resources::c_stage_for)
  int64_t a_total() const { return a_region_bytes ? a_region_bytes : int64_t(buffers) * a_bytes; }
  int64_t pipeline() const { return a_total() + int64_t(buffers) * b_bytes + barrier_bytes; }
  int64_t total() const {
    return (pipeline() > epilogue_bytes ? pipeline() : epilogue_bytes) + c_stage_bytes +
           split_recv_bytes;
  }
};
SmemUse smem_use(const Schedule& s);
// The parts of a block's shared memory (all but the wmma epilogue's
// scratch), worded once for `check` and the analyzer's error: "4 buffers x
// (A 8192 + B 8192) + 64 mbarrier bytes + ...", with `halo only` "A 34816
// (halo only: the phase images) + 4 buffers x B 16384 + ...".
std::string smem_parts_text(const SmemUse& u);
// `tma`: the mbarriers after the pipeline's buffers, `full` and `empty` per stage.
inline int tma_barrier_bytes(int stages) {
  return 2 * 8 * stages;
}

// Threads per block: block X*Y (naive), (BM/TM)*(BN/TN) (SIMT tile),
// (BM/WM)*(BN/WN)*32 (tensor cores); 0 where a divisor is missing or zero.
int64_t threads_per_block(const Schedule& s);

}  // namespace schedc::compiler
