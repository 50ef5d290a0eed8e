// The host side of a strided batch (issue 18), without a GPU: inputs at
// their strides with NaN gaps, the comparison naming the GEMM of a mismatch
// and counting writes between GEMMs, the reference's bias and relu per GEMM,
// the limits every front end checks (runtime/batch.h), the reports and the
// 3-D .npy files.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>

#include "runtime/batch.h"
#include "runtime/host_data.h"
#include "runtime/npy.h"
#include "runtime/report.h"
#include "runtime/validate.h"

namespace schedc {
namespace {

using namespace runtime;

// 5x6x7 with lda 8, ldb 7, ldc 9, a batch of 3 whose strides leave gaps.
compiler::Problem gapped_batch() {
  compiler::Problem p{5, 6, 7, 8, 7, 9};
  p.batch = 3;
  p.stride_a = 5 * 8 + 3;
  p.stride_b = 7 * 7 + 1;
  p.stride_c = 5 * 9 + 4;
  return p;
}

TEST(BatchInputs, EveryGemmAtItsStrideWithNaNAroundAndGemmZeroUnbatched) {
  const compiler::Problem p = gapped_batch();
  compiler::Problem one = p;
  one.batch = 1;
  for (InputMode mode : {InputMode::exact, InputMode::random}) {
    SCOPED_TRACE(to_string(mode));
    GemmInputs in = make_inputs(p, ElemType::f32, mode, 3, 1, 1, true);
    GemmInputs single = make_inputs(one, ElemType::f32, mode, 3, 1, 1, true);
    ASSERT_EQ(in.a.size(), size_t(p.a_span()));
    ASSERT_EQ(in.b.size(), size_t(p.b_span()));
    ASSERT_EQ(in.c0.size(), size_t(p.c_span()));
    EXPECT_EQ(in.a.size(), size_t(2 * 43 + 40));
    // GEMM 0 is the unbatched problem's; the bias and the exact budget too.
    EXPECT_EQ(std::memcmp(in.a.data(), single.a.data(), 5 * 8 * 4), 0);
    EXPECT_EQ(in.bias, single.bias);
    EXPECT_EQ(in.exact_range, single.exact_range);
    EXPECT_EQ(in.exact_stride, single.exact_stride);
    for (int64_t g = 0; g < p.batch; ++g) {
      const float* a = in.a.data() + g * p.a_stride();
      const float* c0 = in.c0.data() + g * p.c_stride();
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t k = 0; k < p.k; ++k) ASSERT_FALSE(std::isnan(a[p.a_index(i, k)])) << g;
      EXPECT_TRUE(std::isnan(a[7])) << g;    // lda padding of row 0
      EXPECT_TRUE(std::isnan(c0[6])) << g;   // ldc padding of row 0
      EXPECT_FALSE(std::isnan(c0[0])) << g;  // beta != 0: C0 there
      if (g + 1 < p.batch) {                 // the gaps between GEMMs
        for (int64_t e = 40; e < p.a_stride(); ++e) EXPECT_TRUE(std::isnan(a[e])) << g << " " << e;
        for (int64_t e = 45; e < p.c_stride(); ++e) EXPECT_TRUE(std::isnan(c0[e])) << g << " " << e;
      }
    }
    // Each GEMM draws its own values.
    int same = 0;
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t k = 0; k < p.k; ++k)
        same += in.a[size_t(p.a_index(i, k))] == in.a[size_t(2 * p.a_stride() + p.a_index(i, k))];
    EXPECT_LT(same, mode == InputMode::exact ? 25 : 2);
  }
}

// The reference of a batch, packed (batch x m x n), against C at its strides.
struct BatchCompare {
  compiler::Problem p = gapped_batch();
  std::vector<float> expected = std::vector<float>(size_t(3 * 5 * 6));
  std::vector<float> got = std::vector<float>(size_t(gapped_batch().c_span()), NAN);
  std::vector<char> sent = encode(ElemType::f32, got);
  BatchCompare() {
    for (int64_t g = 0; g < 3; ++g)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 6; ++j)
          expected[size_t((g * 5 + i) * 6 + j)] = got[size_t(g * p.c_stride() + i * 9 + j)] =
              float(10 * g + i - j);
  }
  ValidationResult run() {
    const Tolerance tol = random_tolerance(RefMode::f32_pedantic, ElemType::f32, p.k);
    return compare(p, InputMode::exact, ElemType::f32, got, encode(ElemType::f32, got), sent,
                   expected, true, tol);
  }
};

TEST(BatchCompare, EveryGemmRightPasses) {
  BatchCompare c;
  ValidationResult r = c.run();
  EXPECT_TRUE(r.ok) << r.failure;
  EXPECT_EQ(r.checked, 3 * 5 * 6);
  EXPECT_EQ(r.batch, 3);
  EXPECT_EQ(r.padding_writes, 0);
}

TEST(BatchCompare, AWrongValueInGemmTwoIsReportedAsGemmTwo) {
  BatchCompare c;
  c.got[size_t(2 * c.p.c_stride() + 4 * 9 + 1)] += 1;  // C[2][4,1]
  ValidationResult r = c.run();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].batch, 2);
  EXPECT_EQ(r.first[0].row, 4);
  EXPECT_EQ(r.first[0].col, 1);
  EXPECT_EQ(r.worst.batch, 2);
  EXPECT_EQ(r.worst.row, 4);
  RunReport report;
  report.validations.push_back(r);
  std::ostringstream details;
  print_failure_details(details, report);
  EXPECT_NE(details.str().find("worst element C[2][4,1]: got"), std::string::npos) << details.str();
  EXPECT_NE(details.str().find("C[2][4,1]: 24 vs 23"), std::string::npos) << details.str();
}

TEST(BatchCompare, AWriteBetweenGemmsIsAPaddingWrite) {
  BatchCompare c;
  c.got[size_t(c.p.c_stride() + 5 * 9 + 2)] = 1.0f;  // after GEMM 1's C, before GEMM 2's
  ValidationResult r = c.run();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.padding_writes, 1);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_NE(r.failure.find("between GEMMs"), std::string::npos) << r.failure;
  c = BatchCompare();
  c.got[size_t(2 * c.p.c_stride() + 3 * 9 + 7)] = 1.0f;  // GEMM 2's ldc padding
  EXPECT_EQ(c.run().padding_writes, 1);
}

TEST(BatchCompare, AnUnwrittenGemmIsNaN) {
  BatchCompare c;
  for (int64_t e = 0; e < 45; ++e) c.got[size_t(c.p.c_stride() + e)] = NAN;  // GEMM 1
  ValidationResult r = c.run();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.nan_count, 30);
  EXPECT_EQ(r.first[0].batch, 1);
}

TEST(BatchReference, BiasAndReluApplyToEveryGemm) {
  compiler::Problem p{2, 3, 4};
  p.batch = 2;
  const std::vector<float> ref32 = {1, -2, 3, -4, 5, -6, /* GEMM 1 */ -1, 2, -3, 4, -5, 6};
  const std::vector<float> bias = {10, 0, -10};
  std::vector<float> r = finish_reference(ref32, p, bias, true, ElemType::f32);
  EXPECT_EQ(r, (std::vector<float>{11, 0, 0, 6, 5, 0, 9, 2, 0, 14, 0, 0}));
}

TEST(BatchLimits, OverlapRangeAndSpanAreRefusedPackedAndGapsAreNot) {
  const char* const names[3] = {"stride_a", "stride_b", "stride_c"};
  compiler::Problem p = gapped_batch();
  EXPECT_EQ(batch_error(p, names), "");
  p.stride_a = p.stride_b = p.stride_c = 0;  // packed
  EXPECT_EQ(batch_error(p, names), "");
  p.stride_b = 7 * 7 - 1;
  EXPECT_EQ(batch_error(p, names),
            "stride_b 48 is less than one B (7 rows x ldb 7 = 49 elements): the GEMMs of a "
            "batch may not overlap");
  p.stride_b = 0;
  p.batch = 0;
  EXPECT_NE(batch_error(p, names).find("out of range (1 to 65535"), std::string::npos);
  p.batch = kMaxBatch + 1;
  EXPECT_NE(batch_error(p, names), "");
  p.batch = kMaxBatch;
  p.stride_c = int64_t(1) << 40;
  EXPECT_NE(batch_error(p, names).find("more than 2^46 elements"), std::string::npos);
  // One GEMM: its stride is never used, but a stride below a matrix is
  // still refused (as given, it says something false).
  p = compiler::Problem{5, 6, 7};
  EXPECT_EQ(batch_error(p, names), "");
  p.stride_a = -1;
  EXPECT_NE(batch_error(p, names), "");
}

TEST(BatchReports, ShapeJsonAndNpyCarryTheBatch) {
  compiler::Problem p = gapped_batch();
  EXPECT_EQ(shape_string(p), "5x6x7 batch 3 (strides A 43, B 50, C 49)");
  p.stride_a = p.stride_b = p.stride_c = 0;
  EXPECT_EQ(shape_string(p), "5x6x7 batch 3");
  EXPECT_EQ(strides_string(p), "strides A 40, B 49, C 45");
  p.batch = 1;
  EXPECT_EQ(shape_string(p), "5x6x7");
  EXPECT_DOUBLE_EQ(tflops(gapped_batch(), 1.0), 3 * 2.0 * 5 * 6 * 7 / 1e9);

  BatchCompare c;
  c.got[size_t(2 * c.p.c_stride() + 4 * 9 + 1)] += 1;
  RunReport r;
  r.validations.push_back(c.run());
  PreparedKernel prepared;
  prepared.kernel.dtype = "f32";
  report::Json j = run_json("b.sched", c.p, prepared, r);
  EXPECT_EQ(j["batch"], 3);
  EXPECT_EQ(j["stride_a"], 43);
  EXPECT_EQ(j["stride_b"], 50);
  EXPECT_EQ(j["stride_c"], 49);
  EXPECT_EQ(j["validations"][0]["worst"]["batch"], 2);
  EXPECT_EQ(j["validations"][0]["first"][0].size(), 5u);
  EXPECT_EQ(j["validations"][0]["first"][0][4], 2);  // the GEMM, after row, col, got, expected
  report::Json one = run_json("b.sched", compiler::Problem{5, 6, 7}, prepared, RunReport{});
  EXPECT_FALSE(one.contains("batch"));

  // Two 2x3 matrices, ld 4, stride 10: one 2 x 2 x 3 array.
  std::vector<float> m(20, NAN);
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) m[size_t(g * 10 + i * 4 + j)] = float(g * 100 + i * 10 + j);
  const std::string bytes = npy_bytes(m, 2, 3, 4, 2, 10);
  EXPECT_NE(bytes.find("'shape': (2, 2, 3)"), std::string::npos);
  ASSERT_EQ((bytes.size() - 12 * 4) % 64, 0u);  // the header, then 12 floats
  float last;
  std::memcpy(&last, bytes.data() + bytes.size() - 4, 4);
  EXPECT_EQ(last, 112.0f);
}

}  // namespace
}  // namespace schedc
