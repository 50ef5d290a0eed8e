#include "codegen/blocks_common.h"

#include <sstream>

#include "compiler/conv.h"
#include "compiler/lower.h"

namespace schedc::codegen {

using compiler::DType;
using compiler::KernelPlan;
using compiler::Origin;
using compiler::Schedule;

namespace {

std::string basename(const std::string& path) {
  return path.substr(path.find_last_of('/') + 1);
}

// Shortest decimal that reads back as the same float.
std::string float_text(float v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

}  // namespace

std::string origin_note(const Schedule& s, const Origin& at) {
  if (!at.from_source || !at.span.valid()) return "(default)";
  return "(" + basename(s.file) + ":" + std::to_string(at.span.line) + ")";
}

const char* element_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f16: return "__half";
    case DType::bf16: return "__nv_bfloat16";
    case DType::s8: return "signed char";
  }
  return "float";
}

const char* c_element_type(DType t) {
  return t == DType::s8 ? "int" : element_type(t);
}

const char* c_element_type(const KernelPlan& p) {
  return p.schedule.epilogue.requantize ? "signed char" : c_element_type(p.dtype);
}

const char* c_t(const KernelPlan& p) {
  return p.dtype == DType::s8 ? c_element_type(p) : "T";
}

const char* accumulator_type(DType t) {
  return t == DType::s8 ? "int" : "float";
}

std::string schedule_text(const Schedule& s) {
  std::ostringstream o;
  auto put = [&](const std::string& text, const Origin& at) {
    std::string line = "  " + text;
    if (line.size() < 30) line.resize(30, ' ');
    o << line << " " << origin_note(s, at) << "\n";
  };
  auto x = [](auto a, auto b) { return std::to_string(a) + "x" + std::to_string(b); };
  put(std::string("dtype ") + compiler::dtype_name(s.dtype), s.dtype_at);
  if (s.a_col) put("layout A col", s.a_layout_at);
  if (s.b_col) put("layout B col", s.b_layout_at);
  if (s.c_col) put("layout C col", s.c_layout_at);
  if (s.batch > 0) put("batch " + std::to_string(s.batch), s.batch_at);
  if (s.is_naive()) {
    put("block " + x(s.block_x, s.block_y), s.block_at);
  } else {
    put("tile " + x(s.tile->m, s.tile->n) + "x" + std::to_string(s.tile->k), s.tile_at);
    if (!s.uses_tensor_cores() || s.thread_at.from_source) {
      std::string t = "thread " + x(s.thread.m, s.thread.n);
      if (s.thread.split_m * s.thread.split_n > 1)
        t += " split " + x(s.thread.split_m, s.thread.split_n);
      put(t, s.thread_at);
    }
  }
  if (s.warp) put("warp " + x(s.warp->m, s.warp->n), s.warp_at);
  if (s.vectorize > 1) put("vectorize " + std::to_string(s.vectorize), s.vectorize_at);
  if (s.transpose_a) put("transpose A", s.transpose_a_at);
  if (s.transpose_b) put("transpose B", s.transpose_b_at);
  if (s.pad_a) put("pad A " + std::to_string(s.pad_a), s.pad_a_at);
  if (s.pad_b) put("pad B " + std::to_string(s.pad_b), s.pad_b_at);
  if (s.swizzle_smem) put("swizzle smem", s.swizzle_smem_at);
  if (s.double_buffer) put("double_buffer", s.double_buffer_at);
  if (s.stages > 1) put("stages " + std::to_string(s.stages), s.stages_at);
  if (s.tma) put("tma", s.tma_at);
  if (s.swizzle_block > 1)
    put("swizzle block " + std::to_string(s.swizzle_block), s.swizzle_block_at);
  if (s.stream_k) put("stream_k", s.stream_k_at);
  if (s.mma) {
    const char* api = s.mma->api == compiler::MmaApi::wmma    ? "wmma "
                      : s.mma->api == compiler::MmaApi::wgmma ? "wgmma "
                                                              : "mma ";
    const bool truncate = s.mma->tf32_rounding == compiler::Tf32Rounding::truncate;
    const std::string shape = s.mma->api == compiler::MmaApi::wgmma
                                  ? "m" + std::to_string(s.mma->m) + "n" +
                                        std::to_string(s.mma->n) + "k" + std::to_string(s.mma->k)
                                  : x(s.mma->m, s.mma->n) + "x" + std::to_string(s.mma->k) +
                                        (s.mma->s8_m8n8k16 ? " (four m8n8k16 a step)" : "");
    put(std::string(api) + compiler::to_string(s.mma->type) + " " + shape +
            (truncate ? " truncate" : ""),
        s.mma_at);
  }
  if (s.warp_specialize) put("warp_specialize", s.warp_specialize_at);
  if (s.persistent) put("persistent", s.persistent_at);
  if (s.blocks_per_sm > 1)
    put("blocks_per_sm " + std::to_string(s.blocks_per_sm), s.blocks_per_sm_at);
  if (s.tma_store) put("tma_store", s.tma_store_at);
  if (s.split_k > 1) put("split_k " + std::to_string(s.split_k), s.split_k_at);
  const compiler::Epilogue& ep = s.epilogue;
  if (s.epilogue_at.from_source) {
    std::string t = "epilogue alpha " + float_text(ep.alpha) + " beta " + float_text(ep.beta);
    if (ep.bias) t += " bias";
    if (ep.scale) t += " scale";
    if (ep.relu) t += " relu";
    if (ep.requantize) t += " requantize";
    put(t, s.epilogue_at);
  }
  return o.str();
}

void emit_module_header(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  e.comment("Generated by schedc from " + basename(s.file) + " for " + p.target.arch_name() +
            ". Do not edit: change the schedule.");
  e.comment("Schedule:");
  e.lines(std::string("//") + [&] {
    std::string t = schedule_text(s), out;
    for (char c : t) {
      out += c;
      if (c == '\n') out += "//";
    }
    return out.substr(0, out.size() - 2);
  }());
  e.comment("Kernel ABI (codegen/generated_kernel.h): (M, N, K, A, lda, B, ldb, C, ldc,");
  if (s.a_col || s.b_col || s.c_col)
    e.comment(format("alpha, beta, bias); A %s, B %s, C %s; C = act(alpha*A*B + beta*C + bias[n]).",
                     s.a_col ? "column-major (K x M)" : "row-major",
                     s.b_col ? "column-major (N x K)" : "row-major",
                     s.c_col ? "column-major (N x M)" : "row-major"));
  else
    e.comment("alpha, beta, bias); A, B, C row-major; C = act(alpha*A*B + beta*C + bias[n]).");
  if (s.epilogue.scale)
    e.comment(
        "Per-channel scales (`epilogue ... scale`): right after bias, const float* scale (N "
        "floats).");
  if (s.batch > 0)
    e.comment(
        "Batched: after bias the batch strides (elements); GEMM blockIdx.z of the batch per "
        "block.");
  e.comment("Each entry compiles alone with -DSCHEDC_ONE_ENTRY -DSCHEDC_ENTRY_<its name>.");
  if (p.dtype == DType::f16) e.line("#include <cuda_fp16.h>");
  if (p.dtype == DType::bf16) e.line("#include <cuda_bf16.h>");
  e.line();
}

namespace {

// "alpha*acc + beta*C + bias[n]" with relu around it: what the epilogue
// computes, for the emitted comments.
std::string epilogue_formula(const Schedule& s) {
  std::string what = s.epilogue.scale ? "(alpha*scale[n])*acc + beta*C" : "alpha*acc + beta*C";
  if (s.epilogue.bias) what += " + bias[n]";
  if (s.epilogue.relu) what = "max(" + what + ", 0)";
  return what;
}

// store_c: one C element of type `c_type` through epilogue_value from an
// accumulator of type `acc_type`, the value converted by `convert` ("", a
// cast such as "(signed char)", or a type such as "__half" to construct).
void emit_store_c(Emitter& e, const KernelPlan& p, const std::string& c_type,
                  const std::string& acc_type, const std::string& convert) {
  e.open_scope("__device__ __forceinline__ void store_c(" + c_type + "* c, int n, " + acc_type +
               " acc, float alpha, float beta, const float* __restrict__ bias" + scale_param(p) +
               ")");
  const std::string value = "epilogue_value(acc, c, n, alpha, beta, bias" + scale_arg(p) + ")";
  const bool construct = !convert.empty() && convert.front() != '(';
  e.line("*c = " + (construct ? convert + "(" + value + ")" : convert + value) + ";");
  e.close_scope();
}

// s8: the accumulator is the exact s32 sum; alpha, beta and the bias are
// integers (analysis and the runtime check it), and the sum wraps as s32
// does (unsigned arithmetic: signed overflow is undefined in C++).
void emit_integer_epilogue_helpers(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  const bool bias = s.epilogue.bias, relu = s.epilogue.relu;
  const std::string what = epilogue_formula(s);
  e.comment("Epilogue " + origin_note(s, s.epilogue_at) + ": C = " + what +
            ", in s32 (wrapping); alpha, beta");
  e.comment("and bias hold integers. beta == 0 at run time: C is not read.");
  e.open_scope(
      "__device__ __forceinline__ int epilogue_value(int acc, const int* c, int n, float alpha, "
      "float beta, const float* __restrict__ bias)");
  e.line("unsigned v = unsigned(int(alpha)) * unsigned(acc);");
  e.line("if (beta != 0.0f) v += unsigned(int(beta)) * unsigned(*c);");
  if (bias) e.line("v += unsigned(__float2int_rn(bias[n]));  // bias");
  if (relu) e.line("return max(int(v), 0);  // relu");
  if (!relu) e.line("return int(v);");
  e.close_scope();
  e.line();
  emit_store_c(e, p, "int", "int", "");
  e.line();
}

// `epilogue ... requantize` (dtype s8, compiler/schedule.h): the int32 sum
// to an int8 C through f32, every step rounded as written (__fmul_rn and
// __fadd_rn are never fused into an FMA), so the host's reference repeats
// it bit for bit.
void emit_requantize_epilogue_helpers(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  const bool bias = s.epilogue.bias, relu = s.epilogue.relu;
  const std::string what = epilogue_formula(s);
  e.comment("Epilogue " + origin_note(s, s.epilogue_at) + ": C = saturate(rint(" + what +
            ")) to int8, in f32,");
  e.comment("each product and sum rounded (no FMA). beta == 0 at run time: C is not read.");
  e.open_scope(
      "__device__ __forceinline__ int epilogue_value(int acc, const signed char* c, int n, float "
      "alpha, float beta, const float* __restrict__ bias" +
      scale_param(p) + ")");
  if (s.epilogue.scale)
    e.line("float v = __fmul_rn(__fmul_rn(alpha, scale[n]), __int2float_rn(acc));  // scale");
  else
    e.line("float v = __fmul_rn(alpha, __int2float_rn(acc));");
  e.line("if (beta != 0.0f) v = __fadd_rn(v, __fmul_rn(beta, float(*c)));");
  if (bias) e.line("v = __fadd_rn(v, bias[n]);  // bias");
  if (relu) e.line("v = fmaxf(v, 0.0f);  // relu");
  e.line("return __float2int_rn(fminf(fmaxf(v, -128.0f), 127.0f));  // saturate, ties to even");
  e.close_scope();
  e.line();
  emit_store_c(e, p, "signed char", "int", "(signed char)");
  e.line();
}

}  // namespace

void emit_epilogue_helpers(Emitter& e, const KernelPlan& p) {
  if (p.dtype == DType::s8 && p.schedule.epilogue.requantize)
    return emit_requantize_epilogue_helpers(e, p);
  if (p.dtype == DType::s8) return emit_integer_epilogue_helpers(e, p);
  const Schedule& s = p.schedule;
  const bool bias = s.epilogue.bias, relu = s.epilogue.relu;
  const std::string T = element_type(p.dtype);
  const std::string what = epilogue_formula(s);
  e.comment("Epilogue " + origin_note(s, s.epilogue_at) + ": C = " + what + ".");
  e.comment("beta == 0 at run time: C is not read (it may hold anything, NaN included).");
  e.open_scope("__device__ __forceinline__ float epilogue_value(float acc, const " + T +
               "* c, int n, float alpha, float beta, const float* __restrict__ bias)");
  e.line("float v = alpha * acc;");
  e.line("if (beta != 0.0f) v += beta * float(*c);");
  if (bias) e.line("v += bias[n];  // bias");
  if (relu) e.line("v = fmaxf(v, 0.0f);  // relu");
  e.line("return v;");
  e.close_scope();
  e.line();
  emit_store_c(e, p, T, "float", T);
  if (p.dtype != DType::f32) {
    e.line();
    return;
  }
  e.line();
  e.comment("Four consecutive C elements as one float4 (c 16-byte aligned).");
  e.open_scope(
      "__device__ __forceinline__ void store_c4(float* c, int n, float a0, float a1, float a2, "
      "float a3, float alpha, float beta, const float* __restrict__ bias)");
  e.line("float4 v = make_float4(alpha * a0, alpha * a1, alpha * a2, alpha * a3);");
  e.open_scope("if (beta != 0.0f)");
  e.line("const float4 old = *reinterpret_cast<const float4*>(c);");
  e.line("v.x += beta * old.x; v.y += beta * old.y; v.z += beta * old.z; v.w += beta * old.w;");
  e.close_scope();
  if (bias) e.line("v.x += bias[n]; v.y += bias[n + 1]; v.z += bias[n + 2]; v.w += bias[n + 3];");
  if (relu)
    e.line(
        "v.x = fmaxf(v.x, 0.0f); v.y = fmaxf(v.y, 0.0f); v.z = fmaxf(v.z, 0.0f); "
        "v.w = fmaxf(v.w, 0.0f);");
  e.line("*reinterpret_cast<float4*>(c) = v;");
  e.close_scope();
  e.line();
}

void emit_conv_args(Emitter& e, bool nchw32, bool halo) {
  e.comment("conv: the geometry and the offset table (runtime/conv_args.h is the host's copy):");
  e.comment(nchw32 ? "tap[r * S + s] = {dh * W * 32 + dw * 32, dh, dw} for (dh, dw) = (r * dil_h, "
                     "s * dil_w)"
                   : "tap[r * S + s] = {dh * W * C + dw * C, dh, dw} for (dh, dw) = (r * dil_h, "
                     "s * dil_w)");
  e.lines(
      format(R"(struct ConvTapArg {
  int offset;
  short dh, dw;
};
struct ConvArgs {
  int n, h, w, c, p, q, stride_h, stride_w, pad_h, pad_w;
  int taps;  // R * S
  int im2col;  // 1, 2: A by tma_a in im2col mode, copies a k-tile (the Hopper kernel)%s
  ConvTapArg tap[%lld];%s
};)",
             halo ? "; 3: the tile's\n  // input once, as phase images (halo; 4: in 64-byte "
                    "rows, two taps a k-tile);\n  // tap[t].offset is then tap t's window, in bytes"
                  : "",
             static_cast<long long>(compiler::kMaxConvTaps),
             halo ? R"(
  // halo (compiler/conv_halo.h's HaloGeometry): a tile's G images or band of output rows
  int halo_pitch, halo_block, halo_images, halo_out_rows, halo_bands;
  int halo_row_min, halo_col_min;  // the phase images' first row and column (a_min)
  int halo_region_bytes;  // a panel's phase images and the windows' reach
  int halo_bytes;  // a panel's phase images: what its copies land
  int halo_phases;
  short halo_phase_h[4], halo_phase_w[4];  // each phase's first input row and column (e))"
                  : ""));
}

// C(m, k) of an NCHW32 convolution, [N][K/32][P][Q][32], with row m =
// img·P·Q + pixel and column k, is at c_row(m) + c_col(k): the row's part
// img·K·P·Q + pixel·32 (one division, once per row of a thread: c_rows)
// and the column's (k / 32)·P·Q·32 + k % 32. Every term but k % 32 is a
// multiple of 32 (K is), so pairs and quads of columns stay contiguous and
// aligned. In int: the output has fewer than 2^31 elements
// (compiler::conv_error); with size_t terms NVCC split the int2 and int4
// stores into 4-byte ones, and a division per store cost the epilogue as
// much as the main loop (both seen with ncu on an H100).
void emit_c_offset_nchw32(Emitter& e) {
  e.comment(
      "NCHW32 output [N][K/32][P][Q][32]: C(row, col) at c_row_nchw32(row) + c_col_nchw32(col),");
  e.comment(
      "row = img * P * Q + pixel, pq = P * Q (the entry's ldc for this module), K = N; a row");
  e.comment("past M is taken as the last (its stores are skipped)");
  e.open_scope("__device__ __forceinline__ int c_row_nchw32(int pq, int K, int M, int row)");
  e.line("const int m = row < M ? row : M - 1, img = m / pq;");
  e.line("return img * K * pq + (m - img * pq) * 32;");
  e.close_scope();
  e.open_scope("__device__ __forceinline__ int c_col_nchw32(int pq, int col)");
  e.line("return (col & ~31) * pq + (col & 31);");
  e.close_scope();
  e.line();
}

void emit_conv_row_origin(Emitter& e, bool nchw32, const std::string& origin,
                          const std::string& hw0) {
  e.open_scope("if (m < M)");
  e.line("const int img = m / pq, pix = m - img * pq, oh = pix / conv.q, ow = pix - oh * conv.q;");
  e.line("const int h0 = oh * conv.stride_h - conv.pad_h, w0 = ow * conv.stride_w - conv.pad_w;");
  e.line(origin + (nchw32 ? " = ((img * (conv.c >> 5) * conv.h + h0) * conv.w + w0) * 32;"
                          : " = ((img * conv.h + h0) * conv.w + w0) * conv.c;"));
  e.line(hw0 + " = (int)(((unsigned)h0 << 16) | ((unsigned)w0 & 0xFFFFu));");
  e.close_scope();
  e.open_scope("else");
  e.line(origin + " = 0;");
  e.line(hw0 + " = (int)0x80008000u;");
  e.close_scope();
}

void emit_quad_swap(Emitter& e, const std::string& V, const std::string& x0, const std::string& x1,
                    const std::string& y0, const std::string& y1) {
  e.line("const " + V + " x0 = " + x0 + ", x1 = " + x1 + ";");
  e.line("const " + V + " y0 = " + y0 + ", y1 = " + y1 + ";");
  e.line("const " + V + " t0 = __shfl_xor_sync(0xffffffffu, odd ? x0 : y0, 1);");
  e.line("const " + V + " t1 = __shfl_xor_sync(0xffffffffu, odd ? x1 : y1, 1);");
}

std::string scale_param(const KernelPlan& p) {
  return p.schedule.epilogue.scale ? ", const float* __restrict__ scale" : "";
}

std::string scale_arg(const KernelPlan& p) {
  return p.schedule.epilogue.scale ? ", scale" : "";
}

void emit_entry_guard_open(Emitter& e, const std::string& name) {
  e.line("#if !defined(SCHEDC_ONE_ENTRY) || defined(SCHEDC_ENTRY_" + name + ")");
}

void emit_entry_guard_close(Emitter& e, const std::string& name) {
  e.line("#endif  // " + name);
}

void emit_kernel_open(Emitter& e, const KernelPlan& p, const std::string& name,
                      const std::string& extra_params, int min_blocks,
                      const std::string& attributes) {
  const std::string T = element_type(p.dtype), TC = c_element_type(p);
  e.line("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(p.block_threads) +
         (min_blocks > 0 ? ", " + std::to_string(min_blocks) : "") + ")" +
         (attributes.empty() ? "" : " " + attributes));
  e.open_scope(name + "(int M, int N, int K, const " + T + "* __restrict__ A, int lda, const " + T +
               "* __restrict__ B, int ldb, " + TC +
               "* __restrict__ C, int ldc, float alpha, float beta, const float* __restrict__ "
               "bias" +
               scale_param(p) + (p.schedule.batch > 0 ? ", " + std::string(kBatchParams) : "") +
               (extra_params.empty() ? "" : ", " + extra_params) + ")");
  if (p.schedule.batch > 0) emit_batch_offsets(e, p);
}

bool walks_batch(const KernelPlan& p) {
  return p.schedule.batch > 0 && p.wgmma && p.wgmma->persistent && p.wgmma->cluster_size() == 1 &&
         !p.stream_k_tail;
}

std::string tma_gemm_arg(const KernelPlan& p) {
  if (p.schedule.batch == 0) return "";
  return walks_batch(p) ? ", gemm" : ", blockIdx.z";
}

void emit_batch_offsets(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  if (walks_batch(p)) {
    e.comment(format("batch %lld %s: this persistent block walks the tiles of all batch_count",
                     static_cast<long long>(s.batch), origin_note(s, s.batch_at).c_str()));
    e.comment("GEMMs, GEMM after GEMM; each tile's GEMM (`gemm`) is its TMA coordinate z, and its");
    e.comment("C lies gemm strides past the first GEMM's");
    e.line(std::string(c_element_type(p)) + "* const C_batch = C;");
    return;
  }
  e.comment(format("batch %lld %s: this block computes GEMM blockIdx.z of the batch, whose A, B",
                   static_cast<long long>(s.batch), origin_note(s, s.batch_at).c_str()));
  e.comment("and C lie blockIdx.z strides past the first GEMM's");
  e.line("A += (long long)blockIdx.z * batch_stride_a;");
  e.line("B += (long long)blockIdx.z * batch_stride_b;");
  e.line("C += (long long)blockIdx.z * batch_stride_c;");
  if (p.stream_k_tail) {
    e.comment("and its slices' partial sums and arrival counters are its own: gridDim.x of each");
    e.line(format("sk_partials += (size_t)blockIdx.z * gridDim.x * %d;", p.block_m * p.block_n));
    e.line("sk_counters += (size_t)blockIdx.z * gridDim.x;");
  }
}

void emit_tile_constants(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  if (s.is_naive()) {
    e.line(format("constexpr int BM = %d, BN = %d;  // block %dx%d %s: one thread per C element",
                  p.block_m, p.block_n, s.block_x, s.block_y, origin_note(s, s.block_at).c_str()));
  } else {
    e.line(format("constexpr int BM = %d, BN = %d, BK = %d;  // tile %dx%dx%d %s", p.block_m,
                  p.block_n, p.block_k, p.block_m, p.block_n, p.block_k,
                  origin_note(s, s.tile_at).c_str()));
  }
  e.line(format("constexpr int THREADS = %d;", p.block_threads));
}

void emit_block_index(Emitter& e, const KernelPlan& p) {
  const Schedule& s = p.schedule;
  // stream_k: a 1-D grid (the launch's split sets how many tiles the main
  // entry computes); the tail entry's tile is its slice's (`tile`), with
  // tiles_m and tiles_n in scope already.
  // split_k: the cluster's CTAs share a tile (split_tile: emit_wgmma_split_k_slice).
  const std::string index = p.stream_k_tail ? "tile" : p.split_k > 1 ? "split_tile" : "blockIdx.x";
  const bool tiles_known = p.stream_k_tail;
  if (p.swizzle_group <= 1) {
    if (p.stream_k) {
      e.comment("Tile -> C tile: row-major, tiles numbered along N (a 1-D grid for stream_k).");
      if (!tiles_known) e.line("const int tiles_n = (N + BN - 1) / BN;");
      emit_tile_origin(e, p, index);
      return;
    }
    e.comment("Block -> C tile: row-major grid, blockIdx.x along N.");
    e.line("const int tile_m0 = blockIdx.y * BM;");
    e.line("const int tile_n0 = " + index + " * BN;");
    return;
  }
  e.comment(format("swizzle block %d %s: 1-D grid walked in groups of GROUP tile-rows,",
                   p.swizzle_group, origin_note(s, s.swizzle_block_at).c_str()));
  e.comment("column by column inside a group, so blocks that run together share A and B in L2.");
  e.line(format("constexpr int GROUP = %d;", p.swizzle_group));
  if (!tiles_known) e.line("const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;");
  emit_tile_origin(e, p, index);
}

void emit_tile_origin(Emitter& e, const KernelPlan& p, const std::string& index) {
  if (p.swizzle_group <= 1) {
    e.line("const int tile_m0 = " + index + " / tiles_n * BM;");
    e.line("const int tile_n0 = " + index + " % tiles_n * BN;");
    return;
  }
  e.line("const int group = " + index + " / (GROUP * tiles_n);");
  e.line("const int group_m0 = group * GROUP;");
  e.line("const int group_rows = min(tiles_m - group_m0, GROUP);");
  e.line("const int in_group = " + index + " % (GROUP * tiles_n);");
  e.line("const int tile_m0 = (group_m0 + in_group % group_rows) * BM;");
  e.line("const int tile_n0 = (in_group / group_rows) * BN;");
}

bool smem_is_static(const KernelPlan& p) {
  constexpr int kStaticLimit = 48 * 1024, kStreamKStatic = 16;  // sk_arrival, aligned
  return p.smem_bytes + (p.stream_k || p.stream_k_tail ? kStreamKStatic : 0) <= kStaticLimit;
}

KernelEntry make_entry(const KernelPlan& p, const std::string& name) {
  KernelEntry k;
  k.name = name;
  if (p.kind == compiler::KernelKind::naive) {
    k.block = Dim3{uint32_t(p.block_x), uint32_t(p.block_y), 1};
  } else {
    k.block = Dim3{uint32_t(p.block_threads), 1, 1};
  }
  k.dynamic_smem = smem_is_static(p) ? 0 : uint32_t(p.smem_bytes);
  k.tile_m = uint32_t(p.block_m);
  k.tile_n = uint32_t(p.block_n);
  k.swizzle_group = uint32_t(p.swizzle_group);
  k.stream_k = p.stream_k;
  k.tile_k = uint32_t(p.block_k);
  if (p.stream_k) {
    k.stream_k_tail = compiler::stream_k_tail_name(p.name);
    k.tail_block = k.block;
    k.tail_dynamic_smem = k.dynamic_smem;
    k.stream_k_slice_cost = uint32_t(p.stream_k_slice_cost);
    k.stream_k_sum_cost = uint32_t(p.stream_k_sum_cost);
  }
  if (p.vec > 1 && !p.fallback) {  // the fallback checks alignment itself
    k.align_bytes = uint32_t(p.vec * compiler::elem_bytes(p.dtype));
    k.ld_multiple = uint32_t(p.vec);
    if (p.kind != compiler::KernelKind::naive && !p.mma && !p.wgmma) {
      k.aligned[0] = p.copy_a.vec > 1;
      k.aligned[1] = p.copy_b.vec > 1;
      k.aligned[2] = p.epilogue.vec > 1;
      if (p.epilogue.whole_groups) k.n_multiple = uint32_t(p.epilogue.vec);
    }
  }
  return k;
}

void emit_transpose_kernel(Emitter& e, const std::string& name) {
  e.comment("A block moves one 32 x 32 tile of the source through shared memory, both sides");
  e.comment("coalesced; 32 x 8 threads, four rows each.");
  e.line("extern \"C\" __global__ void __launch_bounds__(256)");
  e.open_scope(name +
               "(const T* __restrict__ src, int rows, int cols, int ld, T* __restrict__ dst, "
               "int dst_ld)");
  e.line("__shared__ T tile[32][33];  // +1: the column reads hit 32 banks");
  e.line("const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;  // source column (m), row (k)");
  e.line("#pragma unroll");
  e.open_scope("for (int j = 0; j < 32; j += 8)");
  e.line("const int r = r0 + threadIdx.y + j, c = c0 + threadIdx.x;");
  e.line(
      "tile[threadIdx.y + j][threadIdx.x] = r < rows && c < cols ? src[(size_t)r * ld + c] : "
      "T(0);");
  e.close_scope();
  e.line("__syncthreads();");
  e.line("#pragma unroll");
  e.open_scope("for (int j = 0; j < 32; j += 8)");
  e.line("const int m = c0 + threadIdx.y + j, k = r0 + threadIdx.x;");
  e.line(
      "if (m < cols && k < dst_ld) dst[(size_t)m * dst_ld + k] = tile[threadIdx.x][threadIdx.y + "
      "j];");
  e.close_scope();
  e.close_scope(name);
}

}  // namespace schedc::codegen
