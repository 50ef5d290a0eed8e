#pragma once
// What codegen hands the runtime: CUDA C++ source plus everything needed to
// launch it. Pure data, no CUDA types, so it can be built and tested on a
// machine without a GPU.
//
// Kernel ABI. Every generated entry point has this exact signature, so the
// runtime launches any of them the same way (T is float, __half or
// __nv_bfloat16 as the schedule's dtype says; bias is always f32; for dtype
// s8, A and B are signed char, C is int and alpha, beta, bias hold integers):
//
//   extern "C" __global__ void NAME(int M, int N, int K,
//                                   const T* A, int lda,   // M x K, row-major
//                                   const T* B, int ldb,   // K x N, row-major
//                                   T* C, int ldc,         // M x N, row-major
//                                   float alpha, float beta,
//                                   const float* bias);    // N entries or null
//
// An entry with TMA copies (`tma` schedules, main entry) takes two more, after
// bias: `const __grid_constant__ TmaMap tma_a, tma_b`, the 128-byte CUDA tensor
// maps of A and B (KernelEntry::tma_a / tma_b say their boxes); the runtime
// encodes them for each launch's pointers and leading dimensions.
//
// A batched module (`batch N`, GeneratedKernel::batched) computes a strided
// batch: each entry takes four more parameters right after bias, before any
// of those below, `long long batch_stride_a, batch_stride_b, batch_stride_c`
// (elements from one GEMM's operand to the next's) and `int batch_count`,
// and launches with gridDim.z = the batch, block z computing GEMM
// blockIdx.z (x and y as for one GEMM; a cluster's persistent grid walks
// that GEMM's tiles). A persistent entry without a cluster instead walks
// every GEMM's tiles in one 1-D walk, GEMM after GEMM (gridDim.z = 1), so
// the blocks side by side share few GEMMs' operands in L2. Its tensor maps
// are 3-D: the matrix's rows and columns, then the batch with the stride as
// pitch; each copy and store names its GEMM with the third coordinate. The
// stream_k workspace holds one split's partials and counters per GEMM.
//
// A `stream_k` module has a tail entry beside each of main and fallback,
// named in KernelEntry::stream_k_tail. The launch's split (compiler/
// stream_k.h) decides: the entry itself runs on a 1-D grid of
// split.whole_tiles blocks (tiles 0 .. whole_tiles-1 in raster order, whole),
// and then the tail on split.units() blocks (one slice of one tile each),
// with five more parameters after bias: `int sk_whole_tiles, int sk_slices,
// int sk_lead_k_tiles` (the split), `float* sk_partials` (split.units() slots
// of tile_m * tile_n floats, one per tail block) and `int* sk_counters` (one
// per tile past sk_whole_tiles, zero at launch; the tail leaves them zero).
// On sm_90 the main entry lets the tail launch as its last blocks start
// (programmatic dependent launch): the two write different tiles.
// A wgmma stream_k module (TMA entries) takes the tensor maps first: the
// main entry `tma_a, tma_b, tma_c, int sk_whole_tiles` after bias (tma_c
// always, read only with tma_store; a persistent main walks tiles 0 ..
// sk_whole_tiles-1), the tail `tma_a, tma_b, tma_c` and then the five above.

// A convolution module (`conv`, GeneratedKernel::conv; docs/convolution.md)
// computes the implicit GEMM of a 2-D convolution: M = N·P·Q output pixels,
// N = K filters, K = C·R·S. Its entries take the GEMM's parameters with
//   A = the input tensor (NHWC: [N][H][W][C]; NCHW32: [N][C/32][H][W][32];
//       lda, passed as zero, is not read; tma_a is zeros, or, for an
//       entry with a_im2col where the launch sets conv.im2col, the input's
//       tensor map in im2col mode: compiler/conv_im2col.h),
//   B = the filters ([K][R][S][C]; NCHW32: [K][C/32][R][S][32]): a
//       column-major B (N x K) with ldb = C·R·S, read by tensor map as for
//       `layout B col`,
//   C = the output: NHWC [N][P][Q][K], a row-major C (M x N) with ldc = K;
//       NCHW32 [N][K/32][P][Q][32], with ldc = P·Q (the pixels of an output
//       plane, from which the epilogue computes an element's offset),
// and one more parameter, last: `const __grid_constant__ ConvArgs conv`, the
// geometry and the offset table (runtime/conv_args.h mirrors it on the host):
//   struct ConvTapArg { int offset; short dh, dw; };   // one filter tap (r, s)
//   struct ConvArgs {
//     int n, h, w, c, p, q, stride_h, stride_w, pad_h, pad_w;
//     int taps;                     // R·S, at most kMaxConvTaps
//     int im2col;                   // 1, 2: A by tma_a, an im2col map, copies a k-tile
//     ConvTapArg tap[kMaxConvTaps]; // compiler::offset_table, r·S + s
//   };
// Offsets are in elements of the input. A column of A is kk = (r·S + s)·C + c
// (NCHW32: ((c/32)·R·S + r·S + s)·32 + c%32);
// a copy of A reads 16-byte chunks of C (so C·sizeof(T) is a multiple of 16
// and the input 16-byte aligned: analysis and the launch check both).

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/problem.h"

namespace schedc::codegen {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// The tensor map of one operand for a TMA entry: a 2-D row-major view of the
// whole matrix (A: M x K, B: K x N, the leading dimension as row pitch), read in
// boxes of box_rows x box_cols elements with the 128-byte swizzle; elements out
// of the matrix read as zero.
struct TmaBox {
  uint32_t box_rows = 0, box_cols = 0;  // 0: no tensor map
};

// One __global__ function of the generated module.
struct KernelEntry {
  std::string name;           // extern "C" symbol
  Dim3 block;                 // threads per block
  uint32_t dynamic_smem = 0;  // bytes of `extern __shared__` memory
  // Rasterization: the grid covers ceil(M/tile_m) x ceil(N/tile_n) C tiles.
  // With swizzle_group > 1 the grid is 1-D and the kernel maps its linear
  // block index to a tile itself (grouped rasterization).
  uint32_t tile_m = 1, tile_n = 1;
  uint32_t swizzle_group = 1;
  // `stream_k`: the grid, the split and the workspace come from the launch
  // (the runtime chooses the split for the device); tile_k is BK, and
  // stream_k_tail the entry that computes the shared k-tiles.
  bool stream_k = false;
  uint32_t tile_k = 1;
  std::string stream_k_tail;
  // The split policy's costs of a slice and of summing one, in k-tiles
  // (compiler/stream_k.h).
  uint32_t stream_k_slice_cost = 2, stream_k_sum_cost = 0;
  // The tail's threads per block and dynamic shared memory: the entry's,
  // except on the Hopper path, whose tail has no pingpong (one consumer
  // warpgroup fewer, and its C staging area).
  Dim3 tail_block;
  uint32_t tail_dynamic_smem = 0;
  // Preconditions of this entry, checked at launch: the pointers of the
  // operands in `aligned` aligned to align_bytes and their leading dimensions
  // multiples of ld_multiple. An entry whose preconditions fail is not
  // launched; the module's fallback is.
  uint32_t align_bytes = 0;
  uint32_t ld_multiple = 1;
  // And N a multiple of n_multiple: a SIMT main entry stores C as float4
  // groups and has no element-by-element path for a group that straddles
  // C's right edge (that path was a third of the control flow NVRTC
  // compiled: docs/tuning.md, "Cold compile"); the fallback has one.
  uint32_t n_multiple = 1;
  // Which of A, B, C the preconditions apply to: the operands this entry
  // accesses with vectors in global memory (an operand copied element by
  // element, like a transposed A under cp.async, needs nothing).
  bool aligned[3] = {true, true, true};

  // "A, B, C", "B, C", …: the operands the preconditions apply to.
  std::string aligned_operands() const;
  TmaBox tma_a, tma_b;  // set: the entry takes the two tensor maps after bias
  // set (wgmma `tma_store`): a third map after them, of C (M x N, ldc), for
  // TMA stores; the runtime encodes it only when C is 16-byte aligned with
  // ldc and N multiples of 16 bytes (the kernel checks the same) and else
  // passes zeros that the kernel does not read.
  TmaBox tma_c;
  // `persistent`: a 1-D grid of at most one block per slot (SMs x blocks per
  // SM, the runtime's occupancy query), each block walking the tiles
  // blockIdx.x, blockIdx.x + gridDim.x, … in raster order.
  bool persistent = false;
  // `cluster CMxCN` (with persistent): the kernel's __cluster_dims__ pairs
  // blocks 2b and 2b + 1; the launch takes an even grid of at most two
  // blocks per super-tile (CM x CN tiles) and per co-resident cluster.
  // `cluster 2x1` with split_k (paired()): the launch's clusters are
  // slices x 2 blocks, blockIdx.y 2p and 2p + 1 (grid() rounds its rows up
  // to even: a row past M computes zeros and stores nothing).
  uint32_t cluster_m = 1, cluster_n = 1;
  // `split_k N`: at most N CTAs a C tile, one thread-block cluster along x
  // (CTA r of the cluster: blockIdx.x % slices); the launch takes
  // slices = min(N, the k-tiles) and a grid slices times wider.
  uint32_t split_k = 1;
  // Batched and persistent: the grid is one 1-D walk over every GEMM's tiles
  // (gridDim.z = 1) rather than a walk per GEMM on grid z (codegen/
  // blocks_common.h, walks_batch, which decides it).
  bool walks_batch = false;
  // The entry waits for the grid ahead of it in the stream (griddepcontrol.wait)
  // before it reads or writes global memory, and lets the next one launch
  // only after that (codegen/blocks_wgmma.h): the runtime may start it
  // early, as a programmatic dependent launch (sm_90; docs/runtime.md). The
  // Hopper main entries.
  bool dependent_launch = false;

  // A convolution entry that reads A by TMA's im2col mode when the launch
  // passes an im2col map as tma_a and sets ConvArgs::im2col (the Hopper
  // NHWC kernel; compiler/conv_im2col.h): pixelsPerColumn tma_a.box_rows,
  // channelsPerPixel tma_a.box_cols.
  bool a_im2col = false;
  // `halo`: a convolution entry that takes the tile's input once, as phase
  // images by TMA, into the first a_halo_bytes of its shared memory (A's
  // stages), when the launch passes that map as tma_a and sets
  // ConvArgs::im2col = 3 with the geometry (compiler/conv_halo.h; the launch
  // then counts M as the halo tiles' rows: runtime/launch.cpp).
  uint32_t a_halo_bytes = 0;
  // And takes it in 64-byte rows where C is 64 bytes a pixel (ConvArgs::im2col
  // = 4): its k-tile one 128-byte panel, two taps' windows a k-tile.
  bool a_halo_64b = false;
  // `halo only`: a_halo_bytes is all of A's shared memory (the file's
  // convolution's phase images), so the entry reads A only as phase images:
  // a launch that cannot take the convolution's input once a tile is refused.
  bool halo_only = false;

  bool uses_tma() const { return tma_a.box_rows > 0; }
  bool paired() const { return cluster_m * cluster_n > 1 && !persistent; }
  // The launch shape of this entry's stream_k tail: this entry with the
  // tail's block and dynamic shared memory.
  KernelEntry tail_launch() const;

  // One block per C tile (a persistent entry: the tile count, which the
  // launch caps at the device's slots): 1-D with swizzle_group > 1 or stream_k (whose
  // launch then takes the split's whole tiles of it, and gives the rest to
  // the tail), else tiles_n x tiles_m (paired: tiles_m rounded up to even).
  Dim3 grid(int64_t m, int64_t n) const;
};

struct GeneratedKernel {
  std::string source;  // the whole .cu text
  // Set when `source` is a person's file (`schedc run --kernel-source`), not
  // schedc's output: errors in it are theirs, not a code generator bug.
  std::string source_file;
  std::string dtype;                // "f32" | "f16" | "bf16" | "s8" (A, B int8; C int32)
  bool tensor_cores = false;        // validation mode: tf32 / f16 / bf16 inputs
  std::string mma_type;             // "tf32" | "f16" | "bf16" | "s8" when tensor_cores
  int min_sm = 70;                  // lowest architecture the source compiles for
  bool needs_cuda_headers = false;  // includes <mma.h> etc.: pass -I<cuda>/include
  // Uses features of one architecture only (wgmma, setmaxnreg): NVRTC compiles
  // for its "a" variant (sm_90 -> sm_90a), which runs on that architecture alone.
  bool arch_specific = false;
  // Each entry sits in its own #if (codegen/blocks_common.h): compiled with
  // -DSCHEDC_ONE_ENTRY -DSCHEDC_ENTRY_<name>, the source holds that entry
  // alone. schedc's own modules; a person's --kernel-source is compiled whole.
  bool entry_guards = false;
  // The operands' layouts in global memory the kernel reads (`layout A col`,
  // `layout B col`; compiler/problem.h): the runtime launches and validates
  // every problem in them.
  bool a_col = false, b_col = false, c_col = false;
  // `batch N`: the entries take the batch strides and walk the batch along
  // grid z (the ABI above); the runtime launches every problem, a batch of
  // one included, that way.
  bool batched = false;
  // C's element type where it is not the dtype's usual one (f32, f16, bf16
  // as A and B; int32 for s8): "s8" for `epilogue ... requantize` (int8 C).
  std::string c_dtype;
  // `epilogue ... scale` (with requantize): every entry but the repack and
  // transpose ones takes `const float* scale` (N per-channel scales) right
  // after bias, before everything the ABI above puts after bias.
  bool channel_scale = false;
  // "" for a GEMM; "nhwc" or "nchw32" for a convolution module (the ABI
  // above): the layout of its input, filters and output.
  std::string conv;
  // Those layouts as letters, A's, B's, C's: N row-major, T column-major
  // ("NNN", "NTN" for `layout B col`); the library's and the tuning key's.
  std::string layout() const;
  // `p` in these layouts (its leading dimensions are then read in them).
  compiler::Problem in_layouts(compiler::Problem p) const {
    p.a_col = a_col, p.b_col = b_col, p.c_col = c_col;
    return p;
  }
  KernelEntry main;  // the schedule's kernel
  // A correct kernel with no alignment preconditions (vector width 1), used
  // when main's preconditions fail at launch. Empty name = main has none.
  KernelEntry fallback;

  // The repack entry of a wgmma module (codegen/emit_wgmma.cpp): when main's
  // preconditions fail for A or B, the runtime copies that operand into an
  // aligned scratch matrix with it and runs main on the copy. Empty = none.
  // Signature: (const T* src, int rows, int cols, int ld, T* dst, int dst_ld),
  // 256 threads, one block per 256 16-byte chunks of dst.
  std::string repack;
  // The transpose entry of a module whose kernel reads an operand k-major
  // that does not lie so (wgmma: compiler/wgmma_plan.h, wgmma_form; mma s8:
  // MmaPlan::a_transposed): the runtime always runs it first, on A with
  // transposes_a (tf32 with A column-major and B row-major, s8 with A
  // column-major: K rows of M in memory into M rows of K) and on B with
  // transposes_b (s8 with B row-major: K rows of N into N rows of K), each
  // copy's rows a 16-byte multiple apart, and main (or, mma, the fallback
  // where the other operands' alignment fails) reads the copies. Same
  // signature as repack (src, rows, cols, ld: the source as stored), blocks
  // of 32 x 8 threads, one per 32 x 32 tile of the source. Empty = none.
  std::string transpose;
  bool transposes_a = false, transposes_b = false;

  // Every entry's name: main, its stream_k tail, fallback, its tail, repack
  // (those the module has).
  std::vector<std::string> entry_names() const;

  bool has_fallback() const { return !fallback.name.empty(); }
  bool has_repack() const { return !repack.empty(); }
  bool has_transpose() const { return !transpose.empty(); }
};

}  // namespace schedc::codegen
