#pragma once
// KernelPlan: every decision of a schedule made concrete, as plain data.
// compiler::lower makes it, codegen prints it, tests walk it on the CPU.
//
// The common block (block_threads … swizzle_group) is filled by both
// lowerings; the SIMT part (naive, tiles, copies, smem, frag, epilogue) by
// compiler/lower_*.cpp; `mma` by the tensor-core lowering.
//
// Every map below is written as a small formula with a C++ method that
// evaluates it. Codegen prints the same formula with the plan's numbers, so
// a unit test that walks the method for every thread proves what the kernel
// computes.

#include <optional>
#include <string>
#include <utility>

#include "compiler/mma_plan.h"
#include "compiler/schedule.h"
#include "compiler/target.h"
#include "compiler/wgmma_plan.h"

namespace schedc::compiler {

enum class KernelKind { naive, tiled, mma, wgmma };

// The C name of a schedule's main entry: "examples/ladder/v3-thread.sched" ->
// "schedc_v3_thread" ("schedc_gemm" without a file name).
std::string kernel_name(const std::string& file);

// Bytes per element (inline here so the plan needs nothing else linked).
inline int elem_bytes(DType t) {
  return t == DType::f32 ? 4 : t == DType::s8 ? 1 : 2;
}
inline const char* dtype_name(DType t) {
  return t == DType::f32 ? "f32" : t == DType::f16 ? "f16" : t == DType::bf16 ? "bf16" : "s8";
}

// Thread -> C elements of the block tile (also the rows/columns a thread
// reads from the shared tiles). The block tile is cut into regions (one per
// warp with `warp WMxWN`, else the whole tile); inside its region a thread
// owns (TM/PM) x (TN/PN) pieces of PM x PN elements, piece (pi, pj) at
// (pi * piece_stride_m, pj * piece_stride_n) from the region's corner, and
// inside each piece stride the thread's own PM x PN block sits at
// (lane_m * PM, lane_n * PN), lanes numbered row-major (lane_n fastest).
struct ThreadMap {
  int tm = 1, tn = 1;              // register tile
  int pm = 1, pn = 1;              // piece
  int region_m = 1, region_n = 1;  // warp tile, or block tile
  int regions_n = 1;               // regions along N
  int lanes_m = 1, lanes_n = 1;    // threads per region along M, N
  bool warp_tiled = false;

  int pieces_m() const { return tm / pm; }
  int pieces_n() const { return tn / pn; }
  int piece_stride_m() const { return region_m / pieces_m(); }
  int piece_stride_n() const { return region_n / pieces_n(); }
  int threads_per_region() const { return lanes_m * lanes_n; }

  // Corner of thread t's first piece, relative to the block tile.
  int base_m(int t) const {
    int region = t / threads_per_region(), lane = t % threads_per_region();
    return (region / regions_n) * region_m + (lane / lanes_n) * pm;
  }
  int base_n(int t) const {
    int region = t / threads_per_region(), lane = t % threads_per_region();
    return (region % regions_n) * region_n + (lane % lanes_n) * pn;
  }
  // Row (col) of register-tile row i (col j) of thread t, in the block tile.
  int row(int t, int i) const { return base_m(t) + (i / pm) * piece_stride_m() + i % pm; }
  int col(int t, int j) const { return base_n(t) + (j / pn) * piece_stride_n() + j % pn; }
};

// Global -> shared copy of one operand's k-step tile. The tile is seen in
// global orientation (A: BM rows x BK cols, B: BK rows x BN cols), cut into
// vectors of `vec` contiguous elements along a row, numbered row-major; in
// iteration i thread t loads vector number i * threads + t, if there is one:
// when the threads do not divide the vectors (fewer vectors than threads, or
// a count that is not a multiple), the last iteration's vectors run out and
// the remaining threads skip it (the kernel's guard `v < vectors()`).
struct TileCopy {
  Operand operand = Operand::A;
  // The tile as global memory holds it: rows x cols with cols contiguous.
  // Row-major operands: A's tile is BM x BK (m, k), B's BK x BN (k, n).
  // `global_transposed` (layout A col / layout B col): A's tile is BK x BM
  // (k, m), B's BN x BK (n, k), and logical() turns (row, col) back into the
  // operand's own (m, k) / (k, n), which shared memory and the maths use.
  bool global_transposed = false;
  int rows = 0, cols = 0;
  int vec = 1;  // elements per global load (1 or the schedule's vector width)
  int threads = 0;
  int iters = 0;     // loads per thread per k-step: ceil(vectors / threads)
  int smem_vec = 1;  // elements per shared store (vec when the vector stays contiguous)
  // The fallback entry: the same map, but a vector global load only when the
  // operand's pointer and leading dimension allow it, decided per operand at
  // run time (a uniform branch); element by element otherwise.
  bool check_align = false;

  // Consecutive threads cover `run` elements of a tile row before moving to
  // the next row; the tile is walked in column strips of `run` (0: whole
  // rows). Shorter runs let a warp's element copies into a transposed layout
  // hit distinct banks.
  int run = 0;

  int vectors() const { return rows * cols / vec; }
  // Some threads skip the last iteration (codegen emits the guard). False
  // before lower_copies has set the copy (threads 0).
  bool uneven() const { return threads > 0 && vectors() % threads != 0; }
  // Thread t has a vector in iteration i.
  bool active(int t, int i) const { return i * threads + t < vectors(); }

  int run_len() const { return run ? run : cols; }
  int vecs_per_row() const { return run_len() / vec; }
  // Rows one pass of all threads covers, and passes per column strip (when
  // threads cover whole runs: threads % vecs_per_row() == 0).
  int rows_per_pass() const { return threads / vecs_per_row(); }
  int passes_per_strip() const { return rows / rows_per_pass(); }
  // Each thread keeps one column and steps down whole rows: whole tile rows
  // (run 0), or column strips that a whole number of passes covers.
  bool row_steps() const {
    if (threads % vecs_per_row()) return false;
    return !run || rows % rows_per_pass() == 0;
  }
  // The operand's logical coordinates, A (m, k) or B (k, n), of the tile
  // element at (row, col) in memory order.
  std::pair<int, int> logical(int row, int col) const {
    return global_transposed ? std::pair<int, int>{col, row} : std::pair<int, int>{row, col};
  }
  // (row, col) of the first element thread t loads in iteration i (when active).
  std::pair<int, int> coord(int t, int i) const {
    int v = i * threads + t;
    int line = v / vecs_per_row();  // run-long line of the tile, strip by strip
    return {line % rows, line / rows * run_len() + (v % vecs_per_row()) * vec};
  }
};

// One operand's tile in shared memory. Logical coordinates are the global
// orientation (A: (m, k), B: (k, n)); `transposed` stores logical (r, c) at
// physical row c, column r. Physical rows hold row_len + pad elements;
// with `swizzle` the column is XOR-swizzled in chunks of `unit` elements:
// chunk' = chunk ^ (row & mask), which stays inside an aligned group of
// mask+1 chunks (mask+1 divides row_len / unit), so no padding is needed.
struct SmemLayout {
  Operand operand = Operand::A;
  bool transposed = false;
  int rows = 0, row_len = 0;  // physical, before padding
  int pad = 0;
  bool swizzle = false;
  int unit = 1, mask = 0;
  int buffers = 1;
  std::string name;  // "sA" / "sB"

  int row_stride() const { return row_len + pad; }
  int buffer_elems() const { return rows * row_stride(); }
  int total_elems() const { return buffers * buffer_elems(); }
  std::pair<int, int> physical(int r, int c) const {
    int pr = transposed ? c : r, pc = transposed ? r : c;
    if (swizzle) pc = (((pc / unit) ^ (pr & mask)) * unit) + pc % unit;
    return {pr, pc};
  }
  // Element offset of logical (r, c) inside one buffer.
  int offset(int r, int c) const {
    auto [pr, pc] = physical(r, c);
    return pr * row_stride() + pc;
  }
};

// How the register fragments are read from shared memory each k: vector
// width of the reads along a piece (1 = scalar).
struct FragLoad {
  int vec_a = 1, vec_b = 1;
};

// Order of the TM x TN FMAs of one k step (rC += rA (x) rB). The result is
// the same; the speed is not: ptxas keeps the order, and its register
// assignment and operand reuse follow it (compiler/lower_copies.cpp).
enum class FmaOrder { rows_outer, cols_outer };
struct OuterProduct {
  FmaOrder order = FmaOrder::rows_outer;
  bool serpentine = false;  // odd outer steps walk the inner loop backwards
};

struct EpiloguePlan {
  bool bias = false;
  bool relu = false;
  int vec = 1;               // elements per C access in the main entry
  bool check_align = false;  // fallback: vector C stores only when C and ldc allow them
  // Main entry with vec > 1: a vec-wide group of C is wholly inside C or
  // wholly outside, because the launch runs this entry only when N is a
  // multiple of vec (KernelEntry::n_multiple); the group straddling C's right
  // edge is the fallback's. Its element-by-element path was a third of what
  // NVRTC compiled of sgemm_best (docs/tuning.md, "Cold compile").
  bool whole_groups = false;
};

// single: load, barrier, compute, barrier. double_buffer: two buffers, the
// next tile staged in registers during the compute. cp_async: `stages` buffers
// filled by cp.async (no staging registers), stages-1 tiles in flight.
enum class Pipeline { single, double_buffer, cp_async };

struct KernelPlan {
  Schedule schedule;  // what produced this plan (for comments and spans)
  Target target;
  DType dtype = DType::f32;
  KernelKind kind = KernelKind::naive;
  std::string name;  // extern "C" name of the main entry

  // Common to every path (the tensor-core lowering fills these too).
  int block_threads = 0;                      // threads per block
  int block_m = 1, block_n = 1, block_k = 1;  // C tile per block, K step
  int smem_bytes = 0;                         // shared memory per block
  int swizzle_group = 1;                      // grouped rasterization
  // `stream_k` (compiler/stream_k.h): the module has a tail entry besides
  // this one. This entry computes whole tiles, one per block of a 1-D grid,
  // as many as the launch's split says; the tail entry (stream_k_tail) the
  // k-tiles of the remaining tiles, shared among its blocks.
  bool stream_k = false;
  bool stream_k_tail = false;
  // The split policy's costs of a slice and of summing one, in k-tiles
  // (compiler/stream_k.h).
  int stream_k_slice_cost = 2, stream_k_sum_cost = 0;
  // `split_k N` (wgmma): the launch's thread-block cluster of at most N CTAs
  // computes one C tile, each CTA an even share of its k-tiles (k_first to
  // k_last); each part's owner (CTA 0 where the sums are pulled) sums and
  // stores it. 1: one CTA a tile.
  int split_k = 1;
  // Whether the k loop runs over a range [k_first, k_last) of the tile's
  // k-tiles (a stream_k tail's slice, a split_k CTA's share) instead of all.
  bool k_sliced() const { return stream_k_tail || split_k > 1; }

  // Naive kernel: threadIdx.x runs along N, threadIdx.y along M.
  int block_x = 1, block_y = 1;

  // Tiled SIMT kernel.
  ThreadMap threads;
  TileCopy copy_a, copy_b;
  SmemLayout smem_a, smem_b;
  FragLoad frag;
  Pipeline pipeline = Pipeline::single;
  int stages = 1;         // shared buffers of the pipeline
  int vec = 1;            // the schedule's vector width (global loads, C stores)
  bool fallback = false;  // the alignment-checked twin of a vectorized plan
  // Fragments of step kk+1 are read from shared memory while step kk's FMAs
  // run (two register slots), and the barrier sits before the last step
  // (double_buffer or stages, with an even BK and a register tile of 128+
  // elements).
  bool frag_double_buffer = false;
  // stages with fragment slots: the step at which the upper half of the warps
  // issues the next tile's copies (the lower half at step 0), so that every
  // scheduler keeps a warp on FMAs while the other issues copies. 0: every warp
  // copies at step 0 (always in a fallback entry).
  int copy_late_step = 0;
  OuterProduct fma;
  EpiloguePlan epilogue;

  std::optional<MmaPlan> mma;      // tensor-core path (wmma, mma.sync)
  std::optional<WgmmaPlan> wgmma;  // Hopper's warpgroup MMA path (kind wgmma)

  bool needs_fallback() const { return kind != KernelKind::naive && vec > 1 && !fallback; }
};

// The fields every tiled tensor-core lowering sets first: the schedule and
// target, dtype, kind, name, block tile and raster group. Requires s.tile.
KernelPlan tiled_plan_header(const Schedule& s, const Target& t, KernelKind kind);

// Checks the plan's invariants; throws dsl::InternalError on a violation.
// For the SIMT kinds it walks every map for every thread (compiler/verify.cpp).
void verify(const KernelPlan& plan);

// The plan as readable text (`schedc emit --dump-plan`, SCHEDC_DUMP_PLAN=1).
std::string dump(const KernelPlan& plan);

}  // namespace schedc::compiler
