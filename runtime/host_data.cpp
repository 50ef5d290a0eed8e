#include "runtime/host_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/error.h"

namespace schedc::runtime {

ElemType elem_type(const std::string& dtype) {
  if (dtype == "f32") return ElemType::f32;
  if (dtype == "f16") return ElemType::f16;
  if (dtype == "bf16") return ElemType::bf16;
  if (dtype == "s8") return ElemType::s8;
  throw Error(Error::Kind::cuda, "internal error: unknown dtype '" + dtype + "' from codegen");
}

ElemType output_type(const std::string& dtype) {
  const ElemType in = elem_type(dtype);
  return in == ElemType::s8 ? ElemType::s32 : in;
}

int elem_size(ElemType t) {
  switch (t) {
    case ElemType::f32:
    case ElemType::s32: return 4;
    case ElemType::f16:
    case ElemType::bf16: return 2;
    case ElemType::s8: return 1;
  }
  return 4;
}

bool is_integer(ElemType t) {
  return t == ElemType::s8 || t == ElemType::s32;
}

const char* to_string(ElemType t) {
  switch (t) {
    case ElemType::f32: return "f32";
    case ElemType::f16: return "f16";
    case ElemType::bf16: return "bf16";
    case ElemType::s8: return "s8";
    case ElemType::s32: return "s32";
  }
  return "?";
}

const char* to_string(InputMode m) {
  return m == InputMode::exact ? "exact" : "random";
}

static uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x = bits_of(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00);   // NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Scale by 2^24 so the half subnormal's integer mantissa is the rounded value.
    float scaled = float_of(abs) * 16777216.0f;        // exact (power of two)
    uint32_t mant = uint32_t(std::nearbyint(scaled));  // default rounding: to nearest even
    return uint16_t(sign | mant);
  }
  // Normal: rebias the exponent, round the 23-bit mantissa to 10 bits (RNE).
  uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    float v = float(mant) * (1.0f / 16777216.0f);
    return float_of(bits_of(v) | sign);
  }
  if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_bf16(float f) {
  uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

float bf16_to_float(uint16_t h) {
  return float_of(uint32_t(h) << 16);
}

float round_to(ElemType t, float f) {
  switch (t) {
    case ElemType::f32: return f;
    case ElemType::f16: return half_to_float(float_to_half(f));
    case ElemType::bf16: return bf16_to_float(float_to_bf16(f));
    case ElemType::s8: return std::nearbyint(std::clamp(f, -128.0f, 127.0f));
    case ElemType::s32: return std::nearbyint(f);
  }
  return f;
}

namespace {

// An integer type's bytes from whole-number floats; NaN (outside the
// matrices) becomes `outside`.
template <typename Int>
std::vector<char> encode_int(const std::vector<float>& values, Int outside) {
  std::vector<char> out(values.size() * sizeof(Int));
  for (size_t i = 0; i < values.size(); ++i) {
    const Int v = std::isnan(values[i]) ? outside : Int(values[i]);
    std::memcpy(out.data() + i * sizeof(Int), &v, sizeof(Int));
  }
  return out;
}

template <typename Int>
void decode_int(const std::vector<char>& bytes, std::vector<float>& out) {
  out.resize(bytes.size() / sizeof(Int));
  for (size_t i = 0; i < out.size(); ++i) {
    Int v;
    std::memcpy(&v, bytes.data() + i * sizeof(Int), sizeof(Int));
    out[i] = float(v);
  }
}

}  // namespace

std::vector<char> encode(ElemType t, const std::vector<float>& values) {
  if (t == ElemType::s8) return encode_int<int8_t>(values, kPaddingS8);
  if (t == ElemType::s32) return encode_int<int32_t>(values, kPoisonS32);
  std::vector<char> out(values.size() * size_t(elem_size(t)));
  if (t == ElemType::f32) {
    std::memcpy(out.data(), values.data(), out.size());
    return out;
  }
  auto* p = reinterpret_cast<uint16_t*>(out.data());
  for (size_t i = 0; i < values.size(); ++i)
    p[i] = t == ElemType::f16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
  return out;
}

std::vector<float> decode(ElemType t, const std::vector<char>& bytes) {
  std::vector<float> out;
  decode_into(t, bytes, out);
  return out;
}

void decode_into(ElemType t, const std::vector<char>& bytes, std::vector<float>& out) {
  if (t == ElemType::s8) return decode_int<int8_t>(bytes, out);
  if (t == ElemType::s32) return decode_int<int32_t>(bytes, out);
  out.resize(bytes.size() / size_t(elem_size(t)));
  if (t == ElemType::f32) {
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return;
  }
  const auto* p = reinterpret_cast<const uint16_t*>(bytes.data());
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = t == ElemType::f16 ? half_to_float(p[i]) : bf16_to_float(p[i]);
}

void decode_s8_into(const std::vector<char>& bytes, std::vector<int32_t>& out) {
  out.resize(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) out[i] = int32_t(static_cast<signed char>(bytes[i]));
}

void decode_s32_into(const std::vector<char>& bytes, std::vector<int32_t>& out) {
  out.resize(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
}

std::vector<char> encode_s32(const std::vector<int32_t>& values) {
  std::vector<char> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<char> poison(ElemType t, size_t count) {
  return encode(t, std::vector<float>(count, std::numeric_limits<float>::quiet_NaN()));
}

namespace {

// Counter-based generator: element i of stream s under seed is a pure
// function, so inputs do not depend on the order they are drawn in.
uint64_t hash64(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (stream + 1) * 0xd1b54a32d192ed03ull ^ i;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float uniform_pm1(uint64_t h) {  // uniform in [-1, 1)
  return float(double(h >> 11) * (2.0 / 9007199254740992.0) - 1.0);
}

// A nonzero integer in {-r..r} \ {0}.
float small_int(uint64_t h, int r) {
  int mag = 1 + int((h >> 1) % uint64_t(r));
  return (h & 1) ? float(mag) : float(-mag);
}

double exact_int_limit(ElemType t) {
  switch (t) {
    case ElemType::f32: return 16777216.0;  // 2^24
    case ElemType::f16: return 2048.0;      // 2^11
    case ElemType::bf16: return 256.0;      // 2^8
    case ElemType::s8:
    case ElemType::s32: return 2147483647.0;  // 2^31 - 1: s8's inputs have their own rule
  }
  return 0;
}

// Storage for p's inputs, NaN everywhere (what is not filled stays so: ld
// padding, the gaps between GEMMs); the bias (n floats), when asked, zero.
GemmInputs nan_inputs(const compiler::Problem& p, bool bias) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  GemmInputs in;
  in.a.assign(size_t(p.a_span()), nan);
  in.b.assign(size_t(p.b_span()), nan);
  in.c0.assign(size_t(p.c_span()), nan);
  if (bias) in.bias.assign(size_t(p.n), 0.0f);
  return in;
}

// Fills A, B and, with `c0`, C0 of every GEMM: GEMM g's A(i, k), B(k, j) and
// C(i, j) lie g strides in, where p.a_index, p.b_index and p.c_index say
// (their layouts). Element i (in logical row-major order) of GEMM g's
// matrix `stream` (0 A, 1 B, 2 C0) is value(stream, g * count + i), count
// the matrix's elements: one counter per matrix across the batch, so GEMM
// 0's values are the unbatched problem's and every GEMM's differ. B keeps
// a value only where (k + n) % stride == 0 (0 elsewhere).
template <typename Value>
void fill_matrices(GemmInputs& in, const compiler::Problem& p, int stride, bool c0, Value value) {
  for (int64_t g = 0; g < p.batch; ++g) {
    float* a = in.a.data() + g * p.a_stride();
    float* b = in.b.data() + g * p.b_stride();
    float* c = in.c0.data() + g * p.c_stride();
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t k = 0; k < p.k; ++k)
        a[p.a_index(i, k)] = value(0, uint64_t((g * p.m + i) * p.k + k));
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t j = 0; j < p.n; ++j)
        b[p.b_index(k, j)] =
            (k + j) % stride == 0 ? value(1, uint64_t((g * p.k + k) * p.n + j)) : 0.0f;
    if (c0)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j)
          c[p.c_index(i, j)] = value(2, uint64_t((g * p.m + i) * p.n + j));
  }
}

// A whole number uniform in [lo, hi] (lo < 0 < hi); `nonzero`: 0 left out.
int int_in(uint64_t h, int lo, int hi, bool nonzero) {
  const uint64_t span = uint64_t(int64_t(hi) - lo + 1) - (nonzero ? 1 : 0);
  int v = lo + int((h >> 8) % span);
  if (nonzero && v >= 0) ++v;
  return v;
}

// The ranges of s8's inputs (make_inputs' comment has the rule): every
// partial sum of alpha*A*B + beta*C0 + bias within int32, A and B in the
// full int8 range whenever K allows.
struct IntRanges {
  int ab = 128;    // A and B in [-128, 127] (128), else [-ab, ab]
  int stride = 1;  // B nonzero only where (k + n) % stride == 0
  int c0 = 0, bias = 0;
};
IntRanges int_ranges(int64_t k, float alpha, float beta, bool bias) {
  IntRanges r;
  r.bias = bias ? 1 << 20 : 0;
  if (beta != 0.0f)
    r.c0 = int(std::max(1.0, std::min(double(1 << 20), std::floor(536870912.0 / std::fabs(beta)))));
  const double budget = (exact_int_limit(ElemType::s32) - std::fabs(double(beta)) * r.c0 - r.bias) /
                        std::max(1.0, std::fabs(double(alpha)));
  const double kk = double(k);
  if (kk * 128.0 * 128.0 <= budget) return r;  // the full range: |-128 * -128| = 2^14
  if (kk <= budget) {
    r.ab = std::min(127, int(std::sqrt(budget / kk)));
    while (r.ab > 1 && kk * r.ab * r.ab > budget) --r.ab;  // sqrt's rounding
    return r;
  }
  // Even +-1 everywhere would overflow (|alpha| near 2^24): each column of B
  // keeps at most floor(budget) nonzeros.
  r.ab = 1;
  const double per_column = std::max(1.0, std::floor(budget));
  r.stride = int(std::ceil(kk / per_column));
  return r;
}

// make_inputs for s8: whole numbers in the ranges above, nonzero in exact
// mode; NaN outside the matrices, as for floats (encode() writes it as
// kPaddingS8 or kPoisonS32).
GemmInputs make_int_inputs(const compiler::Problem& p, InputMode mode, uint64_t seed, float alpha,
                           float beta, bool bias) {
  GemmInputs in = nan_inputs(p, bias);
  const uint64_t s = seed * 2 + (mode == InputMode::exact ? 0 : 1);
  const bool nonzero = mode == InputMode::exact;
  const IntRanges r = int_ranges(p.k, alpha, beta, bias);
  in.exact_range = r.ab;
  in.exact_stride = r.stride;
  in.c0_range = r.c0;
  in.bias_range = r.bias;
  const int lo = r.ab == 128 ? -128 : -r.ab, hi = std::min(r.ab, 127);
  fill_matrices(in, p, r.stride, beta != 0.0f, [&](uint64_t stream, uint64_t counter) {
    const uint64_t h = hash64(s, stream, counter);
    return float(stream == 2 ? int_in(h, -r.c0, r.c0, nonzero) : int_in(h, lo, hi, nonzero));
  });
  for (int64_t j = 0; j < int64_t(in.bias.size()); ++j)
    in.bias[size_t(j)] = float(int_in(hash64(s, 3, uint64_t(j)), -r.bias, r.bias, nonzero));
  return in;
}

}  // namespace

void requantize_inputs(std::vector<float>& z, std::vector<float>& bias, uint64_t seed) {
  const uint64_t s = seed * 2 + 1;
  for (size_t i = 0; i < z.size(); ++i)
    if (!std::isnan(z[i])) z[i] = float(int_in(hash64(s, 4, i), -128, 127, false));
  for (size_t j = 0; j < bias.size(); ++j)
    bias[j] = float(int_in(hash64(s, 5, j), -256, 256, false)) / 8.0f;
}

std::vector<float> channel_scales(const compiler::Epilogue& epi, int64_t n, uint64_t seed) {
  std::vector<float> scale;
  if (!epi.scale) return scale;
  const uint64_t s = seed * 2 + 1;
  scale.resize(size_t(n));
  for (size_t j = 0; j < scale.size(); ++j)
    scale[j] = float(int_in(hash64(s, 6, j), 32, 128, false)) / 64.0f;
  return scale;
}

std::pair<float, float> drawn_scalars(const compiler::Epilogue& epi) {
  if (!epi.requantize) return {epi.alpha, epi.beta};
  return {1.0f, epi.beta != 0.0f ? 1.0f : 0.0f};
}

ElemType output_type(const std::string& dtype, const std::string& c_dtype) {
  return c_dtype.empty() ? output_type(dtype) : elem_type(c_dtype);
}

GemmInputs make_inputs(const compiler::Problem& p, ElemType t, InputMode mode, uint64_t seed,
                       float alpha, float beta, bool bias) {
  if (is_integer(t)) return make_int_inputs(p, mode, seed, alpha, beta, bias);
  GemmInputs in = nan_inputs(p, bias);
  const uint64_t s = seed * 2 + (mode == InputMode::exact ? 0 : 1);

  // Exact mode: the budget left for |alpha * (A B)_ij| once C0 and bias
  // (integers in [-2, 2]) have taken their share of the exact range; each
  // GEMM of a batch is a sum of its own, so the budget is per GEMM.
  int r = 2, stride = 1;
  if (mode == InputMode::exact) {
    double budget = exact_int_limit(t) - 2.0 * std::fabs(beta) - (bias ? 2.0 : 0.0);
    budget /= std::max(1.0, double(std::fabs(alpha)));
    if (4.0 * double(p.k) > budget) {
      r = 1;
      if (double(p.k) > budget) stride = int((double(p.k) + budget - 1) / std::max(1.0, budget));
    }
    in.exact_range = r;
    in.exact_stride = stride;
  }
  // A and B within the exact range r, C0 in [-2, 2].
  fill_matrices(in, p, stride, beta != 0.0f, [&](uint64_t stream, uint64_t counter) {
    const uint64_t h = hash64(s, stream, counter);
    return mode == InputMode::random ? round_to(t, uniform_pm1(h))
                                     : small_int(h, stream == 2 ? 2 : r);
  });
  for (int64_t j = 0; j < int64_t(in.bias.size()); ++j) {
    const uint64_t h = hash64(s, 3, uint64_t(j));
    in.bias[size_t(j)] = mode == InputMode::random ? uniform_pm1(h) : small_int(h, 2);
  }
  return in;
}

ConvInputs make_conv_inputs(const compiler::Conv2d& conv, ElemType t, uint64_t seed, float alpha,
                            float beta, bool bias) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t kk_count = conv.c * conv.r * conv.s;
  const int64_t outputs = conv.gemm_m() * conv.gemm_n();
  ConvInputs in;
  in.input.resize(size_t(conv.n * conv.h * conv.w * conv.c));
  in.filters.resize(size_t(conv.k * kk_count));
  in.z.assign(size_t(outputs), nan);
  if (bias) in.bias.resize(size_t(conv.k));
  const uint64_t s = seed * 2 + 1;  // random mode's seeds
  if (!is_integer(t)) {
    auto draw = [&](uint64_t stream, uint64_t i) {
      return round_to(t, uniform_pm1(hash64(s, stream, i)));
    };
    for (size_t i = 0; i < in.input.size(); ++i) in.input[i] = draw(0, i);
    for (size_t i = 0; i < in.filters.size(); ++i) in.filters[i] = draw(1, i);
    if (beta != 0.0f)
      for (size_t i = 0; i < in.z.size(); ++i) in.z[i] = draw(2, i);
    for (size_t j = 0; j < in.bias.size(); ++j) in.bias[j] = uniform_pm1(hash64(s, 3, j));
    return in;
  }
  const IntRanges r = int_ranges(kk_count, alpha, beta, bias);
  in.range = r.ab;
  in.stride = r.stride;
  const int lo = r.ab == 128 ? -128 : -r.ab, hi = std::min(r.ab, 127);
  for (size_t i = 0; i < in.input.size(); ++i)
    in.input[i] = float(int_in(hash64(s, 0, i), lo, hi, false));
  for (size_t i = 0; i < in.filters.size(); ++i) {
    const int64_t n = int64_t(i) / kk_count, kk = int64_t(i) % kk_count;
    in.filters[i] = (kk + n) % r.stride == 0 ? float(int_in(hash64(s, 1, i), lo, hi, false)) : 0.0f;
  }
  if (beta != 0.0f)
    for (size_t i = 0; i < in.z.size(); ++i)
      in.z[i] = float(int_in(hash64(s, 2, i), -r.c0, r.c0, false));
  for (size_t j = 0; j < in.bias.size(); ++j)
    in.bias[j] = float(int_in(hash64(s, 3, j), -r.bias, r.bias, false));
  return in;
}

GemmInputs make_inputs(const compiler::Problem& p, ElemType t, InputMode mode, uint64_t seed,
                       const compiler::Epilogue& epi) {
  const auto [alpha, beta] = drawn_scalars(epi);
  GemmInputs in = make_inputs(p, t, mode, seed, alpha, beta, epi.bias);
  if (epi.requantize) requantize_inputs(in.c0, in.bias, seed);  // an int8 C
  in.scale = channel_scales(epi, p.n, seed);
  return in;
}

ConvInputs make_conv_inputs(const compiler::Conv2d& conv, ElemType t, uint64_t seed,
                            const compiler::Epilogue& epi) {
  const auto [alpha, beta] = drawn_scalars(epi);
  ConvInputs in = make_conv_inputs(conv, t, seed, alpha, beta, epi.bias);
  if (epi.requantize) requantize_inputs(in.z, in.bias, seed);  // an int8 C
  in.scale = channel_scales(epi, conv.k, seed);
  return in;
}

}  // namespace schedc::runtime
