// Convolution modules on the GPU (issue 21; runtime/conv_run.h), SKIPPED
// without a device:
//  - a hand-written naive convolution kernel with the conv ABI (planted):
//    correct on ragged convolutions in f16, bf16 and s8 (s8 bit for bit),
//    with alpha, beta (z) and bias; wrong ones (a tap dropped, padding read
//    as the border, nothing written) fail; the three timings; the refusals;
//  - every schedule under examples/conv/ and tests/gpu/schedules/conv_*.sched
//    (found by glob: a GPU run fails when there are none) on ResNet-50's
//    layers at batch 1 and 8 (two at 32) and on ragged convolutions, each
//    validated (s8 bit-exact against im2col + cuBLAS int8), and, where the
//    kernel can read A by TMA's im2col mode, on ragged convolutions that
//    mode takes, through it and through the producer's copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "cli/pipeline.h"
#include "gpu_test_util.h"
#include "runtime/conv_layers.h"
#include "runtime/conv_report.h"
#include "runtime/conv_run.h"
#include "runtime/error.h"
#include "runtime/host_data.h"
#include "runtime/im2col.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/report.h"

namespace schedc {
namespace {

namespace fs = std::filesystem;

using runtime::conv2d;  // (n, h, w, c, k, r, s[, stride, pad, dilation])

// Ragged convolutions for channels of `cmin` elements a 16-byte chunk (16
// for int8, 8 for f16): H and W odd, one chunk of channels, K (filters) not
// a multiple of any tile, 1x1 at stride 2, dilation 2, padding past 1 and
// past the filter's reach, a rectangular filter with per-axis stride and
// pad, a single output channel, 1x1 images.
std::vector<compiler::Conv2d> ragged_convs(int64_t cmin, compiler::ConvLayout layout) {
  // NCHW32: C the smallest multiple the layout allows (32), K rounded up to 32.
  const bool nchw32 = layout == compiler::ConvLayout::nchw32;
  if (nchw32) cmin = 32;
  compiler::Conv2d rect = conv2d(2, 6, 10, 2 * cmin, 33, 1, 3);
  rect.stride_w = 2, rect.pad_w = 1;
  std::vector<compiler::Conv2d> convs = {conv2d(3, 7, 9, cmin, 40, 3, 3, 1, 1),
                                         conv2d(2, 13, 11, 2 * cmin, 24, 1, 1, 2, 0),
                                         conv2d(1, 15, 17, cmin, 40, 3, 3, 1, 2, 2),
                                         conv2d(2, 9, 7, 3 * cmin, 72, 5, 5, 2, 3),
                                         conv2d(1, 5, 5, cmin, 8, 7, 7, 1, 4),
                                         conv2d(4, 1, 1, 4 * cmin, 40, 1, 1),
                                         conv2d(1, 1, 1, cmin, 1, 1, 1),
                                         rect,
                                         conv2d(1, 31, 33, cmin, 40, 3, 3, 2, 1)};
  for (compiler::Conv2d& v : convs) {
    v.layout = layout;
    if (nchw32) v.k = (v.k + 31) / 32 * 32;
  }
  return convs;
}

// Ragged convolutions that the Hopper NHWC kernel's A can take by TMA's
// im2col mode (compiler/conv_im2col.h): C a multiple of a 128-byte k-tile
// (`cbk` channels: 128 of int8, 64 of f16; three of them: a k-tile of two
// panels across two taps) or of half of one only (two
// copies a k-tile: a k-tile across two taps, K ending mid-k-tile, 1x1 with
// C = 1.5 k-tiles), H and W odd, strides 2 and 3,
// dilation 2, padding past the filter's reach, 1x1 images, a rectangular
// filter, and one whose axes differ in stride, padding and dilation (the
// map's corners and strides per axis).
std::vector<compiler::Conv2d> im2col_convs(int64_t cbk) {
  compiler::Conv2d rect = conv2d(2, 6, 10, cbk, 33, 1, 3);
  rect.stride_w = 2, rect.pad_w = 1;
  compiler::Conv2d skew = conv2d(2, 11, 8, cbk, 40, 3, 5, 1, 1);
  skew.stride_h = 2, skew.pad_w = 2, skew.dil_w = 2;
  return {conv2d(3, 7, 9, cbk, 40, 3, 3, 1, 1),
          conv2d(2, 13, 11, 2 * cbk, 24, 1, 1, 2, 0),
          conv2d(1, 15, 17, cbk, 40, 3, 3, 1, 2, 2),
          conv2d(2, 9, 7, cbk, 72, 5, 5, 2, 3),
          conv2d(1, 5, 5, cbk, 8, 7, 7, 1, 4),
          conv2d(4, 1, 1, cbk, 40, 1, 1),
          conv2d(2, 20, 19, cbk, 16, 3, 3, 3, 1),
          rect,
          skew,
          conv2d(1, 31, 33, cbk, 40, 3, 3, 2, 1),
          conv2d(2, 9, 7, 3 * cbk, 40, 3, 3, 1, 1),
          conv2d(3, 7, 9, cbk / 2, 40, 3, 3, 1, 1),
          conv2d(2, 13, 11, 3 * cbk / 2, 24, 1, 1, 2, 0),
          conv2d(1, 15, 17, 3 * cbk / 2, 40, 3, 3, 1, 2, 2),
          conv2d(2, 9, 7, cbk / 2, 72, 5, 5, 2, 3)};
}

// Sets an environment variable for a scope (SCHEDC_CONV_IM2COL=0: the
// producer's copies where TMA's im2col mode would load A).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// What a planted convolution kernel does wrong (or nothing).
enum class ConvPlant { correct, skips_last_tap, clamps_padding, writes_nothing };

// A naive implicit-GEMM convolution (one thread per output element, 16x16
// blocks) with the conv ABI (codegen/generated_kernel.h): reads the input
// through ConvArgs' taps, the filters as the column-major B.
codegen::GeneratedKernel naive_conv_kernel(const std::string& dtype, ConvPlant plant) {
  const bool s8 = dtype == "s8";
  const std::string T = s8 ? "signed char" : dtype == "f16" ? "__half" : "__nv_bfloat16";
  const std::string Tc = s8 ? "int" : T;
  const std::string load = s8 ? "int" : dtype == "f16" ? "__half2float" : "__bfloat162float";
  const std::string store = s8 ? "" : dtype == "f16" ? "__float2half_rn" : "__float2bfloat16_rn";
  std::string src;
  if (dtype == "f16") src += "#include <cuda_fp16.h>\n";
  if (dtype == "bf16") src += "#include <cuda_bf16.h>\n";
  src += R"(struct ConvTapArg { int offset; short dh, dw; };
struct ConvArgs {
  int n, h, w, c, p, q, stride_h, stride_w, pad_h, pad_w, taps, im2col;
  ConvTapArg tap[256];
};
)";
  src += "extern \"C\" __global__ void planted_conv(int M, int N, int K, const " + T +
         "* A, int lda, const " + T + "* B, int ldb, " + Tc +
         "* C, int ldc, float alpha, float beta, const float* bias, const __grid_constant__ "
         "ConvArgs conv) {\n"
         "  const int m = blockIdx.y * 16 + threadIdx.y, n = blockIdx.x * 16 + threadIdx.x;\n"
         "  if (m >= M || n >= N) return;\n";
  if (plant == ConvPlant::writes_nothing) src += "  return;\n";
  src += std::string(
             "  const int ow = m % conv.q, oh = m / conv.q % conv.p, img = m / (conv.p * conv.q);\n"
             "  const int h0 = oh * conv.stride_h - conv.pad_h, w0 = ow * conv.stride_w - "
             "conv.pad_w;\n"
             "  const long long origin = ((long long)(img * conv.h + h0) * conv.w + w0) * "
             "conv.c;\n  ") +
         (s8 ? "int" : "float") + " acc = 0;\n" + "  for (int t = 0; t < conv.taps" +
         (plant == ConvPlant::skips_last_tap ? " - 1" : "") +
         "; ++t) {\n"
         "    int ih = h0 + conv.tap[t].dh, iw = w0 + conv.tap[t].dw;\n"
         "    long long at = origin + conv.tap[t].offset;\n";
  if (plant == ConvPlant::clamps_padding)
    src +=
        "    ih = min(max(ih, 0), conv.h - 1), iw = min(max(iw, 0), conv.w - 1);\n"
        "    at = ((long long)(img * conv.h + ih) * conv.w + iw) * conv.c;\n";
  else
    src += "    if (ih < 0 || ih >= conv.h || iw < 0 || iw >= conv.w) continue;\n";
  src += "    const " + T + "* a = A + at;\n    const " + T +
         "* b = B + (long long)n * ldb + (long long)t * conv.c;\n"
         "    for (int c = 0; c < conv.c; ++c) acc += " +
         load + "(a[c]) * " + load + "(b[c]);\n  }\n";
  if (s8)
    src +=
        "  int v = int(alpha) * acc;\n"
        "  if (beta != 0.0f) v += int(beta) * C[(long long)m * ldc + n];\n"
        "  if (bias) v += __float2int_rn(bias[n]);\n"
        "  C[(long long)m * ldc + n] = v;\n}\n";
  else
    src += "  float v = alpha * acc;\n  if (beta != 0.0f) v += beta * " + load +
           "(C[(long long)m * ldc + n]);\n  if (bias) v += bias[n];\n"
           "  C[(long long)m * ldc + n] = " +
           store + "(v);\n}\n";
  codegen::GeneratedKernel k;
  k.source = src;
  k.dtype = dtype;
  k.needs_cuda_headers = !s8;
  k.min_sm = 80;
  k.conv = "nhwc";
  k.b_col = true;
  k.main.name = "planted_conv";
  k.main.block = {16, 16, 1};
  k.main.tile_m = 16;
  k.main.tile_n = 16;
  return k;
}

int64_t chunk_channels(const std::string& dtype) {
  return 16 / runtime::elem_size(runtime::elem_type(dtype));
}

// Runs `v` validated (not timed), prints its block; the report.
runtime::ConvReport run_validated(runtime::GpuSession* s, const runtime::PreparedKernel& prepared,
                                  const std::string& label, const compiler::Conv2d& v,
                                  const compiler::Epilogue& epi) {
  runtime::ConvRunOptions o;
  o.conv = v;
  o.epilogue = epi;
  o.time = false;
  o.jit = testing::test_jit();
  runtime::ConvReport r = s->run_conv(prepared, o);
  runtime::print_conv_block(std::cout, label, prepared.kernel.dtype, r);
  return r;
}

void expect_ok(const runtime::ConvReport& r, const std::string& dtype, const std::string& what) {
  std::ostringstream details;
  runtime::print_failure_details(details, r);
  EXPECT_TRUE(r.ok()) << what << " " << runtime::conv_title(r.conv) << "\n" << details.str();
  EXPECT_TRUE(r.im2col_checked) << what;
  ASSERT_EQ(r.validations.size(), 1u) << what;
  if (dtype == "s8") {
    EXPECT_TRUE(r.validations[0].bit_exact) << what;
  }
}

// NVRTC needs no GPU: the planted kernels and the GPU im2col compile here too.
TEST(PlantedConv, SourcesCompileWithNvrtc) {
  for (const char* dtype : {"f16", "bf16", "s8"})
    for (ConvPlant plant : {ConvPlant::correct, ConvPlant::skips_last_tap,
                            ConvPlant::clamps_padding, ConvPlant::writes_nothing}) {
      const runtime::CubinResult r =
          runtime::compile_to_cubin(naive_conv_kernel(dtype, plant), "sm_90");
      EXPECT_FALSE(r.cubin.empty()) << dtype << " " << int(plant);
      EXPECT_EQ(r.functions.count("planted_conv"), 1u) << r.log;
    }
  codegen::GeneratedKernel im2col;
  im2col.source = runtime::im2col_source();
  im2col.dtype = "s8";
  im2col.main.name = "schedc_im2col";
  for (const char* arch : {"sm_80", "sm_90"}) {
    const runtime::CubinResult r = runtime::compile_to_cubin(im2col, arch);
    ASSERT_EQ(r.functions.count("schedc_im2col"), 1u) << r.log;
    EXPECT_EQ(r.functions.at("schedc_im2col").spill_store_bytes, 0) << r.log;
  }
}

TEST(PlantedConv, CorrectOnRaggedConvolutions) {
  SCHEDC_REQUIRE_GPU(s);
  for (const char* dtype : {"f16", "bf16", "s8"}) {
    auto prepared = s->prepare(naive_conv_kernel(dtype, ConvPlant::correct), testing::test_jit());
    for (const compiler::Conv2d& v :
         ragged_convs(chunk_channels(dtype), compiler::ConvLayout::nhwc))
      expect_ok(run_validated(s, *prepared, "planted", v, {}), dtype, dtype);
    // alpha, beta on z, bias per output channel.
    compiler::Epilogue epi;
    epi.alpha = 2, epi.beta = 1, epi.bias = true;
    expect_ok(
        run_validated(s, *prepared, "planted (alpha 2, beta 1, bias)",
                      ragged_convs(chunk_channels(dtype), compiler::ConvLayout::nhwc).front(), epi),
        dtype, std::string(dtype) + " with an epilogue");
  }
}

TEST(PlantedConv, WrongKernelsFail) {
  SCHEDC_REQUIRE_GPU(s);
  for (const char* dtype : {"f16", "s8"}) {
    const compiler::Conv2d v = conv2d(2, 7, 9, chunk_channels(dtype), 40, 3, 3, 1, 1);
    for (ConvPlant plant :
         {ConvPlant::skips_last_tap, ConvPlant::clamps_padding, ConvPlant::writes_nothing}) {
      auto prepared = s->prepare(naive_conv_kernel(dtype, plant), testing::test_jit());
      const runtime::ConvReport r = run_validated(s, *prepared, "planted wrong", v, {});
      EXPECT_FALSE(r.ok()) << dtype << " plant " << int(plant);
      if (plant == ConvPlant::writes_nothing) {
        EXPECT_GT(r.validations.at(0).nan_count, 0);
      }
    }
  }
}

TEST(PlantedConv, TimesTheKernelCublasAloneAndTheExplicitPipeline) {
  SCHEDC_REQUIRE_GPU(s);
  for (const char* dtype : {"f16", "s8"}) {
    auto prepared = s->prepare(naive_conv_kernel(dtype, ConvPlant::correct), testing::test_jit());
    runtime::ConvRunOptions o;
    o.conv = conv2d(2, 14, 14, 4 * chunk_channels(dtype), 64, 3, 3, 1, 1);
    o.jit = testing::test_jit();
    o.flush_l2 = true;
    o.timing.warmup_runs = 1;
    o.timing.min_runs = 3;
    o.timing.min_total_ms = 1;
    const runtime::ConvReport r = s->run_conv(*prepared, o);
    runtime::print_conv_block(std::cout, "planted (timed)", dtype, r);
    EXPECT_TRUE(r.ok()) << r.failure();
    ASSERT_TRUE(r.timed);
    EXPECT_GE(r.kernel.runs, 3);
    if (!r.has_baseline()) {  // cuBLAS int8 may reject a problem: then no ratios
      EXPECT_EQ(std::string(dtype), "s8") << r.no_baseline;
      continue;
    }
    EXPECT_GE(r.cublas.runs, 3);
    EXPECT_GE(r.explicit_pipeline.runs, 3);
    EXPECT_GT(r.percent_of_cublas(), 0);
    EXPECT_GT(r.x_of_explicit(), 0);
    // The pipeline does the GEMM's work and an im2col more.
    EXPECT_GT(r.explicit_pipeline.median_ms, 0.5 * r.cublas.median_ms);
  }
}

// --graph: the kernel, cuBLAS alone and the pipeline (two launches) each
// captured into a graph of four runs; times per run, the output unchanged.
TEST(PlantedConv, TimesEachInAGraphOfRuns) {
  SCHEDC_REQUIRE_GPU(s);
  auto prepared = s->prepare(naive_conv_kernel("f16", ConvPlant::correct), testing::test_jit());
  runtime::ConvRunOptions o;
  o.conv = conv2d(2, 14, 14, 4 * chunk_channels("f16"), 64, 3, 3, 1, 1);
  o.jit = testing::test_jit();
  o.timing.warmup_runs = 1;
  o.timing.min_runs = 3;
  o.timing.min_total_ms = 1;
  o.timing.graph_runs = 4;
  const runtime::ConvReport r = s->run_conv(*prepared, o);
  EXPECT_TRUE(r.ok()) << r.failure();  // a race after timing fails it too
  ASSERT_TRUE(r.timed);
  ASSERT_TRUE(r.has_baseline());
  for (const runtime::TimingStats* t : {&r.kernel, &r.cublas, &r.explicit_pipeline}) {
    EXPECT_EQ(t->graph_runs, 4);
    EXPECT_GE(t->runs, 3);
    EXPECT_GT(t->median_ms, 0);
  }
  EXPECT_GT(r.explicit_pipeline.median_ms, 0.5 * r.cublas.median_ms);
}

TEST(PlantedConv, RefusesWhatCannotRun) {
  SCHEDC_REQUIRE_GPU(s);
  auto conv_module = s->prepare(naive_conv_kernel("s8", ConvPlant::correct), testing::test_jit());
  auto gemm_module = s->prepare(testing::naive_kernel("f16"), testing::test_jit());
  runtime::ConvRunOptions o;
  o.conv = conv2d(1, 7, 9, 16, 40, 3, 3, 1, 1);
  o.jit = testing::test_jit();
  EXPECT_THROW(s->run_conv(*gemm_module, o), runtime::Error);  // a GEMM module
  o.conv.c = 8;  // 8 bytes a pixel of int8: not whole 16-byte chunks
  EXPECT_THROW(s->run_conv(*conv_module, o), runtime::Error);
  // A convolution module run as a GEMM: the launch has no ConvArgs.
  runtime::RunOptions g;
  g.problem = compiler::Problem{64, 40, 144, 0, 0, 0, compiler::DType::s8};
  g.problem.b_col = true;
  g.time = false;
  EXPECT_THROW(s->run(*conv_module, g), runtime::Error);
}

// The .sched files of `dir` whose names start with `prefix`, relative to
// the tree, appended to `out`.
void schedules_in(const char* dir, const std::string& prefix, std::vector<std::string>& out) {
  std::error_code ec;
  const fs::path root = testing::source_dir() / dir;
  if (!fs::is_directory(root, ec)) return;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ".sched" && name.rfind(prefix, 0) == 0)
      out.push_back(fs::relative(e.path(), testing::source_dir()).string());
  }
}

// examples/conv/*.sched and tests/gpu/schedules/conv_*.sched, relative to the tree.
std::vector<std::string> conv_schedules() {
  std::vector<std::string> out;
  schedules_in("examples/conv", "", out);
  schedules_in("tests/gpu/schedules", "conv_", out);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ConvSchedules, ListIsNotEmpty) {
  const std::vector<std::string> files = conv_schedules();
  std::cout << files.size() << " convolution schedules under " << testing::source_dir() << "\n";
  // The list fails only where it would run (a GPU): a branch without the
  // schedules yet still passes its CPU tests.
  SCHEDC_REQUIRE_GPU(s);
  EXPECT_FALSE(files.empty())
      << "no examples/conv/*.sched nor tests/gpu/schedules/conv_*.sched: nothing to run";
}

class ConvScheduleTest : public ::testing::TestWithParam<std::string> {
 protected:
  // The schedule compiled for the device and prepared; false (with a
  // failure) when it does not compile or is no convolution module.
  bool prepare(runtime::GpuSession* s) {
    std::ostringstream diags;
    c_ = cli::compile_file((testing::source_dir() / GetParam()).string(),
                           runtime::target_for_device(s->device()), diags);
    if (!c_) {
      ADD_FAILURE() << GetParam() << " does not compile:\n" << diags.str();
      return false;
    }
    if (c_->kernel.conv.empty()) {
      ADD_FAILURE() << GetParam() << " is no convolution module (no `conv` directive)";
      return false;
    }
    prepared_ = s->prepare(c_->kernel, testing::test_jit());
    return true;
  }
  void expect_correct(runtime::GpuSession* s, const compiler::Conv2d& v, const std::string& what,
                      const compiler::Epilogue* epilogue = nullptr) {
    const runtime::ConvReport r = run_validated(s, *prepared_, GetParam() + " " + what, v,
                                                epilogue ? *epilogue : c_->schedule.epilogue);
    expect_ok(r, c_->kernel.dtype, GetParam() + " " + what);
  }
  // The module's layout (its `conv` directive's): every convolution runs in it.
  compiler::ConvLayout layout() const {
    return compiler::layout_from_word(c_->kernel.conv).value();
  }
  std::vector<runtime::NamedConv> resnet50(int64_t batch) const {
    std::vector<runtime::NamedConv> out;
    for (const runtime::NamedConv& l : runtime::resnet50_convs(batch))
      out.push_back(runtime::in_layout(l, layout()));
    return out;
  }
  std::optional<cli::Compiled> c_;
  std::shared_ptr<runtime::PreparedKernel> prepared_;
};

TEST_P(ConvScheduleTest, CorrectOnResNet50AtBatch1And8) {
  SCHEDC_REQUIRE_GPU(s);
  if (!prepare(s)) return;
  for (int64_t batch : {1, 8})
    for (const runtime::NamedConv& l : resnet50(batch))
      expect_correct(s, l.conv, l.name + " batch " + std::to_string(batch));
}

TEST_P(ConvScheduleTest, CorrectOnResNet50AtBatch32) {
  SCHEDC_REQUIRE_GPU(s);
  if (!prepare(s)) return;
  // A 3x3 and a stride-2 layer of the middle stages, and the last 1x1.
  for (const runtime::NamedConv& l : resnet50(32))
    if (l.name == "res3 3x3" || l.name == "res4 3x3/2" || l.name == "res5 1x1 expand")
      expect_correct(s, l.conv, l.name + " batch 32");
}

TEST_P(ConvScheduleTest, CorrectOnRaggedConvolutions) {
  SCHEDC_REQUIRE_GPU(s);
  if (!prepare(s)) return;
  const std::vector<compiler::Conv2d> convs =
      ragged_convs(chunk_channels(c_->kernel.dtype), layout());
  for (const compiler::Conv2d& v : convs) expect_correct(s, v, "ragged");
  // alpha and beta (z) at run time, the schedule's bias and relu.
  compiler::Epilogue epi = c_->schedule.epilogue;
  epi.alpha = 2, epi.beta = 1;
  expect_correct(s, convs.front(), "ragged, alpha 2 beta 1", &epi);
}

// Where the kernel can read A by TMA's im2col mode, the launch takes it on
// every convolution im2col_error allows, and both that copy and the
// producer's (SCHEDC_CONV_IM2COL=0) compute each one right; other kernels
// (mma.sync, NCHW32) report no such choice. A kernel whose k-tile is
// several 128-byte panels copies a panel at a time, where C is a multiple
// of one (no 64-byte halves: the producer's copies below that).
TEST_P(ConvScheduleTest, Im2colAndProducerCopiesBothCorrect) {
  SCHEDC_REQUIRE_GPU(s);
  if (!prepare(s)) return;
  // A `halo` kernel's other copies (HaloAndOtherCopiesBothCorrect runs its halo).
  const bool halo = c_->kernel.main.a_halo_bytes > 0;
  std::optional<ScopedEnv> no_halo;
  if (halo) no_halo.emplace("SCHEDC_CONV_HALO", "0");
  const std::string halo_off = "; not once a tile: SCHEDC_CONV_HALO=0";
  const bool tma = c_->kernel.main.a_im2col;
  const int64_t cbk = 128 / runtime::elem_size(runtime::elem_type(c_->kernel.dtype));
  const bool panels = int64_t(c_->kernel.main.tile_k) > cbk;
  const std::string not_a_panel =
      "is not a multiple of " + std::to_string(cbk) +
      ", the channels of one of BK = " + std::to_string(c_->kernel.main.tile_k) +
      "'s 128-byte panels";
  std::vector<compiler::Conv2d> convs = im2col_convs(cbk);
  for (compiler::Conv2d& v : convs) {
    v.layout = layout();
    if (v.layout == compiler::ConvLayout::nchw32) v.k = (v.k + 31) / 32 * 32;
  }
  auto run = [&](const compiler::Conv2d& v, const std::string& what) {
    const runtime::ConvReport r =
        run_validated(s, *prepared_, GetParam() + " " + what, v, c_->schedule.epilogue);
    expect_ok(r, c_->kernel.dtype, GetParam() + " " + what);
    std::string a_copy = r.a_copy;
    if (halo) {  // the same copies as without `halo`, and why not the halo's
      EXPECT_TRUE(a_copy.size() > halo_off.size() &&
                  a_copy.compare(a_copy.size() - halo_off.size(), halo_off.size(), halo_off) == 0)
          << what << ": " << a_copy;
      a_copy = a_copy.substr(0, a_copy.size() - std::min(a_copy.size(), halo_off.size()));
    }
    return a_copy;
  };
  for (const compiler::Conv2d& v : convs) {
    const std::string what = compiler::conv_text(v);
    const std::string a_copy = run(v, what);
    if (!tma) {
      EXPECT_EQ(a_copy, "") << what;
      continue;
    }
    if (panels && v.c % cbk != 0) {
      EXPECT_NE(a_copy.find(not_a_panel), std::string::npos) << what << ": " << a_copy;
      continue;
    }
    EXPECT_EQ(a_copy, v.c % cbk == 0 ? "by TMA's im2col mode"
                                     : "by TMA's im2col mode, two copies a k-tile (64-byte panels)")
        << what;
    ScopedEnv off("SCHEDC_CONV_IM2COL", "0");
    EXPECT_EQ(run(v, what + ", producer's copies"),
              "by the producer's copies (SCHEDC_CONV_IM2COL=0)")
        << what;
  }
  if (!tma) return;
  // Not a multiple of half the k-tile: the producer's copies, and why.
  compiler::Conv2d narrow = conv2d(2, 7, 9, cbk / 4, 40, 3, 3, 1, 1);
  EXPECT_NE(run(narrow, "C a quarter of a k-tile")
                .find(panels ? not_a_panel : std::string("not a multiple of BK / 2")),
            std::string::npos);
}

// A `halo` kernel takes each convolution's input once a tile wherever the
// launch's plan says it fits (runtime::conv_halo_plan: the report names the
// halo's geometry, or why not beside the copy it took instead), and both
// ways compute it exactly: on ResNet-50's 3x3 layers at batch 1 and 8 (whole
// images, bands, stride 2's four phase images), the im2col tests' and the
// ragged convolutions, each again with SCHEDC_CONV_HALO=0.
class HaloScheduleTest : public ConvScheduleTest {};

TEST_P(HaloScheduleTest, HaloAndOtherCopiesBothCorrect) {
  SCHEDC_REQUIRE_GPU(s);
  if (!prepare(s)) return;
  ASSERT_GT(c_->kernel.main.a_halo_bytes, 0u) << GetParam() << ": not a `halo` kernel";
  const int64_t cbk = 128 / runtime::elem_size(runtime::elem_type(c_->kernel.dtype));
  std::vector<compiler::Conv2d> convs = im2col_convs(cbk);
  for (const compiler::Conv2d& v : ragged_convs(chunk_channels(c_->kernel.dtype), layout()))
    convs.push_back(v);
  for (int64_t batch : {1, 8})
    for (const runtime::NamedConv& l : resnet50(batch))
      if (l.name.find("3x3") != std::string::npos) convs.push_back(l.conv);
  // Whole images past N, bands of one and of several output rows.
  convs.push_back(conv2d(3, 7, 7, 2 * cbk, 40, 3, 3, 1, 1));
  convs.push_back(conv2d(2, 29, 27, cbk, 72, 3, 3, 1, 1));
  convs.push_back(conv2d(1, 61, 9, cbk, 24, 3, 3, 1, 1));
  // 64 bytes a pixel (C = cbk / 2; ResNet-50's res2 above is one too): an
  // entry whose k-tile is one 128-byte panel (a_halo_64b) takes them in
  // 64-byte rows, two taps a k-tile (an odd tap count's last k-tile half past
  // K); strided, dilated, 1x1 and 5x5.
  const size_t first_half = convs.size();
  convs.push_back(conv2d(2, 11, 9, cbk / 2, 40, 3, 3, 1, 1));
  convs.push_back(conv2d(2, 13, 11, cbk / 2, 24, 3, 3, 2, 1));
  convs.push_back(conv2d(1, 15, 17, cbk / 2, 40, 3, 3, 1, 2, 2));
  convs.push_back(conv2d(3, 5, 6, cbk / 2, 16, 1, 1, 1, 0));
  convs.push_back(conv2d(1, 9, 7, cbk / 2, 40, 5, 5, 1, 2));
  int taken = 0, halves_taken = 0;
  for (size_t i = 0; i < convs.size(); ++i) {
    const compiler::Conv2d& v = convs[i];
    const std::string what = compiler::conv_text(v);
    const runtime::ConvReport r =
        run_validated(s, *prepared_, GetParam() + " " + what, v, c_->schedule.epilogue);
    expect_ok(r, c_->kernel.dtype, GetParam() + " " + what);
    if (r.a_copy.rfind("the input once a tile (halo): ", 0) == 0) {
      ++taken;
      if (i >= first_half) ++halves_taken;
      ScopedEnv off("SCHEDC_CONV_HALO", "0");
      const runtime::ConvReport o = run_validated(
          s, *prepared_, GetParam() + " " + what + ", no halo", v, c_->schedule.epilogue);
      expect_ok(o, c_->kernel.dtype, GetParam() + " " + what + ", no halo");
      EXPECT_NE(o.a_copy.find("not once a tile: SCHEDC_CONV_HALO=0"), std::string::npos)
          << what << ": " << o.a_copy;
    } else {
      EXPECT_NE(r.a_copy.find("; not once a tile: "), std::string::npos)
          << what << ": " << r.a_copy;
    }
  }
  EXPECT_GE(taken, 8) << "the launches that took the halo";
  if (c_->kernel.main.a_halo_64b) {
    EXPECT_EQ(halves_taken, int(convs.size() - first_half)) << "64-byte pixels in 64-byte rows";
  }
}

// A test's name from its file's path: letters and digits, '_' for the rest.
std::string file_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(All, ConvScheduleTest, ::testing::ValuesIn(conv_schedules()),
                         file_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConvScheduleTest);

// The schedules with `halo` (their files' names say it).
std::vector<std::string> halo_schedules() {
  std::vector<std::string> out;
  for (const std::string& f : conv_schedules())
    if (f.find("halo") != std::string::npos) out.push_back(f);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Halo, HaloScheduleTest, ::testing::ValuesIn(halo_schedules()),
                         file_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HaloScheduleTest);

// `halo only` (tests/gpu/schedules/halo_only_*.sched; not conv_*: those run
// every layer, which such a kernel refuses where the phase images need more
// room than its file's): A's shared memory holds the file's convolution's
// phase images and nothing else. Every convolution whose images fit is
// exact, its input taken once a tile; every other launch is refused with
// the sizes, not computed some other way.
class HaloOnlyTest : public ConvScheduleTest {};

TEST_P(HaloOnlyTest, ExactWhereItFitsRefusedElsewhere) {
  SCHEDC_REQUIRE_GPU(s);
  if (!prepare(s)) return;
  ASSERT_TRUE(c_->kernel.main.halo_only) << GetParam() << ": not a `halo only` kernel";
  ASSERT_TRUE(c_->schedule.conv) << GetParam() << ": `halo only` needs the file's conv";
  const int64_t c = c_->schedule.conv->c;  // its channels: the room is for them
  std::vector<compiler::Conv2d> convs = {*c_->schedule.conv};
  for (int64_t batch : {1, 8})
    for (const runtime::NamedConv& l : resnet50(batch))
      if (l.name.find("3x3") != std::string::npos) convs.push_back(l.conv);
  // Ragged ones within the file's room: odd H and W, N past a tile, K not a
  // multiple of BN, 1x1, half the channels; and ones past it.
  convs.push_back(conv2d(3, 5, 7, c, 40, 3, 3, 1, 1));
  convs.push_back(conv2d(2, 5, 5, c, 72, 1, 1, 1, 0));
  convs.push_back(conv2d(2, 7, 7, c / 2, 24, 3, 3, 1, 1));
  convs.push_back(conv2d(1, 29, 27, c, 40, 3, 3, 1, 1));
  convs.push_back(conv2d(2, 11, 9, 16, 40, 3, 3, 1, 1));
  int taken = 0, refused = 0;
  for (const compiler::Conv2d& v : convs) {
    const std::string what = GetParam() + " " + compiler::conv_text(v);
    try {
      const runtime::ConvReport r = run_validated(s, *prepared_, what, v, c_->schedule.epilogue);
      expect_ok(r, c_->kernel.dtype, what);
      EXPECT_EQ(r.a_copy.rfind("the input once a tile (halo): ", 0), 0u)
          << what << ": " << r.a_copy;
      ++taken;
    } catch (const runtime::Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.kind(), runtime::Error::Kind::refused) << what << ": " << m;
      EXPECT_NE(m.find("was compiled with 'halo only'"), std::string::npos) << what << ": " << m;
      EXPECT_NE(m.find("cannot take the convolution's input once a tile: "), std::string::npos)
          << what << ": " << m;
      std::cout << what << ": refused (" << m << ")\n";
      ++refused;
    }
  }
  EXPECT_GE(taken, 4) << "the file's convolution, ResNet-50's res5 3x3 at batch 1 and 8, ragged";
  EXPECT_GE(refused, 2) << "convolutions past the room, or not taking the halo at all";
}

// tests/gpu/schedules/halo_only_*.sched, relative to the tree.
std::vector<std::string> halo_only_schedules() {
  std::vector<std::string> out;
  schedules_in("tests/gpu/schedules", "halo_only_", out);
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(HaloOnly, HaloOnlyTest, ::testing::ValuesIn(halo_only_schedules()),
                         file_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(HaloOnlyTest);

}  // namespace
}  // namespace schedc
