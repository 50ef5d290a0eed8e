// GPU tests of the runtime with hand-written kernels given directly as
// codegen::GeneratedKernel values: a correct naive kernel must pass on
// ragged shapes and padded leading dimensions; planted wrong kernels must be
// caught by GpuSession::run (the API `schedc run` uses, which then exits 1).
// Each test reports SKIPPED where there is no CUDA device.

#include <gtest/gtest.h>

#include <filesystem>

#include "gpu_test_util.h"
#include "runtime/report.h"

namespace schedc {
namespace {

using runtime::RunOptions;
using runtime::RunReport;
using testing::Plant;

RunOptions options(int64_t m, int64_t n, int64_t k, int64_t pad = 0) {
  RunOptions o;
  o.problem = compiler::Problem{m, n, k, pad ? k + pad : 0, pad ? n + pad : 0, pad ? n + pad : 0};
  o.time = false;  // correctness only; timing has its own test
  return o;
}

struct ShapeCase {
  int64_t m, n, k;
};
const ShapeCase kShapes[] = {{1, 1, 1}, {7, 13, 5}, {127, 129, 65}, {1000, 1000, 1000}};

TEST(PlantedGpu, CorrectNaiveKernelPassesOnEveryShape) {
  SCHEDC_REQUIRE_GPU(s);
  for (const char* dtype : {"f32", "f16", "bf16"})
    for (const ShapeCase& c : kShapes)
      for (int pad : {0, 1}) {
        SCOPED_TRACE(std::string(dtype) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) +
                     "x" + std::to_string(c.k) + " pad " + std::to_string(pad));
        RunReport r =
            testing::run_printed(*s, testing::naive_kernel(dtype), options(c.m, c.n, c.k, pad));
        EXPECT_TRUE(r.ok()) << r.failure();
        ASSERT_EQ(r.validations.size(), 2u);
        EXPECT_TRUE(r.validations[0].bit_exact);
        EXPECT_EQ(r.validations[0].rel_err, 0.0);
      }
}

TEST(PlantedGpu, EpilogueAlphaBetaBiasRelu) {
  SCHEDC_REQUIRE_GPU(s);
  for (const char* dtype : {"f32", "f16"}) {
    RunOptions o = options(127, 129, 65, 1);
    o.epilogue.alpha = 2.0f;
    o.epilogue.beta = -1.0f;
    o.epilogue.bias = true;
    EXPECT_TRUE(testing::run_printed(*s, testing::naive_kernel(dtype), o).ok()) << dtype;
    o.epilogue.relu = true;
    EXPECT_TRUE(testing::run_printed(*s, testing::naive_relu_kernel(dtype), o).ok()) << dtype;
    // Non-dyadic alpha: exact mode uses the tolerance instead of bit equality.
    o.epilogue.alpha = 0.1f;
    RunReport r = testing::run_printed(*s, testing::naive_relu_kernel(dtype), o);
    EXPECT_TRUE(r.ok()) << r.failure();
    EXPECT_FALSE(r.validations[0].bit_exact);
    // A kernel without relu fails when relu is asked for.
    EXPECT_FALSE(testing::run_printed(*s, testing::naive_kernel(dtype), o).ok()) << dtype;
  }
}

struct PlantCase {
  Plant plant;
  const char* what;
};

TEST(PlantedGpu, WrongKernelsAreCaught) {
  SCHEDC_REQUIRE_GPU(s);
  const PlantCase cases[] = {{Plant::writes_nothing, "writes nothing"},
                             {Plant::wrong_element, "writes one wrong element"},
                             {Plant::partial, "writes only part of C"},
                             {Plant::reads_c, "reads C although beta == 0"},
                             {Plant::writes_padding, "writes into the ldc padding"},
                             {Plant::skips_last_k, "drops the last k step"}};
  for (const char* dtype : {"f32", "f16"})
    for (const PlantCase& c : cases)
      for (const ShapeCase& shape : {ShapeCase{7, 13, 5}, ShapeCase{127, 129, 65}}) {
        SCOPED_TRACE(std::string(dtype) + ": a kernel that " + c.what);
        RunOptions o = options(shape.m, shape.n, shape.k, 1);
        RunReport r = testing::run_printed(*s, testing::naive_kernel(dtype, c.plant), o);
        EXPECT_FALSE(r.ok());
        EXPECT_FALSE(r.failure().empty());
        EXPECT_FALSE(r.timed);  // a wrong kernel is not timed
      }
}

TEST(PlantedGpu, WrongElementIsNamedInExactMode) {
  SCHEDC_REQUIRE_GPU(s);
  RunReport r = testing::run_printed(*s, testing::naive_kernel("f32", Plant::wrong_element),
                                     options(127, 129, 65));
  ASSERT_FALSE(r.ok());
  const runtime::ValidationResult& exact = r.validations[0];
  EXPECT_EQ(exact.mismatches, 1);
  ASSERT_EQ(exact.first.size(), 1u);
  EXPECT_EQ(exact.first[0].row, 126);
  EXPECT_EQ(exact.first[0].col, 128);
  EXPECT_EQ(exact.first[0].got, exact.first[0].expected + 1.0f);
}

TEST(PlantedGpu, FallbackRunsWhenMainsPreconditionsFail) {
  SCHEDC_REQUIRE_GPU(s);
  // main is a kernel that writes nothing: if the runtime launched it for an
  // unaligned ld, validation would fail.
  codegen::GeneratedKernel k = testing::naive_kernel("f32", Plant::writes_nothing, "main_entry");
  codegen::GeneratedKernel good = testing::naive_kernel("f32", Plant::correct, "fallback_entry");
  k.source += good.source;
  k.main.align_bytes = 16;
  k.main.ld_multiple = 4;
  k.fallback = good.main;
  RunReport r = testing::run_printed(*s, k, options(127, 129, 65, 1));
  EXPECT_TRUE(r.entry.fallback);
  EXPECT_TRUE(r.ok()) << r.failure();
  RunReport aligned = testing::run_printed(*s, k, options(128, 128, 64));
  EXPECT_FALSE(aligned.entry.fallback);
  EXPECT_FALSE(aligned.ok());  // main (the planted empty kernel) ran
}

TEST(PlantedGpu, TimingMeetsTheHarnessMinimums) {
  SCHEDC_REQUIRE_GPU(s);
  RunOptions o = options(512, 512, 512);
  o.time = true;
  RunReport r = testing::run_printed(*s, testing::naive_kernel(), o);
  ASSERT_TRUE(r.ok()) << r.failure();
  ASSERT_TRUE(r.timed);
  EXPECT_GE(r.kernel.runs, 20);
  EXPECT_GE(r.cublas.runs, 20);
  EXPECT_EQ(r.kernel.runs, r.cublas.runs);  // interleaved: one run of each per round
  // 100 ms of each (cuBLAS's ~20 us runs need a few thousand rounds, well within
  // the harness's 10 s wall-clock cap).
  EXPECT_GE(r.kernel.total_ms, 100);
  EXPECT_GE(r.cublas.total_ms, 100);
  EXPECT_LE(r.kernel.min_ms, r.kernel.median_ms);
  EXPECT_LE(r.kernel.median_ms, r.kernel.max_ms);
  EXPECT_GT(r.percent_of_cublas(), 0);
}

TEST(PlantedGpu, SaveWritesNpyFiles) {
  SCHEDC_REQUIRE_GPU(s);
  RunOptions o = options(7, 13, 5);
  o.save_dir = testing::test_cache_dir() + "/save";
  RunReport r = testing::run_printed(*s, testing::naive_kernel(), o);
  ASSERT_TRUE(r.ok());
  for (const char* f : {"A.npy", "B.npy", "C_schedc.npy", "C_cublas.npy", "exact/A.npy"})
    EXPECT_TRUE(std::filesystem::exists(o.save_dir + "/" + f)) << f;
}

}  // namespace
}  // namespace schedc
