#pragma once
// Host-side matrices for validation: element encodings (f32, f16, bf16 with
// round-to-nearest-even), and the seeded inputs of the two validation modes.
// Pure host code; tested without a GPU.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/problem.h"

namespace schedc::runtime {

enum class ElemType { f32, f16, bf16 };
ElemType elem_type(const std::string& dtype);  // "f32" | "f16" | "bf16"; throws otherwise
int elem_size(ElemType t);
const char* to_string(ElemType t);

uint16_t float_to_half(float f);  // round to nearest even; overflow -> inf
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);  // round to nearest even
float bf16_to_float(uint16_t h);
float round_to(ElemType t, float f);  // f rounded to t and back

// Values (as float, already representable in the element type) <-> raw bytes.
std::vector<char> encode(ElemType t, const std::vector<float>& values);
std::vector<float> decode(ElemType t, const std::vector<char>& bytes);
// The same into `out`, whose storage is reused (no fresh pages to fault in
// for a 64 MB C on every validation).
void decode_into(ElemType t, const std::vector<char>& bytes, std::vector<float>& out);
// The NaN every output element is poisoned with before a run.
std::vector<char> poison(ElemType t, size_t count);

enum class InputMode { exact, random };
const char* to_string(InputMode m);

// The inputs of one validation run. Matrices are stored with their leading
// dimensions; elements outside the logical matrix (ld padding) are NaN, so a
// kernel that reads or computes with them is caught. A strided batch
// (p.batch > 1) holds every GEMM's matrices, GEMM g's at g strides
// (p.a_stride() …), the gaps between them NaN too.
struct GemmInputs {
  std::vector<float> a;     // p.a_span(): A_g(i, k) at g * p.a_stride() + p.a_index(i, k)
  std::vector<float> b;     // p.b_span(): B_g(k, j) at g * p.b_stride() + p.b_index(k, j)
  std::vector<float> c0;    // p.c_span(): C before the run (beta != 0), NaN when beta == 0
  std::vector<float> bias;  // n, or empty: one bias for every GEMM of a batch
  int exact_range = 0;      // exact mode: |A|, |B| <= this (see make_inputs)
  int exact_stride = 1;     // exact mode: B nonzero only where (k + n) % stride == 0
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
GemmInputs make_inputs(const compiler::Problem& p, ElemType t, InputMode mode, uint64_t seed,
                       float alpha, float beta, bool bias);

}  // namespace schedc::runtime
