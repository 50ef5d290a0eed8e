#pragma once
// Building blocks every generated kernel shares, written as functions of the
// common KernelPlan fields (block_threads, block_m/n/k, swizzle_group, the
// epilogue of the schedule) so that the SIMT and the tensor-core generators
// print them the same way.
//
// A kernel is assembled as:
//   emit_module_header(e, plan);          // once per module: schedule comment
//   emit_epilogue_helpers(e, plan);       // once per module: store_c / store_c4
//   emit_kernel_open(e, plan, name);      // extern "C" __global__ … {
//   emit_tile_constants(e, plan);         // constexpr int BM, BN, BK, THREADS
//   emit_block_index(e, plan);            // const int tile_m0, tile_n0
//   …                                     // the path's own blocks
//   e.close_scope(name);

#include <string>

#include "codegen/emitter.h"
#include "codegen/generated_kernel.h"
#include "compiler/kernel_plan.h"

namespace schedc::codegen {

// "(gemm.sched:3)" for a directive from the source, "(default)" otherwise.
std::string origin_note(const compiler::Schedule& s, const compiler::Origin& at);

// The schedule as directive lines, each with its origin (for comments).
std::string schedule_text(const compiler::Schedule& s);

// C++ spelling of the element type of A and B ("float", "__half",
// "__nv_bfloat16", "signed char"), of C ("int" for s8, else the same) and
// of the accumulators ("int" for s8, else "float").
const char* element_type(compiler::DType t);
const char* c_element_type(compiler::DType t);
// C's type in `p`'s kernel: "signed char" for s8 with `epilogue ... requantize`.
const char* c_element_type(const compiler::KernelPlan& p);
// C's type inside a module's device functions: the operands' typedef T, but
// for s8 its own (int, or signed char when requantized: c_element_type).
const char* c_t(const compiler::KernelPlan& p);
const char* accumulator_type(compiler::DType t);

// File comment (what produced the module, the schedule, the ABI) and the
// includes the element type needs.
void emit_module_header(Emitter& e, const compiler::KernelPlan& plan);

// Device helpers for the epilogue, C = act(alpha*acc + beta*C + bias[n]):
//   store_c(T* c, int n, float acc, float alpha, float beta, const float* bias)
//   store_c4(T* c, int n, float a0..a3, alpha, beta, bias)   (f32 only: one float4)
// `c` points at C[m][n]. beta is a launch argument: C is read only when
// beta != 0 at run time (so a NaN-poisoned C does not leak into the result);
// bias and relu are compiled in when the schedule asks for them. Callers
// predicate m < M, n < N (store_c4: n + 3 < N and 16-byte alignment).
void emit_epilogue_helpers(Emitter& e, const compiler::KernelPlan& plan);

// A convolution module's ConvArgs and ConvTapArg (runtime/conv_args.h is
// the host's copy), with a comment on the offset table of that layout.
// `halo`: the struct also declares the halo geometry after the table
// (runtime/conv_args.h).
void emit_conv_args(Emitter& e, bool nchw32, bool halo = false);
// Row m's window origin in the convolution's input (`origin`: the offset
// of input pixel (h0, w0) of m's image, channel 0) and (h0, w0) packed in
// 16 bits each (`hw0`), given m, M, pq = P·Q and the ConvArgs `conv` in
// scope; a row past M gets origin 0 and (h0, w0) = (-32768, -32768), which
// no tap brings inside (the wgmma producer and the mma ConvWalk).
void emit_conv_row_origin(Emitter& e, bool nchw32, const std::string& origin,
                          const std::string& hw0);
// The quad exchange of the direct stores (wgmma's quads and 16-byte int8
// stores, mma's int8 quads): this lane's pairs x (columns c, c + 1 of one
// 8-column block) and y (the same of the next block) as `V`, then t, the
// pair lane ^ 1 gives: the odd lane's x or the even lane's y (`odd` in
// scope). The even lane then holds x0 x1 t0 t1, the odd one t0 t1 y0 y1:
// four adjacent columns each.
void emit_quad_swap(Emitter& e, const std::string& V, const std::string& x0, const std::string& x1,
                    const std::string& y0, const std::string& y1);
// c_row_nchw32 and c_col_nchw32: where C(m, k) of an NCHW32 convolution's
// output lies (the wgmma and mma epilogues).
void emit_c_offset_nchw32(Emitter& e);

// `epilogue ... scale` (compiler/schedule.h): the per-channel scales'
// parameter (", const float* __restrict__ scale") and argument (", scale"),
// each written right after bias's; empty without `scale`, so every other
// kernel's code is unchanged.
std::string scale_param(const compiler::KernelPlan& plan);
std::string scale_arg(const compiler::KernelPlan& plan);

// Each entry (its kernel, and nothing the other entries need) sits between
// these two: compiled whole, the module holds every entry; with
// -DSCHEDC_ONE_ENTRY -DSCHEDC_ENTRY_<name>, NVRTC sees that entry alone
// (runtime/jit.h: the runtime compiles only the entries a launch needs,
// each cached on its own).
void emit_entry_guard_open(Emitter& e, const std::string& name);
void emit_entry_guard_close(Emitter& e, const std::string& name);

// extern "C" NAME(src, rows, cols, ld, dst, dst_ld): the rows x cols source
// transposed into dst (cols rows of dst_ld, zero past rows), 32 x 8 threads a
// block, a block per 32 x 32 source tile (grid: cols / 32 by dst_ld / 32,
// rounded up): the module's `_transpose` entry, which the runtime runs on an
// operand its kernel reads only k-major (wgmma tf32 and s8, mma s8). The
// caller prints the comment saying why.
void emit_transpose_kernel(Emitter& e, const std::string& name);

// `extern "C" __global__ void __launch_bounds__(THREADS[, MIN_BLOCKS]) name(<ABI>[, extra]) {`
// (extra: the tensor maps of a TMA entry, codegen/generated_kernel.h;
// min_blocks > 0: the minimum blocks per SM, which caps registers at entry;
// attributes: more, after the launch bounds, e.g. __cluster_dims__(2, 1, 1))
// A batched schedule's entries (`batch N`) take kBatchParams after bias and
// begin with emit_batch_offsets.
void emit_kernel_open(Emitter& e, const compiler::KernelPlan& plan, const std::string& name,
                      const std::string& extra_params = "", int min_blocks = 0,
                      const std::string& attributes = "");

// The batch parameters of the ABI (codegen/generated_kernel.h): the strides
// in elements and the number of GEMMs.
inline constexpr const char* kBatchParams =
    "long long batch_stride_a, long long batch_stride_b, long long batch_stride_c, int "
    "batch_count";

// Whether a batched entry walks the tiles of every GEMM in one persistent
// walk, GEMM after GEMM (wgmma `persistent` without a cluster, main entry):
// blocks side by side then work on few GEMMs, whose operands stay in L2.
// Other batched entries compute GEMM blockIdx.z.
bool walks_batch(const compiler::KernelPlan& plan);

// The GEMM a batched entry's TMA copies and stores address, as the last
// argument of the copy and store helpers (", blockIdx.z"; ", gemm" where the
// walk sets it per tile); "" without a batch.
std::string tma_gemm_arg(const compiler::KernelPlan& plan);

// Moves A, B and C (and a stream_k tail's workspace) to GEMM blockIdx.z of
// the batch, so the rest of the kernel computes one GEMM as if alone; in an
// entry that walks the batch, keeps C's first GEMM as C_batch instead (each
// tile's GEMM moves from it).
void emit_batch_offsets(Emitter& e, const compiler::KernelPlan& plan);

// constexpr int BM, BN, BK, THREADS with the directive that set each.
void emit_tile_constants(Emitter& e, const compiler::KernelPlan& plan);

// Defines `const int tile_m0, tile_n0`: the first C row and column of this
// block's tile. Row-major 2-D grid (x along N), or with swizzle_group > 1 the
// grouped rasterization of a 1-D grid (codegen/generated_kernel.h's rule).
// Requires BM and BN in scope; with stream_k's tail, `tile` (the slice's tile in
// 1-D grid order), tiles_m and tiles_n too.
void emit_block_index(Emitter& e, const compiler::KernelPlan& plan);

// `const int tile_m0, tile_n0` of the C tile whose number in the 1-D raster
// order is `index` (row-major, or grouped with swizzle_group > 1). Requires
// BM, BN, tiles_m, tiles_n (and GROUP when grouped) in scope.
void emit_tile_origin(Emitter& e, const compiler::KernelPlan& plan, const std::string& index);

// The launch metadata of an entry made from `plan`.
KernelEntry make_entry(const compiler::KernelPlan& plan, const std::string& name);

// Whether a SIMT kernel's tiles are static shared arrays (else carved from
// dynamic shared memory): CUDA allows 48 KB of static shared memory, and a
// stream_k tail declares a few bytes more (its arrival slot,
// codegen/blocks_stream_k.cpp), so with stream_k the tiles must leave room
// for them. The main entry and its tail decide alike (they share the
// KernelEntry's dynamic shared memory).
bool smem_is_static(const compiler::KernelPlan& plan);

}  // namespace schedc::codegen
