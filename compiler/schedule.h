#pragma once
// The typed, validated schedule: what compiler::analyze produces from the Ast
// and compiler::lower consumes. Every field that came from the source keeps
// the span of the directive that set it, so later stages can point at it
// (codegen prints "// tile 128x128x8 (gemm.sched:2)").
//
// A Schedule that analyze returned is valid: all divisibility, resource and
// exclusion rules of docs/language.md hold. Fields left unset by the user hold
// their documented defaults, with `from_source == false`.

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/conv.h"
#include "dsl/source.h"

namespace schedc::compiler {

// s8: A and B int8, accumulated exactly in s32, C int32 (issue 21).
enum class DType { f32, f16, bf16, s8 };
enum class Operand { A, B };
// wgmma: Hopper's warpgroup MMA (sm_90a), both operands read from shared memory
// through descriptors (compiler/wgmma_plan.h).
enum class MmaApi { wmma, mma_sync, wgmma };
enum class MmaType { tf32, f16, bf16, s8 };
// How f32 inputs become tf32 on the `mma tf32` path (docs/tensor_cores.md,
// "tf32 rounding"): rounded to nearest, ties away from zero (cvt.rna's rounding,
// the default), or left for the tensor core to truncate (`mma tf32 … truncate`).
enum class Tf32Rounding { nearest, truncate };

const char* to_string(DType);
std::optional<DType> dtype_from_string(const std::string& name);  // to_string's inverse
const char* to_string(MmaType);
const char* to_string(Tf32Rounding);  // "nearest", "truncate"
int size_of(DType);                   // bytes per element of A and B in global memory
int c_size_of(DType);                 // bytes per element of C: 4 for s8 (int32), else size_of
// `split_k N`: at most a portable thread-block cluster's 8 CTAs.
inline constexpr int kMaxSplitK = 8;

struct Schedule;
int c_size_of(const Schedule&);  // the same, 1 for s8 with `epilogue ... requantize` (int8)

// Where a setting came from: the directive's span, or nowhere (a default).
struct Origin {
  dsl::SourceSpan span{};
  bool from_source = false;
};

struct Shape {
  int64_t m = 4096, n = 4096, k = 4096;
};

struct BlockTile {  // `tile BMxBNxBK`
  int m = 0, n = 0, k = 0;
};

struct ThreadTile {  // `thread TMxTN [split PMxPN]`
  int m = 1, n = 1;
  int split_m = 1, split_n = 1;  // pieces; 1x1 = one contiguous piece
};

struct WarpTile {  // `warp WMxWN`: the C sub-tile one warp computes
  int m = 0, n = 0;
};

struct MmaSpec {  // `wmma …` / `mma …` / `wgmma …`
  MmaApi api = MmaApi::wmma;
  MmaType type = MmaType::tf32;
  int m = 16, n = 16, k = 8;  // instruction shape (wgmma: n 0 = the warpgroup tile's WN, up to 256)
  // `mma s8 m8n8k16` (sm_75's int8 shape): (m, n, k) stays m16n8k32, the fragment
  // step, and the kernel computes each step as four m8n8k16 instructions
  bool s8_m8n8k16 = false;
  Tf32Rounding tf32_rounding = Tf32Rounding::nearest;
  Origin tf32_rounding_at;  // the `truncate` word, when written
};

struct Epilogue {  // `epilogue [alpha X] [beta Y] [bias] [scale] [relu] [requantize]`
  float alpha = 1.0f;
  float beta = 0.0f;
  bool bias = false;  // C[m][n] += bias[n]
  bool relu = false;
  // dtype s8: C is int8, not int32. alpha·acc + beta·C + bias[n] is taken
  // in f32 (each product and sum rounded, no fused multiply-add), relu
  // applied, then rounded to the nearest integer (ties to even) and
  // saturated to [-128, 127]: alpha is the per-tensor requantization scale.
  bool requantize = false;
  // With requantize: a per-output-channel scale, N floats (a kernel
  // parameter after bias): column n's scale is alpha·scale[n] (one f32
  // product, alpha 1 by default) in place of alpha.
  bool scale = false;
};

struct Schedule {
  std::string file;  // for comments in generated code

  Shape shape;
  Origin shape_at;
  DType dtype = DType::f32;
  Origin dtype_at;

  // Naive kernel (no `tile`): one thread per C element.
  int block_x = 16, block_y = 16;
  Origin block_at;

  std::optional<BlockTile> tile;
  Origin tile_at;
  ThreadTile thread;
  Origin thread_at;
  std::optional<WarpTile> warp;
  Origin warp_at;
  int vectorize = 1;
  Origin vectorize_at;
  // `layout A col` / `layout B col`: the operand lies column-major in global
  // memory (A: element (m, k) at k·lda + m; B: (k, n) at n·ldb + k, the
  // nn.Linear weight); row-major otherwise. The SIMT and naive paths read
  // either (issue 18); the tensor-core paths read row-major only so far.
  bool a_col = false;
  Origin a_layout_at;
  bool b_col = false;
  Origin b_layout_at;
  // `layout C col`: C column-major, (m, n) at n·ldc + m (the SIMT and naive
  // epilogues store it element by element).
  bool c_col = false;
  Origin c_layout_at;
  // `batch N`: the kernel computes a strided batch of GEMMs, one per z index
  // of its grid (persistent and stream_k kernels walk each GEMM's tiles
  // along x); A, B and C of GEMM b start b strides past their first
  // (codegen/generated_kernel.h). N is the batch `run` and `bench` take by
  // default, as `shape` gives M, N and K; 0 = not batched.
  int64_t batch = 0;
  Origin batch_at;
  bool transpose_a = false;
  Origin transpose_a_at;
  bool transpose_b = false;
  Origin transpose_b_at;
  int pad_a = 0;
  Origin pad_a_at;
  int pad_b = 0;
  Origin pad_b_at;
  bool swizzle_smem = false;
  Origin swizzle_smem_at;
  bool double_buffer = false;
  Origin double_buffer_at;
  int stages = 1;
  Origin stages_at;  // 1 = no cp.async pipeline
  // `tma`: the pipeline's global->shared copies by the Tensor Memory
  // Accelerator (sm_90+; on older targets the copies stay cp.async).
  bool tma = false;
  Origin tma_at;
  int swizzle_block = 1;
  Origin swizzle_block_at;  // 1 = row-major raster
  // `stream_k`: the tiles of the last, partial wave of blocks share their
  // k-tiles among all the device's block slots (compiler/stream_k.h).
  bool stream_k = false;
  Origin stream_k_at;
  // `warp_specialize` (wgmma): one producer warpgroup issues the TMA copies,
  // the others (consumers) only compute; registers move to the consumers
  // with setmaxnreg.
  bool warp_specialize = false;
  Origin warp_specialize_at;
  // `warp_specialize pingpong`: two consumer warpgroups take whole block
  // tiles in turn (warp tile = block tile), so one's epilogue runs while the
  // other's wgmma do; the default (`cooperative`) splits each tile among them.
  bool pingpong = false;
  // `persistent` (wgmma): one block per SM slot walks the C tiles in raster
  // order; its pipeline runs on across tiles, so the next tile's copies
  // overlap this tile's epilogue.
  bool persistent = false;
  Origin persistent_at;
  // `halo` (a convolution on wgmma): the producer copies a tile's input
  // once, as zero-padded phase images by TMA, and each k-tile's A is a
  // window of that copy (compiler/conv_halo.h), where the launch finds the
  // convolution fits (runtime/conv_launch.h); elsewhere A comes as without it.
  bool halo = false;
  Origin halo_at;
  // `halo only`: A's shared memory is the file's convolution's phase images
  // (halo_a_bytes, rounded up to 1 KB) instead of `stages` k-tiles of A, so
  // that more blocks fit an SM; such a kernel has no other way to read A,
  // and a launch whose phase images need more room is refused.
  bool halo_only = false;
  int64_t halo_a_bytes = 0;  // halo_only: A's region (set by the analyzer)
  // `blocks_per_sm N` (warp_specialize): the kernel is compiled for N
  // resident blocks an SM (__launch_bounds__(threads, N)), so each block's
  // register pool, which setmaxnreg divides between its warpgroups, is the
  // SM's 64K registers / N. 1: the whole SM's, one block.
  int blocks_per_sm = 1;
  Origin blocks_per_sm_at;
  // `tma_store` (wgmma): the epilogue stages each C tile in shared memory and
  // stores it with TMA boxes, which run on while the next tile computes.
  bool tma_store = false;
  Origin tma_store_at;
  // `cluster CMxCN` (wgmma, CM·CN = 2): thread-block clusters of two CTAs on
  // neighbouring tiles (2x1: along M, sharing B; 1x2: along N, sharing A);
  // each CTA loads half of the shared operand's stage and multicasts it to
  // both, so the L2 delivers that operand once per cluster.
  int cluster_m = 1, cluster_n = 1;
  Origin cluster_at;
  // `split_k N` (wgmma, N = 2..8): each C tile's k loop is cut into up to N
  // slices, computed by the CTAs of one thread-block cluster (the launch's
  // cluster size: N, or the k-tiles where there are fewer); their partial
  // sums meet in distributed shared memory (each consumer warpgroup's part
  // summed and stored by one CTA, codegen/blocks_wgmma_split_k.cpp).
  // 1: one CTA a tile.
  int split_k = 1;
  Origin split_k_at;
  std::optional<MmaSpec> mma;
  Origin mma_at;
  // `conv NxHxWxC filter KxRxS [stride S] [pad P] [dilation D] [nhwc]`
  // (issue 21, docs/convolution.md): the kernel computes this 2-D
  // convolution as an implicit GEMM (M = N·P·Q, N = K, K = C·R·S): the
  // producer copies A from the input through the offset table, B is the
  // filters (a column-major B, so b_col is set), C the NHWC output. `shape`
  // is then the GEMM's; `run` and `bench` take this convolution by default,
  // as `shape` (`--conv` gives others of the same layout).
  std::optional<Conv2d> conv;
  Origin conv_at;
  Epilogue epilogue;
  Origin epilogue_at;

  bool is_naive() const { return !tile.has_value(); }
  bool uses_tensor_cores() const { return mma.has_value(); }
  bool uses_wgmma() const { return mma && mma->api == MmaApi::wgmma; }
};

// The schedule in canonical .sched form: every directive in a fixed order,
// defaults explicit; a setting with no spelling (no warp tile, no transpose)
// is a comment line. Parsing and analyzing the text gives the same schedule.
std::string to_sched_text(const Schedule&);

}  // namespace schedc::compiler
