// GPU tests of a strided batch (issue 18) with hand-written kernels of the
// batched ABI (codegen/generated_kernel.h: the three strides after bias,
// GEMM blockIdx.z): a correct one passes with packed strides and with gaps;
// a wrong element in GEMM 2 is reported as GEMM 2; a write between GEMMs is
// a padding write; a batch is refused for a kernel without `batch`. SKIPPED
// without a device (the kernels' compile is checked here all the same).

#include <gtest/gtest.h>

#include "gpu_test_util.h"
#include "runtime/error.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/report.h"

namespace schedc {
namespace {

using runtime::RunOptions;
using runtime::RunReport;

enum class BatchPlant { correct, wrong_in_gemm_2, writes_between_gemms };

// The naive planted kernel, batched: it takes the strides and computes GEMM
// blockIdx.z, doing what `plant` says.
codegen::GeneratedKernel batched_kernel(BatchPlant plant) {
  codegen::GeneratedKernel k =
      testing::naive_kernel("f32", testing::Plant::correct, "planted_batched_gemm");
  const std::string params = "const float* bias) {\n";
  k.source.replace(k.source.find(params), params.size(),
                   "const float* bias, long long stride_a, long long stride_b, long long "
                   "stride_c, int batch_count) {\n"
                   "  A += blockIdx.z * stride_a;\n"
                   "  B += blockIdx.z * stride_b;\n"
                   "  C += blockIdx.z * stride_c;\n");
  const std::string store = "  C[(size_t)m * ldc + n] =";
  if (plant == BatchPlant::wrong_in_gemm_2)
    k.source.insert(k.source.find(store),
                    "  if (blockIdx.z == 2 && m == 1 && n == 2) v += 1.0f;\n");
  if (plant == BatchPlant::writes_between_gemms)  // the first element past GEMM 0's C
    k.source.insert(k.source.find(store),
                    "  if (blockIdx.z == 0 && m == M - 1 && n == N - 1) C[(size_t)M * ldc] = v;\n");
  k.batched = true;
  return k;
}

// 127x129x65, ld + 1, a batch of 3; with `gap`, each operand's GEMMs that
// many elements further apart than packed.
RunOptions options(int64_t gap) {
  RunOptions o;
  o.problem = compiler::Problem{127, 129, 65, 66, 130, 130};
  o.problem.batch = 3;
  if (gap) {
    o.problem.stride_a = 127 * 66 + gap;
    o.problem.stride_b = 65 * 130 + gap;
    o.problem.stride_c = 127 * 130 + gap;
  }
  o.time = false;
  return o;
}

// The planted kernels are valid CUDA (NVRTC needs no GPU), so the GPU
// tests below fail only for what they test.
TEST(BatchPlanted, KernelsCompileWithoutAGpu) {
  for (BatchPlant plant :
       {BatchPlant::correct, BatchPlant::wrong_in_gemm_2, BatchPlant::writes_between_gemms}) {
    const codegen::GeneratedKernel k = batched_kernel(plant);
    try {
      runtime::CubinResult r = runtime::compile_to_cubin(k, "sm_90");
      EXPECT_EQ(r.functions.count(k.main.name), 1u) << r.log;
    } catch (const runtime::Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(BatchGpu, CorrectBatchedKernelPassesPackedAndWithGaps) {
  SCHEDC_REQUIRE_GPU(s);
  for (int64_t gap : {0, 7}) {
    RunOptions o = options(gap);
    o.time = gap != 0;  // cublasGemmStridedBatchedEx timed beside it once
    RunReport r = testing::run_printed(*s, batched_kernel(BatchPlant::correct), o);
    EXPECT_TRUE(r.ok()) << r.failure();
    ASSERT_EQ(r.validations.size(), 2u);
    EXPECT_TRUE(r.validations[0].bit_exact);
    EXPECT_EQ(r.validations[0].checked, 3 * 127 * 129);
    EXPECT_EQ(r.timed, gap != 0);
  }
}

TEST(BatchGpu, AWrongElementInGemmTwoIsReportedThere) {
  SCHEDC_REQUIRE_GPU(s);
  RunReport r = testing::run_printed(*s, batched_kernel(BatchPlant::wrong_in_gemm_2), options(7));
  ASSERT_FALSE(r.ok());
  ASSERT_FALSE(r.validations[0].first.empty());
  EXPECT_EQ(r.validations[0].first[0].batch, 2);
  EXPECT_EQ(r.validations[0].first[0].row, 1);
  EXPECT_EQ(r.validations[0].first[0].col, 2);
}

TEST(BatchGpu, AWriteBetweenGemmsIsCaught) {
  SCHEDC_REQUIRE_GPU(s);
  RunReport r =
      testing::run_printed(*s, batched_kernel(BatchPlant::writes_between_gemms), options(7));
  ASSERT_FALSE(r.ok());
  EXPECT_GT(r.validations[0].padding_writes, 0);
  EXPECT_NE(r.failure().find("between GEMMs"), std::string::npos) << r.failure();
}

TEST(BatchGpu, ABatchOfAnUnbatchedKernelIsAnError) {
  SCHEDC_REQUIRE_GPU(s);
  try {
    testing::run_printed(*s, testing::naive_kernel(), options(0));
    ADD_FAILURE() << "no error";
  } catch (const runtime::Error& e) {
    EXPECT_NE(std::string(e.what()).find("its schedule has no 'batch' directive"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace schedc
