// The host side of dtype s8 (issue 21: int8 A and B, int32 C), without a
// GPU: the element types, the inputs' int32 budget and full int8 range,
// the -128 / INT32_MIN padding, the bit-exact int32 comparison (values a
// float cannot tell apart included), the reference's bias, relu and
// wrapping, the integer-scalar check, and the reports of a run without a
// cuBLAS baseline.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "runtime/host_data.h"
#include "runtime/npy.h"
#include "runtime/report.h"
#include "runtime/validate.h"

namespace schedc {
namespace {

using namespace runtime;

constexpr double kInt32Max = 2147483647.0;

TEST(S8Types, InputsAreInt8AndTheOutputIsInt32) {
  EXPECT_EQ(elem_type("s8"), ElemType::s8);
  EXPECT_EQ(output_type("s8"), ElemType::s32);
  EXPECT_EQ(elem_size(ElemType::s8), 1);
  EXPECT_EQ(elem_size(ElemType::s32), 4);
  EXPECT_TRUE(is_integer(ElemType::s8));
  EXPECT_TRUE(is_integer(ElemType::s32));
  // Every other dtype's C is its inputs' type, as before.
  for (const char* d : {"f32", "f16", "bf16"}) {
    EXPECT_EQ(output_type(d), elem_type(d)) << d;
    EXPECT_FALSE(is_integer(elem_type(d))) << d;
  }
  EXPECT_STREQ(to_string(ElemType::s8), "s8");
  EXPECT_STREQ(to_string(ElemType::s32), "s32");
}

TEST(S8Types, EncodingsAndWhatLiesOutsideTheMatrices) {
  const std::vector<float> v = {-128, 127, 0, -1, NAN};
  const std::vector<char> s8 = encode(ElemType::s8, v);
  ASSERT_EQ(s8.size(), 5u);
  EXPECT_EQ(int8_t(s8[0]), -128);
  EXPECT_EQ(int8_t(s8[1]), 127);
  EXPECT_EQ(int8_t(s8[4]), kPaddingS8);  // NaN: ld padding, batch gaps
  EXPECT_EQ(decode(ElemType::s8, s8), (std::vector<float>{-128, 127, 0, -1, -128}));

  const std::vector<char> s32 = encode(ElemType::s32, {1048576, -5, NAN});
  std::vector<int32_t> back;
  decode_s32_into(s32, back);
  EXPECT_EQ(back, (std::vector<int32_t>{1048576, -5, kPoisonS32}));
  decode_s32_into(poison(ElemType::s32, 3), back);
  EXPECT_EQ(back, std::vector<int32_t>(3, kPoisonS32));
  EXPECT_EQ(encode_s32({16777217, -1}), (std::vector<char>{1, 0, 0, 1, -1, -1, -1, -1}));
}

// The largest |partial sum| alpha*A*B + beta*C0 + bias can reach: the sum
// of |alpha A_ik B_kj| over k, for the worst (i, j), plus |beta C0| and |bias|.
double worst_sum(const compiler::Problem& p, const GemmInputs& in, float alpha, float beta) {
  double worst = 0;
  for (int64_t g = 0; g < p.batch; ++g)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < p.k; ++k)
          s += std::fabs(in.a[size_t(g * p.a_stride() + p.a_index(i, k))] *
                         double(in.b[size_t(g * p.b_stride() + p.b_index(k, j))]));
        s *= std::fabs(alpha);
        if (beta != 0) s += std::fabs(beta) * std::fabs(in.c0[size_t(p.c_index(i, j))]);
        if (!in.bias.empty()) s += std::fabs(in.bias[size_t(j)]);
        worst = std::max(worst, s);
      }
  return worst;
}

TEST(S8Inputs, FullInt8RangeWhenKAllowsItNonzeroInExactMode) {
  const compiler::Problem p{16, 24, 4096};
  for (InputMode mode : {InputMode::exact, InputMode::random}) {
    SCOPED_TRACE(to_string(mode));
    GemmInputs in = make_inputs(p, ElemType::s8, mode, 1, 1.0f, 1.0f, true);
    EXPECT_EQ(in.exact_range, 128);  // [-128, 127]
    EXPECT_EQ(in.exact_stride, 1);
    EXPECT_EQ(in.c0_range, 1 << 20);
    EXPECT_EQ(in.bias_range, 1 << 20);
    float lo = 0, hi = 0;
    for (float v : in.a) {
      ASSERT_EQ(v, std::floor(v));
      ASSERT_TRUE(v >= -128 && v <= 127) << v;
      if (mode == InputMode::exact) {
        ASSERT_NE(v, 0);
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_EQ(lo, -128);  // both ends drawn in 64K elements
    EXPECT_EQ(hi, 127);
    EXPECT_LE(worst_sum(p, in, 1.0f, 1.0f), kInt32Max);
  }
}

TEST(S8Inputs, TheInt32BudgetShrinksTheRangeForLargeKAndLargeAlpha) {
  struct Case {
    int64_t k;
    float alpha, beta;
    int range;  // |A|, |B| <= range
  } cases[] = {
      {98304, 1, 0, 128},      // K = 6 * 2^14: the full range still fits
      {200000, 1, 1, 103},     // floor(sqrt((2^31 - 1 - 2^20 - 2^20) / 2e5)) = 103
      {4096, 3, -2, 128},      // alpha 3 at K = 4096: still the full range
      {4096, 100, -2, 72},     // floor(sqrt((2^31 - 1 - 2 * 2^20 - 2^20) / 100 / 4096)) = 72
      {4096, 16777216, 5, 1},  // alpha 2^24: +-1 and a sparse B
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("K=" + std::to_string(c.k) + " alpha=" + std::to_string(c.alpha));
    const compiler::Problem p{2, 3, c.k};
    for (InputMode mode : {InputMode::exact, InputMode::random}) {
      GemmInputs in = make_inputs(p, ElemType::s8, mode, 7, c.alpha, c.beta, true);
      EXPECT_LE(worst_sum(p, in, c.alpha, c.beta), kInt32Max);
      // The bound holds with every value at its extreme, not only for this draw.
      const double extreme = double(in.exact_range) * in.exact_range *
                                 std::ceil(double(c.k) / in.exact_stride) * std::fabs(c.alpha) +
                             std::fabs(c.beta) * in.c0_range + in.bias_range;
      EXPECT_LE(extreme, kInt32Max);
      EXPECT_EQ(in.exact_range, c.range);
      if (c.range == 1) {
        EXPECT_GT(in.exact_stride, 1);
      }
      if (c.range > 1 && c.range < 128) {  // the largest range that fits: one more would not
        const double r1 = c.range + 1;
        EXPECT_GT(r1 * r1 * double(c.k) * std::fabs(c.alpha) + std::fabs(c.beta) * in.c0_range +
                      in.bias_range,
                  kInt32Max);
      }
    }
  }
}

TEST(S8Inputs, PaddingIsMinus128AndCIsPoisonedWithInt32Min) {
  compiler::Problem p{5, 6, 7, 8, 7, 9};  // lda 8, ldb 7, ldc 9: one padding column each
  p.batch = 2;
  p.stride_a = 5 * 8 + 3;  // a gap of 3 between GEMMs
  const GemmInputs in = make_inputs(p, ElemType::s8, InputMode::random, 3, 1, 0, false);
  const std::vector<char> a = encode(ElemType::s8, in.a);
  EXPECT_EQ(int8_t(a[7]), -128);                           // A row 0, column 7: lda padding
  EXPECT_EQ(int8_t(a[5 * 8 + 1]), -128);                   // the gap after GEMM 0's A
  EXPECT_EQ(int8_t(encode(ElemType::s8, in.b)[6]), -128);  // ldb 7 > N 6
  std::vector<int32_t> c;
  decode_s32_into(encode(ElemType::s32, in.c0), c);
  EXPECT_EQ(c, std::vector<int32_t>(size_t(p.c_span()), kPoisonS32));  // beta == 0: all poison
}

// ---- the int32 comparison ----

// A 3x4 C with ldc 6 in a batch of 3 (stride 20: a gap of 2), every value
// above 2^24, where a float's spacing is 2 (and a multiple of 4, so that
// the value + 1 rounds back to it as a float).
struct S32Compare {
  compiler::Problem p = [] {
    compiler::Problem q{3, 4, 5, 0, 0, 6};
    q.batch = 3;
    q.stride_c = 20;
    return q;
  }();
  std::vector<int32_t> expected = std::vector<int32_t>(3 * 3 * 4);
  std::vector<int32_t> got = std::vector<int32_t>(size_t(p.c_span()), kPoisonS32);
  std::vector<char> sent = encode_s32(got);
  S32Compare() {
    for (int g = 0; g < 3; ++g)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
          expected[size_t((g * 3 + i) * 4 + j)] = got[size_t(g * 20 + i * 6 + j)] =
              (1 << 24) + 4 * (100 * g + 10 * i + j);
  }
  int32_t& at(int g, int i, int j) { return got[size_t(g * 20 + i * 6 + j)]; }
  ValidationResult run() {
    return compare_s32(p, InputMode::random, got, encode_s32(got), sent, expected);
  }
};

TEST(S32Compare, ExactMatchPasses) {
  S32Compare c;
  ValidationResult r = c.run();
  EXPECT_TRUE(r.ok) << r.failure;
  EXPECT_TRUE(r.bit_exact);
  EXPECT_TRUE(r.integer);
  EXPECT_EQ(r.checked, 36);
  EXPECT_EQ(r.rel_err, 0);
}

TEST(S32Compare, OffByOneAbove2To24IsCaughtThoughFloatsCannotSeeIt) {
  S32Compare c;
  int32_t& v = c.at(2, 1, 3);
  const int32_t right = v;
  v += 1;
  ASSERT_EQ(float(v), float(right));  // the float path could not tell them apart
  ValidationResult r = c.run();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].batch, 2);  // the wrong GEMM is named
  EXPECT_EQ(r.first[0].row, 1);
  EXPECT_EQ(r.first[0].col, 3);
  EXPECT_EQ(r.first[0].got, double(right) + 1);  // exact in the Mismatch
  EXPECT_EQ(r.first[0].expected, double(right));
  EXPECT_EQ(r.worst.batch, 2);
  EXPECT_NE(r.failure.find("1 of 36 elements differ"), std::string::npos) << r.failure;

  // Reports print the exact integers, and JSON carries them as integers.
  RunReport report;
  report.validations.push_back(r);
  std::ostringstream details;
  print_failure_details(details, report);
  const std::string want =
      "C[2][1,3]: " + std::to_string(right + 1) + " vs " + std::to_string(right);
  EXPECT_NE(details.str().find(want), std::string::npos) << details.str();
  EXPECT_NE(details.str().find("worst element C[2][1,3]: got " + std::to_string(right + 1)),
            std::string::npos)
      << details.str();
  runtime::PreparedKernel prepared;
  prepared.kernel.dtype = "s8";
  const report::Json j = run_json("s8.sched", c.p, prepared, report);
  EXPECT_EQ(j["validations"][0]["first"][0][2], int64_t(right) + 1);
  EXPECT_TRUE(j["validations"][0]["first"][0][2].is_number_integer());
  EXPECT_EQ(j["validations"][0]["worst"]["expected"], int64_t(right));
}

TEST(S32Compare, WritesIntoLdPaddingAndBetweenGemmsAreCaught) {
  S32Compare c;
  c.at(0, 2, 5) = 0;  // GEMM 0, row 2, column 5: ldc padding (N = 4, ldc = 6)
  ValidationResult r = c.run();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.padding_writes, 1);
  EXPECT_EQ(r.mismatches, 0);
  c = S32Compare();
  c.got[size_t(20 + 18)] = 7;  // after GEMM 1's C, before GEMM 2's
  r = c.run();
  EXPECT_EQ(r.padding_writes, 1);
  EXPECT_NE(r.failure.find("between GEMMs"), std::string::npos) << r.failure;
}

TEST(S32Compare, AnUnwrittenElementStillHoldsThePoison) {
  S32Compare c;
  c.at(1, 0, 0) = kPoisonS32;
  ValidationResult r = c.run();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.nan_count, 1);
  EXPECT_NE(r.failure.find("poison INT32_MIN (unwritten)"), std::string::npos) << r.failure;
  EXPECT_EQ(r.first[0].batch, 1);
}

TEST(S32Compare, AllZeroReferenceFails) {
  S32Compare c;
  std::fill(c.expected.begin(), c.expected.end(), 0);
  for (int g = 0; g < 3; ++g)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) c.at(g, i, j) = 0;
  EXPECT_FALSE(c.run().ok);
}

// ---- the reference ----

TEST(S8Reference, BiasReluAndWrappingAsTheKernel) {
  compiler::Problem p{1, 3, 4};
  p.batch = 2;
  const std::vector<int64_t> acc = {5, -7, 2147483647, /* GEMM 1 */ -5, 7, -2147483647};
  const std::vector<float> bias = {1, 1048576, 1};
  // No relu: the int32 sum wraps (two's complement), as the kernel's does.
  EXPECT_EQ(finish_reference_s32(acc, p, bias, false),
            (std::vector<int32_t>{6, 1048569, INT32_MIN, -4, 1048583, -2147483646}));
  // relu on the wrapped int32 value.
  EXPECT_EQ(finish_reference_s32(acc, p, bias, true),
            (std::vector<int32_t>{6, 1048569, 0, 0, 1048583, 0}));
  EXPECT_EQ(finish_reference_s32(acc, p, {}, false),
            (std::vector<int32_t>{5, -7, 2147483647, -5, 7, -2147483647}));
}

TEST(S8Reference, ModeNamesTheReferenceUsed) {
  codegen::GeneratedKernel k;
  k.dtype = "s8";
  k.tensor_cores = true;
  k.mma_type = "s8";
  EXPECT_EQ(reference_mode(k), RefMode::s8);
  k.tensor_cores = false;  // the SIMT s8 kernel validates the same way
  k.mma_type = "";
  EXPECT_EQ(reference_mode(k), RefMode::s8);
  EXPECT_NE(std::string(to_string(RefMode::s8)).find("int8"), std::string::npos);
  EXPECT_NE(std::string(to_string(RefMode::s8_via_f64)).find("f64"), std::string::npos);
}

TEST(S8Scalars, AlphaAndBetaMustBeWholeNumbers) {
  EXPECT_EQ(integer_scalars_error("s8", 1, 0), "");
  EXPECT_EQ(integer_scalars_error("s8", -3, 2), "");
  EXPECT_EQ(integer_scalars_error("s8", 16777216, -16777216), "");
  const std::string half = integer_scalars_error("s8", 0.5f, 0);
  EXPECT_NE(half.find("alpha 0.5 is not a whole number"), std::string::npos) << half;
  EXPECT_NE(integer_scalars_error("s8", 1, 0.1f).find("beta 0.1 "), std::string::npos);
  EXPECT_NE(integer_scalars_error("s8", 33554432, 0), "");  // 2^25: beyond 2^24
  EXPECT_NE(integer_scalars_error("s8", NAN, 0), "");
  EXPECT_EQ(integer_scalars_error("f32", 0.5f, 0.1f), "");  // floats take any scalars
  // A requantizing s8 kernel (an int8 C) takes f32 scalars.
  codegen::GeneratedKernel k;
  k.dtype = "s8";
  EXPECT_NE(integer_scalars_error(k, 0.5f, 0), "");
  k.c_dtype = "s8";
  EXPECT_EQ(integer_scalars_error(k, 0.5f, 0.25f), "");
}

// ---- requantization (`epilogue ... requantize`: an int8 C) ----

TEST(Requantize, ReferenceRoundsToEvenSaturatesAndAddsInF32) {
  compiler::Problem p{1, 6, 1, 0, 0, 0, compiler::DType::s8};
  compiler::Epilogue epi;
  epi.alpha = 0.5f;
  epi.requantize = true;
  // 0.5 x: 2.5 -> 2, 3.5 -> 4 (ties to even), -2.5 -> -2, 1000 -> 127, -1000 -> -128.
  const std::vector<int64_t> acc = {5, 7, -5, 2000, -2000, 1};  // the exact sums
  EXPECT_EQ(requantize_reference(acc, p, {}, {}, {}, epi),
            (std::vector<int32_t>{2, 4, -2, 127, -128, 0}));  // 0.5 -> 0
  epi.relu = true;
  EXPECT_EQ(requantize_reference(acc, p, {}, {}, {}, epi),
            (std::vector<int32_t>{2, 4, 0, 127, 0, 0}));
  // beta·z and the bias per column, then relu.
  epi.relu = false;
  epi.beta = 2.0f;
  epi.bias = true;
  const std::vector<float> z = {1, -1, 3, 0, 0, -128};
  const std::vector<float> bias = {0.25f, 0, 0, 0, 0, 100};
  EXPECT_EQ(requantize_reference(acc, p, z, bias, {}, epi),
            (std::vector<int32_t>{5, 2, 4, 127, -128, -128}));  // 2.5 + 2 + 0.25 = 4.75 -> 5
  // f32 step by step: 16777217 is not an f32 (rounds to 16777216), and
  // alpha·acc is rounded before the bias is added.
  compiler::Problem one{1, 1, 1, 0, 0, 0, compiler::DType::s8};
  compiler::Epilogue big;
  big.alpha = 1.0f / 131072;  // 2^-17
  big.bias = true;
  EXPECT_EQ(requantize_reference({16777217}, one, {}, {0.5f}, {}, big),
            std::vector<int32_t>{127});  // 128 + 0.5 -> 127 after saturation
  big.alpha = 1.0f / 1048576;            // 16777216 / 2^20 = 16, + 0.5 = 16.5 -> 16 (even)
  EXPECT_EQ(requantize_reference({16777217}, one, {}, {0.5f}, {}, big), std::vector<int32_t>{16});
}

TEST(Requantize, PerChannelScaleMultipliesAlphaFirstThenTheSum) {
  compiler::Problem p{2, 3, 1, 0, 0, 0, compiler::DType::s8};
  compiler::Epilogue epi;
  epi.alpha = 0.5f;
  epi.requantize = true;
  epi.scale = true;
  // Column n's scale is alpha·scale[n]: 0.25, 1, 3 here.
  const std::vector<float> scale = {0.5f, 2.0f, 6.0f};
  const std::vector<int64_t> acc = {10, 10, 10, -6, 5, 100};
  EXPECT_EQ(requantize_reference(acc, p, {}, {}, scale, epi),
            (std::vector<int32_t>{2, 10, 30, -2, 5, 127}));  // 2.5 -> 2, -1.5 -> -2 (even)
  // Without `scale` the vector is not read: alpha alone.
  epi.scale = false;
  EXPECT_EQ(requantize_reference(acc, p, {}, {}, {}, epi),
            (std::vector<int32_t>{5, 5, 5, -3, 2, 50}));
  // The order is (alpha·scale[n])·acc, as the kernel's: with alpha 0.1f,
  // scale 36/64 and acc 1040 it gives 58.5000038 -> 59, where
  // alpha·(scale·acc) would give 58.5 -> 58 (ties to even).
  epi.scale = true;
  epi.alpha = 0.1f;
  EXPECT_EQ(requantize_reference({1040}, compiler::Problem{1, 1, 1, 0, 0, 0, compiler::DType::s8},
                                 {}, {}, {36.0f / 64}, epi),
            std::vector<int32_t>{59});
}

TEST(Requantize, ChannelScalesAreSmallDyadicAndDeterministic) {
  compiler::Epilogue epi;
  EXPECT_TRUE(channel_scales(epi, 8, 1).empty());  // no `scale`: none drawn
  epi.scale = true;
  const std::vector<float> s = channel_scales(epi, 300, 7);
  ASSERT_EQ(s.size(), 300u);
  float lo = 2, hi = 0;
  for (float x : s) {
    EXPECT_EQ(x * 64, std::nearbyint(x * 64));  // exact in f32, a product with alpha rounds once
    lo = std::min(lo, x), hi = std::max(hi, x);
  }
  EXPECT_GE(lo, 0.5f);
  EXPECT_LE(hi, 2.0f);
  EXPECT_LT(lo, 0.6f);  // they spread over the range
  EXPECT_GT(hi, 1.9f);
  EXPECT_EQ(s, channel_scales(epi, 300, 7));
  EXPECT_NE(s, channel_scales(epi, 300, 8));
}

TEST(Requantize, InputsMakeZInt8AndTheBiasSmall) {
  std::vector<float> z = {NAN, 1e6f, -3e5f, 7}, bias(40, 1e5f);
  requantize_inputs(z, bias, 3);
  EXPECT_TRUE(std::isnan(z[0]));  // the poison stays
  for (size_t i = 1; i < z.size(); ++i) {
    EXPECT_GE(z[i], -128);
    EXPECT_LE(z[i], 127);
    EXPECT_EQ(z[i], std::nearbyint(z[i]));
  }
  for (float b : bias) {
    EXPECT_LE(std::fabs(b), 32.0f);
    EXPECT_EQ(b * 8, std::nearbyint(b * 8));
  }
  std::vector<float> z2 = {NAN, 1e6f, -3e5f, 7}, bias2(40, 1e5f);
  requantize_inputs(z2, bias2, 3);
  EXPECT_EQ(bias, bias2);  // deterministic in the seed
  std::vector<int32_t> got;
  decode_s8_into({char(0x80), char(0x7f), char(0xff), 0}, got);
  EXPECT_EQ(got, (std::vector<int32_t>{-128, 127, -1, 0}));
  EXPECT_EQ(output_type("s8", "s8"), ElemType::s8);
  EXPECT_EQ(output_type("s8", ""), ElemType::s32);
}

// ---- reports ----

RunReport timed_without_baseline() {
  RunReport r;
  r.ref_mode = RefMode::s8;
  ValidationResult v;
  v.ok = true;
  v.integer = v.bit_exact = true;
  r.validations = {v, v};
  r.timed = true;
  r.kernel.median_ms = 1.0;
  r.kernel.runs = 20;
  r.no_baseline =
      "cuBLAS int8 rejects this problem: cublasGemmEx failed: CUBLAS_STATUS_NOT_SUPPORTED";
  return r;
}

TEST(S8Report, RateInTopsAndNoRatioWithoutABaseline) {
  const compiler::Problem p{1024, 1024, 1024};
  RunReport r = timed_without_baseline();
  EXPECT_FALSE(r.has_baseline());
  EXPECT_TRUE(std::isnan(r.percent_of_cublas()));
  const std::string line = run_line("s8.sched", p, "s8", r);
  EXPECT_NE(line.find("ok (rel err 0.0e+00 vs cuBLAS)"), std::string::npos) << line;
  EXPECT_NE(line.find("2.1 TOPS"), std::string::npos) << line;
  EXPECT_NE(line.find("no cuBLAS baseline (cuBLAS int8 rejects this problem"), std::string::npos)
      << line;
  EXPECT_EQ(line.find("% of cuBLAS"), std::string::npos) << line;

  runtime::PreparedKernel prepared;
  prepared.kernel.dtype = "s8";
  const report::Json j = run_json("s8.sched", p, prepared, r);
  EXPECT_EQ(j["dtype"], "s8");
  EXPECT_EQ(j["reference"], "cuBLAS int8 in, int32 accumulate");
  EXPECT_EQ(j["time_ms"]["median"], 1.0);
  EXPECT_TRUE(j["cublas_ms"].is_null());
  EXPECT_TRUE(j["cublas_tflops"].is_null());
  EXPECT_TRUE(j["percent_of_cublas"].is_null());
  EXPECT_EQ(j["no_baseline"], r.no_baseline);

  // With a baseline: the ratio, and the f64 fallback named.
  r.no_baseline.clear();
  r.cublas.median_ms = 0.5;
  r.ref_mode = RefMode::s8_via_f64;
  const std::string with = run_line("s8.sched", p, "s8", r);
  EXPECT_NE(with.find("vs cuBLAS f64)"), std::string::npos) << with;
  EXPECT_NE(with.find("50.0% of cuBLAS"), std::string::npos) << with;
  EXPECT_NE(run_line("f.sched", p, "f32", r).find("TFLOP/s"), std::string::npos);
}

TEST(S8Report, Int32NpyIsExact) {
  const std::vector<int32_t> c = {16777217, -1, 99, /* ld padding */ 0};
  const std::string bytes = npy_bytes(c, 1, 3, 4);
  EXPECT_NE(bytes.find("'descr': '<i4'"), std::string::npos);
  ASSERT_EQ(bytes.size() % 64, 12u);  // header to 64 bytes, then 3 values
  int32_t first;
  std::memcpy(&first, bytes.data() + bytes.size() - 12, 4);
  EXPECT_EQ(first, 16777217);
}

}  // namespace
}  // namespace schedc
