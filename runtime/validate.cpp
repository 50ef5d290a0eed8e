#include "runtime/validate.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <utility>

#include "report/json.h"
#include "runtime/cuda_libs.h"
#include "runtime/error.h"
#include "runtime/parallel_chunks.h"

namespace schedc::runtime {

RefMode reference_mode(const codegen::GeneratedKernel& kernel) {
  ElemType t = elem_type(kernel.dtype);
  if (t == ElemType::s8) return RefMode::s8;  // SIMT or tensor cores: the same integers
  if (t == ElemType::f16) return RefMode::f16;
  if (t == ElemType::bf16) return RefMode::bf16;
  if (!kernel.tensor_cores) return RefMode::f32_pedantic;
  if (kernel.mma_type == "tf32") return RefMode::tf32;
  if (kernel.mma_type == "f16") return RefMode::f32_fast_f16;
  if (kernel.mma_type == "bf16") return RefMode::f32_fast_bf16;
  throw Error(Error::Kind::cuda,
              "internal error: unknown mma_type '" + kernel.mma_type + "' from codegen");
}

const char* to_string(RefMode m) {
  switch (m) {
    case RefMode::f32_pedantic: return "cuBLAS f32 pedantic";
    case RefMode::tf32: return "cuBLAS TF32";
    case RefMode::f32_fast_f16: return "cuBLAS f32 via f16";
    case RefMode::f32_fast_bf16: return "cuBLAS f32 via bf16";
    case RefMode::f16: return "cuBLAS f16 in, f32 accumulate";
    case RefMode::bf16: return "cuBLAS bf16 in, f32 accumulate";
    case RefMode::s8: return "cuBLAS int8 in, int32 accumulate";
    case RefMode::s8_via_f64: return "cuBLAS f64 on the int8 values (cuBLAS int8 rejected it)";
  }
  return "?";
}

Tolerance random_tolerance(RefMode mode, ElemType out, int64_t k) {
  // Unit roundoffs: f32 accumulation 2^-24; output rounding per type.
  const double u_acc = std::ldexp(1.0, -24);
  const double u_out = out == ElemType::f32   ? u_acc
                       : out == ElemType::f16 ? std::ldexp(1.0, -11)
                                              : std::ldexp(1.0, -8);
  // Input rounding the kernel and cuBLAS may do differently (the kernel may
  // truncate to tf32 where cuBLAS rounds): zero when inputs are given in
  // the type the multiplier uses.
  double u_in = 0;
  if (mode == RefMode::tf32 || mode == RefMode::f32_fast_f16) u_in = std::ldexp(1.0, -11);
  if (mode == RefMode::f32_fast_bf16) u_in = std::ldexp(1.0, -8);
  Tolerance t;
  // Summation in another order: error grows like sqrt(K) u for random signs
  // (4 sigma), plus a few roundings for alpha, beta, bias; one output
  // rounding may flip by an ulp (2 u); truncation vs rounding of inputs is
  // biased and costs up to ~2 u_in relative per product (16 u_in: margin 4x+).
  t.rel_frobenius =
      u_acc * (4.0 * std::sqrt(double(std::max<int64_t>(k, 1))) + 8.0) + 16.0 * u_in + 2.0 * u_out;
  std::ostringstream why;
  why << "random inputs: 4*sqrt(K)+8 f32 roundings for another summation order";
  if (u_in > 0) why << ", 16 input roundings (" << to_string(mode) << ")";
  if (out != ElemType::f32) why << ", 2 output roundings (" << to_string(out) << ")";
  t.reason = why.str();
  return t;
}

bool exact_scale(float x) {
  if (x == 0.0f) return true;
  int e = 0;
  double m = std::frexp(double(x), &e);  // x = m * 2^e, 0.5 <= |m| < 1
  double scaled = m * 512.0;             // at most 9 significant bits
  return scaled == std::floor(scaled) && e > -20 && e < 20;
}

std::string integer_scalars_error(const std::string& dtype, float alpha, float beta) {
  if (dtype != "s8") return "";
  constexpr float kMax = 16777216.0f;  // 2^24
  for (const auto& [name, v] : {std::pair{"alpha", alpha}, std::pair{"beta", beta}})
    if (!std::isfinite(v) || v != std::nearbyint(v) || std::fabs(v) > kMax)
      return std::string("dtype s8 computes in int32: ") + name + " " +
             (std::isfinite(v) ? report::json_real(v).dump() : std::to_string(v)) +
             " is not a whole number of magnitude at most 2^24 = 16777216 (the kernel converts "
             "alpha and beta with int())";
  return "";
}

std::string integer_scalars_error(const codegen::GeneratedKernel& k, float alpha, float beta) {
  return k.c_dtype == "s8" ? "" : integer_scalars_error(k.dtype, alpha, beta);
}

namespace {

// An element that holds no valid result: NaN on either side for floats; for
// int32, the poison C held before the run (no validated result takes it).
bool invalid(float v, float e) {
  return std::isnan(v) || std::isnan(e);
}
bool invalid(int32_t v, int32_t) {
  return v == kPoisonS32;
}

// compare() and compare_s32(): T is float (values decoded from the output
// type) or int32_t (s32, exact); `es` is the output element's size.
template <typename T>
ValidationResult compare_values(const compiler::Problem& p, InputMode mode, size_t es,
                                const std::vector<T>& got, const std::vector<char>& got_raw,
                                const std::vector<char>& sent_raw, const std::vector<T>& expected,
                                bool bit_exact, const Tolerance& tol) {
  constexpr bool kInteger = std::is_same_v<T, int32_t>;
  ValidationResult r;
  r.mode = mode;
  r.bit_exact = bit_exact;
  r.integer = kInteger;
  r.tolerance = bit_exact ? 0 : tol.rel_frobenius;
  r.tolerance_reason = kInteger    ? "integer inputs: int32 sums are exact in any order, so the "
                                     "result must match bit for bit"
                       : bit_exact ? "small-integer inputs: every partial sum is exact, so the "
                                     "result must match bit for bit"
                                   : tol.reason;
  r.batch = p.batch;
  const int64_t ldc = p.c_ld();
  // Both passes run over chunks of rows on the host's cores (a 4096x4096 C
  // is 16M elements, twice per validation, on every candidate a tune
  // measures); each chunk's sums, worst element and first mismatches are
  // merged in row order, so the result is the serial loop's. The rows are
  // the reference's, every GEMM's in turn: row r is GEMM r / m's row r % m.
  const int64_t rows = p.batch * p.m;
  const int64_t chunk_rows = std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(1, p.n));
  const size_t chunks = size_t((rows + chunk_rows - 1) / chunk_rows);
  struct Part {
    double err2 = 0, ref2 = 0, got2 = 0, worst_abs_err = -1;
    int64_t checked = 0, nan_count = 0, mismatches = 0;
    Mismatch worst;
    std::vector<Mismatch> first;
  };
  std::vector<Part> parts(chunks);
  // fn(part, g, i, j, got, expected) for element (i, j) of every GEMM g's C,
  // chunk by chunk.
  auto each_element = [&](auto&& fn) {
    parallel_chunks(rows, chunk_rows, [&](size_t c, int64_t row0, int64_t row1) {
      for (int64_t row = row0; row < row1; ++row) {
        const int64_t g = row / p.m, i = row % p.m;
        const T* c_g = got.data() + g * p.c_stride();  // C in its layout, at its stride
        for (int64_t j = 0; j < p.n; ++j)
          fn(parts[c], g, i, j, c_g[p.c_index(i, j)], expected[size_t(row * p.n + j)]);
      }
    });
  };
  each_element([](Part& q, int64_t g, int64_t i, int64_t j, T v, T e) {
    double d = std::fabs(double(v) - double(e));
    q.ref2 += double(e) * e;
    ++q.checked;
    if (invalid(v, e)) {
      ++q.nan_count;
      d = INFINITY;
    } else {
      q.got2 += double(v) * v;
      q.err2 += d * d;
    }
    if (d > q.worst_abs_err) {  // the first of the largest, in row order
      q.worst_abs_err = d;
      q.worst = {i, j, double(v), double(e), g};
    }
  });
  double err2 = 0, ref2 = 0, got2 = 0, worst = -1;
  for (const Part& q : parts) {
    err2 += q.err2;
    ref2 += q.ref2;
    got2 += q.got2;
    r.checked += q.checked;
    r.nan_count += q.nan_count;
    if (q.worst_abs_err > worst) {  // the first chunk's on a tie: row order
      worst = q.worst_abs_err;
      r.worst_abs_err = q.worst_abs_err;
      r.worst = q.worst;
    }
  }
  r.ref_norm = std::sqrt(ref2);
  r.got_norm = std::sqrt(got2);
  r.rel_err = r.ref_norm > 0 ? std::sqrt(err2) / r.ref_norm : (err2 > 0 ? INFINITY : 0);

  // Mismatches: bitwise in exact mode; else beyond the element bound.
  const double rms = r.checked ? r.ref_norm / std::sqrt(double(r.checked)) : 0;
  constexpr size_t kFirst = 5;
  each_element([&](Part& q, int64_t g, int64_t i, int64_t j, T v, T e) {
    bool bad;
    if (invalid(v, e))
      bad = true;
    else if (bit_exact)
      bad = v != e;
    else
      bad = std::fabs(double(v) - e) >
            tol.element_factor * tol.rel_frobenius * std::max(std::fabs(double(e)), rms);
    if (!bad) return;
    ++q.mismatches;
    if (q.first.size() < kFirst) q.first.push_back({i, j, double(v), double(e), g});
  });
  for (const Part& q : parts) {
    r.mismatches += q.mismatches;
    for (const Mismatch& x : q.first)
      if (r.first.size() < kFirst) r.first.push_back(x);
  }

  // What lies outside every C must come back exactly as it was sent: the ld
  // padding past each stored row (N long, M long for a column-major C) and,
  // in a batch, the gap between one GEMM's C and the next's.
  auto count_change = [&](int64_t element) {
    const size_t at = size_t(element) * es;
    if (at + es <= got_raw.size() && at + es <= sent_raw.size() &&
        !std::equal(got_raw.begin() + long(at), got_raw.begin() + long(at + es),
                    sent_raw.begin() + long(at)))
      ++r.padding_writes;
  };
  for (int64_t g = 0; g < p.batch; ++g) {
    const int64_t base = g * p.c_stride();
    for (int64_t i = 0; i < p.c_rows(); ++i)
      for (int64_t j = p.c_row_len(); j < ldc; ++j) count_change(base + i * ldc + j);
    if (g + 1 < p.batch)
      for (int64_t e = base + p.c_rows() * ldc; e < base + p.c_stride(); ++e) count_change(e);
  }

  std::ostringstream why;
  if (r.nan_count && kInteger) {
    why << r.nan_count << " of " << r.checked
        << " elements still hold the poison INT32_MIN (unwritten)";
  } else if (r.nan_count) {
    why << r.nan_count << " of " << r.checked << " elements are NaN (unwritten or invalid)";
  } else if (r.padding_writes) {
    why << r.padding_writes << " writes outside C (in the ldc padding"
        << (p.batch > 1 ? " or between GEMMs)" : ")");
  } else if (r.ref_norm == 0) {
    why << "the reference is all zeros (a test harness bug)";
  } else if (r.got_norm == 0) {
    why << "the result is all zeros";
  } else if (bit_exact && r.mismatches) {
    why << r.mismatches << " of " << r.checked << " elements differ from the exact result";
  } else if (!bit_exact && r.rel_err > tol.rel_frobenius) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "rel err %.1e > tolerance %.1e", r.rel_err, tol.rel_frobenius);
    why << buf;
  } else if (!bit_exact && r.mismatches) {
    why << r.mismatches << " of " << r.checked << " elements beyond the element bound";
  }
  r.failure = why.str();
  r.ok = r.failure.empty();
  return r;
}

}  // namespace

ValidationResult compare(const compiler::Problem& p, InputMode mode, ElemType out,
                         const std::vector<float>& got, const std::vector<char>& got_raw,
                         const std::vector<char>& sent_raw, const std::vector<float>& expected,
                         bool bit_exact, const Tolerance& tol) {
  return compare_values(p, mode, size_t(elem_size(out)), got, got_raw, sent_raw, expected,
                        bit_exact, tol);
}

ValidationResult compare_s32(const compiler::Problem& p, InputMode mode,
                             const std::vector<int32_t>& got, const std::vector<char>& got_raw,
                             const std::vector<char>& sent_raw,
                             const std::vector<int32_t>& expected) {
  return compare_values(p, mode, 4, got, got_raw, sent_raw, expected, true, Tolerance{});
}

ValidationResult compare_s8(const compiler::Problem& p, InputMode mode,
                            const std::vector<int32_t>& got, const std::vector<char>& got_raw,
                            const std::vector<char>& sent_raw,
                            const std::vector<int32_t>& expected) {
  return compare_values(p, mode, 1, got, got_raw, sent_raw, expected, true, Tolerance{});
}

namespace {

// One f32 rounding, never fused with what follows (the kernel's __fmul_rn
// and __fadd_rn): a volatile store forces the rounded value out whatever
// the host compiler's contraction settings.
float rounded(float x) {
  volatile float r = x;
  return r;
}

}  // namespace

compiler::Epilogue kernel_epilogue(const codegen::GeneratedKernel& k, compiler::Epilogue given) {
  given.requantize = output_type(k.dtype, k.c_dtype) == ElemType::s8;
  given.scale = k.channel_scale;
  return given;
}

std::vector<int32_t> requantize_reference(const std::vector<int64_t>& acc,
                                          const compiler::Problem& p, const std::vector<float>& z,
                                          const std::vector<float>& bias,
                                          const std::vector<float>& scale,
                                          const compiler::Epilogue& epi) {
  std::vector<int32_t> r(acc.size());
  for (int64_t row = 0; row < p.batch * p.m; ++row)
    for (int64_t j = 0; j < p.n; ++j) {
      const size_t at = size_t(row * p.n + j);
      const float column_scale = epi.scale ? rounded(epi.alpha * scale[size_t(j)]) : epi.alpha;
      float v = rounded(column_scale * float(acc[at]));
      if (epi.beta != 0.0f) v = rounded(v + rounded(epi.beta * z[at]));
      if (epi.bias) v = rounded(v + bias[size_t(j)]);
      if (epi.relu) v = std::fmax(v, 0.0f);
      r[at] = int32_t(std::nearbyint(std::fmin(std::fmax(v, -128.0f), 127.0f)));
    }
  return r;
}

std::vector<float> finish_reference(const std::vector<float>& ref32, const compiler::Problem& p,
                                    const std::vector<float>& bias, bool relu, ElemType out) {
  std::vector<float> r(ref32.size());
  for (int64_t row = 0; row < p.batch * p.m; ++row)  // every GEMM's rows, one after another
    for (int64_t j = 0; j < p.n; ++j) {
      float v = ref32[size_t(row * p.n + j)];
      if (!bias.empty()) v += bias[size_t(j)];
      if (relu) v = v > 0.0f ? v : 0.0f;
      r[size_t(row * p.n + j)] = round_to(out, v);
    }
  return r;
}

std::vector<int32_t> finish_reference_s32(const std::vector<int64_t>& acc,
                                          const compiler::Problem& p,
                                          const std::vector<float>& bias, bool relu) {
  std::vector<int32_t> r(acc.size());
  for (int64_t row = 0; row < p.batch * p.m; ++row)  // every GEMM's rows, one after another
    for (int64_t j = 0; j < p.n; ++j) {
      int64_t v = acc[size_t(row * p.n + j)];
      if (!bias.empty()) v += int64_t(std::nearbyint(bias[size_t(j)]));  // as __float2int_rn
      // The kernel's int32 sums wrap; so does the conversion (C++20: modulo
      // 2^32). The inputs' rule keeps every sum in range, so nothing wraps
      // in a validation, but the reference would follow the kernel if it did.
      int32_t w = int32_t(uint32_t(uint64_t(v)));
      if (relu && w < 0) w = 0;
      r[size_t(row * p.n + j)] = w;
    }
  return r;
}

CublasC reference_c(const compiler::Problem& p, void* ptr) {
  return {ptr, true, p.n, false, p.m * p.n};
}

CublasC kernel_c(const compiler::Problem& p, void* ptr) {
  return {ptr, false, p.c_ld(), p.c_col, p.c_stride()};
}

namespace {

// cuBLAS is column-major. Column-major C = op(A) op(B) in its own view: a
// row-major operand is seen transposed (op T), a column-major one as it is
// (op N). Row-major C = A B is column-major C^T = B^T A^T: swap the
// operands; a row-major operand is, seen column-major, already transposed
// (op N), a column-major one (layout col) is not, so it takes op T.
struct Operand {
  cublasOperation_t op;
  const void* ptr;
  int ld;
  long long stride;
};
struct Mapping {
  Operand first, second;  // cuBLAS's A and B
  int rows, cols;         // cuBLAS's m and n
};
Mapping column_major(const compiler::Problem& p, const void* a, const void* b, bool c_col) {
  const Operand op_a{p.a_col == c_col ? CUBLAS_OP_N : CUBLAS_OP_T, a, int(p.a_ld()), p.a_stride()};
  const Operand op_b{p.b_col == c_col ? CUBLAS_OP_N : CUBLAS_OP_T, b, int(p.b_ld()), p.b_stride()};
  return {c_col ? op_a : op_b, c_col ? op_b : op_a, int(c_col ? p.m : p.n), int(c_col ? p.n : p.m)};
}

// Runs the GEMM; returns cuBLAS's status, and in `call` the function's name.
int gemm_status(void* handle, RefMode mode, ElemType in, const compiler::Problem& p, const void* a,
                const void* b, const CublasC& c, float alpha, float beta, const char*& call) {
  const bool s8 = in == ElemType::s8;
  cudaDataType_t t = in == ElemType::f32   ? CUDA_R_32F
                     : in == ElemType::f16 ? CUDA_R_16F
                     : s8                  ? CUDA_R_8I
                                           : CUDA_R_16BF;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (mode) {
    case RefMode::f32_pedantic: compute = CUBLAS_COMPUTE_32F_PEDANTIC; break;
    case RefMode::tf32: compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    case RefMode::f32_fast_f16: compute = CUBLAS_COMPUTE_32F_FAST_16F; break;
    case RefMode::f32_fast_bf16: compute = CUBLAS_COMPUTE_32F_FAST_16BF; break;
    case RefMode::f16:
    case RefMode::bf16: compute = CUBLAS_COMPUTE_32F; break;
    case RefMode::s8:
    case RefMode::s8_via_f64: compute = CUBLAS_COMPUTE_32I; break;
  }
  auto h = static_cast<cublasHandle_t>(handle);
  check_cublas(cublas().SetMathMode(
                   h, mode == RefMode::f32_pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH),
               "cublasSetMathMode");
  // s8: int8 A and B, int32 C (the reference's and the kernel's alike), and
  // int32 scalars (CUBLAS_COMPUTE_32I's scale type; whole numbers, checked
  // by integer_scalars_error).
  const cudaDataType_t c_type = s8 ? CUDA_R_32I : c.f32 ? CUDA_R_32F : t;
  const int32_t alpha_i = s8 ? int32_t(alpha) : 0, beta_i = s8 ? int32_t(beta) : 0;
  const void* alpha_p = s8 ? static_cast<const void*>(&alpha_i) : &alpha;
  const void* beta_p = s8 ? static_cast<const void*>(&beta_i) : &beta;
  const Mapping m = column_major(p, a, b, c.col);
  if (p.batch == 1) {  // one GEMM (a batched kernel's batch of one too): cublasGemmEx
    call = "cublasGemmEx";
    return cublas().GemmEx(h, m.first.op, m.second.op, m.rows, m.cols, int(p.k), alpha_p,
                           m.first.ptr, t, m.first.ld, m.second.ptr, t, m.second.ld, beta_p, c.ptr,
                           c_type, int(c.ld), compute, CUBLAS_GEMM_DEFAULT);
  }
  call = "cublasGemmStridedBatchedEx";
  return cublas().GemmStridedBatchedEx(
      h, m.first.op, m.second.op, m.rows, m.cols, int(p.k), alpha_p, m.first.ptr, t, m.first.ld,
      m.first.stride, m.second.ptr, t, m.second.ld, m.second.stride, beta_p, c.ptr, c_type,
      int(c.ld), c.stride, int(p.batch), compute, CUBLAS_GEMM_DEFAULT);
}

}  // namespace

void cublas_gemm(void* handle, RefMode mode, ElemType in, const compiler::Problem& p, const void* a,
                 const void* b, const CublasC& c, float alpha, float beta) {
  const char* call = "";
  const int status = gemm_status(handle, mode, in, p, a, b, c, alpha, beta, call);
  check_cublas(status, call);
}

std::string try_cublas_gemm(void* handle, RefMode mode, ElemType in, const compiler::Problem& p,
                            const void* a, const void* b, const CublasC& c, float alpha,
                            float beta) {
  const char* call = "";
  const int status = gemm_status(handle, mode, in, p, a, b, c, alpha, beta, call);
  if (status == CUBLAS_STATUS_SUCCESS) return "";
  const auto st = static_cast<cublasStatus_t>(status);
  return std::string(call) + " failed: " + cublas().GetStatusName(st) + " (" +
         cublas().GetStatusString(st) + ")";
}

void cublas_gemm_f64(void* handle, const compiler::Problem& p, const double* a, const double* b,
                     const CublasC& c, double alpha, double beta) {
  auto h = static_cast<cublasHandle_t>(handle);
  // Pedantic: f64 as IEEE f64, no emulation, so integer sums below 2^53 are exact.
  check_cublas(cublas().SetMathMode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  const Mapping m = column_major(p, a, b, c.col);
  auto f64 = [](const void* ptr) { return static_cast<const double*>(ptr); };
  if (p.batch == 1) {
    check_cublas(cublas().Dgemm(h, m.first.op, m.second.op, m.rows, m.cols, int(p.k), &alpha,
                                f64(m.first.ptr), m.first.ld, f64(m.second.ptr), m.second.ld, &beta,
                                static_cast<double*>(c.ptr), int(c.ld)),
                 "cublasDgemm");
    return;
  }
  check_cublas(cublas().DgemmStridedBatched(
                   h, m.first.op, m.second.op, m.rows, m.cols, int(p.k), &alpha, f64(m.first.ptr),
                   m.first.ld, m.first.stride, f64(m.second.ptr), m.second.ld, m.second.stride,
                   &beta, static_cast<double*>(c.ptr), int(c.ld), c.stride, int(p.batch)),
               "cublasDgemmStridedBatched");
}

}  // namespace schedc::runtime
