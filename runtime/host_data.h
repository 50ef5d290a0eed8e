#pragma once
// Host-side matrices for validation: element encodings (f32, f16, bf16 with
// round-to-nearest-even; s8 and s32 integers), and the seeded inputs of the
// two validation modes. Pure host code; tested without a GPU.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/conv.h"
#include "compiler/problem.h"

namespace schedc::runtime {

// s8 is int8 (signed char), s32 int32: dtype s8's A and B, and its C.
enum class ElemType { f32, f16, bf16, s8, s32 };
// The type of A and B: "f32" | "f16" | "bf16" | "s8"; throws otherwise.
ElemType elem_type(const std::string& dtype);
// The type of C (C0, the output, the reference): s32 for "s8", whose kernel
// accumulates int8 products in int32 and writes int32; else elem_type(dtype).
ElemType output_type(const std::string& dtype);
int elem_size(ElemType t);  // bytes: 4, 2, 2, 1, 4
bool is_integer(ElemType t);
const char* to_string(ElemType t);

// What lies outside the matrices of integer operands, where floats hold NaN
// (docs/runtime.md, "Validation"): A's and B's ld padding and batch gaps are
// -128, so a kernel that multiplies with them changes its sum; C is poisoned
// with INT32_MIN, a value no validated result takes (inputs keep every result
// within [-(2^31 - 1), 2^31 - 1]), so an unwritten element shows.
constexpr int8_t kPaddingS8 = -128;
constexpr int32_t kPoisonS32 = INT32_MIN;

uint16_t float_to_half(float f);  // round to nearest even; overflow -> inf
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);  // round to nearest even
float bf16_to_float(uint16_t h);
// f rounded to t and back (s8, s32: to the nearest integer, ties to even; s8
// clamped to [-128, 127]).
float round_to(ElemType t, float f);

// Values (as float, already representable in the element type) <-> raw bytes.
// For s8 and s32 a NaN (outside the matrices) is written as kPaddingS8 and
// kPoisonS32. A float holds every int8 exactly but an int32 only up to 2^24:
// compare s32 outputs as decode_s32_into gives them.
std::vector<char> encode(ElemType t, const std::vector<float>& values);
std::vector<float> decode(ElemType t, const std::vector<char>& bytes);
// The same into `out`, whose storage is reused (no fresh pages to fault in
// for a 64 MB C on every validation).
void decode_into(ElemType t, const std::vector<char>& bytes, std::vector<float>& out);
// s32 bytes as the exact int32 values, into `out` (storage reused).
void decode_s32_into(const std::vector<char>& bytes, std::vector<int32_t>& out);
// int8 bytes (a requantized C) as int32 values.
void decode_s8_into(const std::vector<char>& bytes, std::vector<int32_t>& out);
std::vector<char> encode_s32(const std::vector<int32_t>& values);
// The poison every output element holds before a run: NaN, or kPoisonS32.
std::vector<char> poison(ElemType t, size_t count);

enum class InputMode { exact, random };
const char* to_string(InputMode m);

// The inputs of one validation run. Matrices are stored with their leading
// dimensions; elements outside the logical matrix (ld padding) are NaN, so a
// kernel that reads or computes with them is caught (s8: encode() writes them
// as kPaddingS8, C's as kPoisonS32). A strided batch (p.batch > 1) holds
// every GEMM's matrices, GEMM g's at g strides (p.a_stride() …), the gaps
// between them NaN too. Integer inputs (s8) are whole numbers, exact as
// floats.
struct GemmInputs {
  std::vector<float> a;      // p.a_span(): A_g(i, k) at g * p.a_stride() + p.a_index(i, k)
  std::vector<float> b;      // p.b_span(): B_g(k, j) at g * p.b_stride() + p.b_index(k, j)
  std::vector<float> c0;     // p.c_span(): C before the run (beta != 0), NaN when beta == 0
  std::vector<float> bias;   // n, or empty: one bias for every GEMM of a batch
  std::vector<float> scale;  // n per-channel scales (`epilogue ... scale`), or empty
  int exact_range = 0;       // exact mode (s8: both modes): |A|, |B| <= this (see make_inputs)
  int exact_stride = 1;      // exact mode (s8: both): B nonzero only where (k + n) % stride == 0
  int c0_range = 0;          // s8: |C0| <= this (0: beta == 0, or not s8)
  int bias_range = 0;        // s8: |bias| <= this (0: no bias, or not s8)
};

// Exact mode (docs/runtime.md, "exact inputs"): nonzero integers such that
// every partial sum of alpha*A*B + beta*C0 + bias is an integer whose
// magnitude stays within the output type's exact-integer range (2^24 for
// f32, 2048 for f16, 256 for bf16): values in {-2,-1,1,2} when
// 4K fits, else {-1,1}; when even K does not fit, B keeps only every
// stride-th diagonal nonzero so each column of B has at most `budget`
// nonzeros. Random mode: uniform in [-1, 1] rounded to the element type.
// In a batch each GEMM draws its own values (GEMM 0's are those of the same
// problem unbatched) under the same per-GEMM budget.
//
// s8 (both modes bit-exact, in int32): every partial sum of
// alpha*A*B + beta*C0 + bias stays within int32 (|.| <= 2^31 - 1, so the
// reference never wraps): bias in [-2^20, 2^20]; C0 in [-c, c] with
// c = min(2^20, 2^29 / |beta|); the budget left for |alpha (A B)_ij| is
// B = (2^31 - 1 - |beta| c - 2^20) / max(1, |alpha|); A and B take the full
// int8 range [-128, 127] when K 128^2 <= B, else [-R, R] with
// R = floor(sqrt(B / K)); when even K > B, [-1, 1] and B keeps only every
// stride-th diagonal as above. Exact mode draws nonzero values, random mode
// uniform ones (zeros included), under other seeds.
// `epilogue ... requantize` (an int8 C): C's prior content `z` (read with
// beta) made int8, [-128, 127], and the bias small multiples of 1/8 in
// [-32, 32], so that the outputs spread over int8 rather than all
// saturating; NaN (the poison) stays. The operands are drawn for alpha 1
// (their int32 sums exact). Deterministic in `seed`.
void requantize_inputs(std::vector<float>& z, std::vector<float>& bias, uint64_t seed);
// The per-channel scales of `epilogue ... scale` (empty without it): n
// multiples of 1/64 in [0.5, 2], so that the columns' scales alpha·scale[n]
// differ by up to 4x around alpha and the outputs still spread over int8.
// Deterministic in `seed`.
std::vector<float> channel_scales(const compiler::Epilogue& epi, int64_t n, uint64_t seed);
// The alpha and beta a case's inputs are drawn for (make_inputs,
// make_conv_inputs): epi's, or for an int8 C (epi.requantize) alpha 1 and
// beta 0 or 1, so that the int32 sums are exact whatever the f32 scalars.
std::pair<float, float> drawn_scalars(const compiler::Epilogue& epi);

// C's element type of a module of `dtype` whose C type is `c_dtype`
// (GeneratedKernel::c_dtype: "" for the dtype's usual output_type, "s8" for
// an int8 C).
ElemType output_type(const std::string& dtype, const std::string& c_dtype);

GemmInputs make_inputs(const compiler::Problem& p, ElemType t, InputMode mode, uint64_t seed,
                       float alpha, float beta, bool bias);
// The inputs of a case validating epilogue `epi` (GpuSession::run): drawn
// for drawn_scalars(epi), then, for an int8 C, requantize_inputs, and with
// `scale` the per-channel scales (channel_scales).
GemmInputs make_inputs(const compiler::Problem& p, ElemType t, InputMode mode, uint64_t seed,
                       const compiler::Epilogue& epi);

// The inputs of a convolution run (GpuSession::run_conv), drawn as random
// mode draws a GEMM's whose K is C·R·S: the input tensor (N·H·W·C elements
// in NHWC order), the filters ([K][R][S][C]: the implicit GEMM's B, column
// n the filter n, row kk = (r·S + s)·C + c), z (the output's N·P·Q·K
// elements, NHWC: C0, read when beta != 0; NaN otherwise, the output's
// poison) and the bias (K, or empty). f16/bf16: uniform in [-1, 1] rounded
// to the type (the bias in f32). s8: whole numbers under make_inputs' rule
// for K = C·R·S (the full int8 range when C·R·S·128² fits the int32
// budget, else [-R, R]; with even ±1 too large, a filter element nonzero
// only where (kk + n) % stride == 0), z and the bias in s8's C0 and bias
// ranges.
struct ConvInputs {
  std::vector<float> input, filters, z, bias;
  std::vector<float> scale;  // K per-channel scales (`epilogue ... scale`), or empty
  int range = 0;             // s8: |input|, |filters| <= this (128: the full [-128, 127])
  int stride = 1;            // s8: the filters' nonzero stride
};
ConvInputs make_conv_inputs(const compiler::Conv2d& conv, ElemType t, uint64_t seed, float alpha,
                            float beta, bool bias);
// The same for epilogue `epi`, as make_inputs(p, t, mode, seed, epi) does
// (GpuSession::run_conv).
ConvInputs make_conv_inputs(const compiler::Conv2d& conv, ElemType t, uint64_t seed,
                            const compiler::Epilogue& epi);

}  // namespace schedc::runtime
