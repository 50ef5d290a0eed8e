// The library API (include/schedc/schedc.h) as a program uses it, linked
// against libschedc alone: compile from text and from a file, the
// diagnostics as values, the queries; and on a GPU (SKIPPED without one) a
// launch on the program's own device buffers, checked exactly.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "schedc/schedc.h"

namespace {

const char* kSgemm = "tile 64x64x8\nthread 4x4\nvectorize 4\n";

TEST(Api, CompilesTextAndAnswersQueries) {
  schedc::CompileOptions o;
  o.file_name = "small.sched";
  schedc::CompileResult r = schedc::compile(kSgemm, o);
  ASSERT_TRUE(r.ok()) << r.rendered;
  EXPECT_TRUE(r.diagnostics.empty());
  const schedc::Kernel& k = *r.kernel;
  EXPECT_EQ(k.entry_name(), "schedc_small");
  EXPECT_EQ(k.dtype(), "f32");
  EXPECT_EQ(k.arch(), "sm_90");
  EXPECT_EQ(k.layout(), "NNN");
  EXPECT_EQ(k.block_threads(), 256);
  EXPECT_EQ(k.shared_memory_bytes(), (64 * 8 + 8 * 64) * 4);
  EXPECT_NE(k.cuda_source().find("extern \"C\" __global__"), std::string::npos);
  EXPECT_NE(k.cuda_source().find("schedc_small("), std::string::npos);
  EXPECT_NE(k.schedule_text().find("tile 64x64x8\n"), std::string::npos);
  EXPECT_NE(k.schedule_text().find("vectorize 4\n"), std::string::npos);
  EXPECT_STREQ(schedc::version(), SCHEDC_EXPECTED_VERSION);
}

TEST(Api, BadInputComesBackAsLocatedDiagnostics) {
  schedc::CompileResult r = schedc::compile("tile 100x128x8\nthread 8x8\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.kernel, nullptr);
  ASSERT_FALSE(r.diagnostics.empty()) << r.rendered;
  const schedc::Diagnostic& d = r.diagnostics[0];
  EXPECT_EQ(d.severity, schedc::Diagnostic::Severity::error);
  EXPECT_EQ(d.where.file, "gemm.sched");
  EXPECT_EQ(d.where.line, 2);
  EXPECT_EQ(d.where.column, 8);
  EXPECT_NE(d.message.find("does not divide"), std::string::npos) << d.message;
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes[0].where.line, 1);
  // The same, printed as the command line prints it: place, caret, note.
  EXPECT_NE(r.rendered.find("gemm.sched:2:8: error:"), std::string::npos) << r.rendered;
  EXPECT_NE(r.rendered.find("^~~"), std::string::npos) << r.rendered;

  schedc::CompileResult syntax = schedc::compile("tile 64x64x8 thread 4x4\n");
  EXPECT_FALSE(syntax.ok());
  ASSERT_FALSE(syntax.diagnostics.empty());
  EXPECT_EQ(syntax.diagnostics[0].where.line, 1);
}

TEST(Api, ArchitectureAndFileErrorsAreDiagnosticsToo) {
  schedc::CompileOptions o;
  o.arch = "sm_42";
  schedc::CompileResult r = schedc::compile(kSgemm, o);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(r.diagnostics[0].message.find("unknown architecture 'sm_42'"), std::string::npos);

  schedc::CompileResult missing = schedc::compile_file("/nonexistent/x.sched");
  EXPECT_FALSE(missing.ok());
  ASSERT_EQ(missing.diagnostics.size(), 1u);
  EXPECT_EQ(missing.diagnostics[0].where.file, "/nonexistent/x.sched");
  EXPECT_EQ(missing.diagnostics[0].where.line, 0);

  schedc::CompileResult file = schedc::compile_file(SCHEDC_SOURCE_DIR "/examples/sgemm_best.sched");
  ASSERT_TRUE(file.ok()) << file.rendered;
  EXPECT_EQ(file.kernel->entry_name(), "schedc_sgemm_best");

  // wgmma needs sm_90: for sm_80 it is refused, with the reason.
  o.arch = "sm_80";
  schedc::CompileResult hopper =
      schedc::compile_file(SCHEDC_SOURCE_DIR "/examples/hgemm_best.sched", o);
  EXPECT_FALSE(hopper.ok());
  EXPECT_NE(hopper.rendered.find("wgmma"), std::string::npos) << hopper.rendered;
}

// compile may run on several threads at once, and gives the same kernel.
TEST(Api, CompilesOnSeveralThreadsAtOnce) {
  const std::string want = schedc::compile(kSgemm).kernel->cuda_source();
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 5; ++rep) {
        schedc::CompileResult r = schedc::compile(kSgemm);
        got[i] = r.ok() ? r.kernel->cuda_source() : r.rendered;
        if (got[i] != want) return;
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::string& g : got) EXPECT_EQ(g, want);
}

// What launching `args` (a Gemm or a Conv) on `k` throws: an ArgumentError's
// what(), else which other outcome it was.
template <class Args>
std::string refusal(const schedc::Kernel& k, const Args& args) {
  try {
    k.launch(args);
  } catch (const schedc::ArgumentError& e) {
    return e.what();
  } catch (const schedc::Error& e) {
    return std::string("an Error that is no ArgumentError: ") + e.what();
  }
  return "no error";
}

// A batch's arguments are checked before the device is touched (so this
// runs without one): a batch for a schedule without `batch`, one out of
// range, a stride that makes GEMMs overlap.
TEST(Api, BatchArgumentsAreCheckedFirst) {
  auto message = [](const schedc::Kernel& k, const schedc::Gemm& g) { return refusal(k, g); };
  schedc::CompileResult one = schedc::compile(kSgemm);
  schedc::CompileResult batched = schedc::compile(std::string(kSgemm) + "batch 4\n");
  ASSERT_TRUE(one.ok() && batched.ok()) << one.rendered << batched.rendered;
  schedc::Gemm g{127, 129, 65};  // null pointers: refused last
  g.batch = 2;
  EXPECT_NE(message(*one.kernel, g).find("its schedule has no 'batch' directive"),
            std::string::npos);
  EXPECT_NE(message(*batched.kernel, g).find("must be device pointers"), std::string::npos);
  g.batch = 0;
  EXPECT_NE(message(*batched.kernel, g).find("out of range (1 to 65535"), std::string::npos);
  g.batch = 3;
  g.stride_c = 127 * 129 - 1;
  EXPECT_NE(message(*batched.kernel, g).find("stride_c 16382 is less than one C"),
            std::string::npos)
      << message(*batched.kernel, g);
}

const char* kConvInt8 = SCHEDC_SOURCE_DIR "/examples/conv/int8_nhwc.sched";

// A `conv` schedule is a convolution module; its geometry comes back as the
// schedule wrote it, output size included.
TEST(Api, ConvolutionModulesSayWhatTheyCompute) {
  schedc::CompileResult r = schedc::compile_file(kConvInt8);
  ASSERT_TRUE(r.ok()) << r.rendered;
  const schedc::Kernel& k = *r.kernel;
  EXPECT_TRUE(k.is_convolution());
  EXPECT_EQ(k.dtype(), "s8");
  const std::optional<schedc::ConvGeometry> g = k.convolution();
  ASSERT_TRUE(g.has_value());
  // conv 8x28x28x128 filter 128x3x3 stride 1 pad 1
  EXPECT_EQ(std::vector<int64_t>({g->n, g->h, g->w, g->c, g->k, g->r, g->s}),
            std::vector<int64_t>({8, 28, 28, 128, 128, 3, 3}));
  EXPECT_EQ(std::vector<int64_t>(
                {g->stride_h, g->stride_w, g->pad_h, g->pad_w, g->dilation_h, g->dilation_w}),
            std::vector<int64_t>({1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(g->p(), 28);
  EXPECT_EQ(g->q(), 28);

  schedc::CompileResult gemm = schedc::compile(kSgemm);
  ASSERT_TRUE(gemm.ok()) << gemm.rendered;
  EXPECT_FALSE(gemm.kernel->is_convolution());
  EXPECT_FALSE(gemm.kernel->convolution().has_value());

  // Per-axis stride, padding and dilation, from the text.
  schedc::CompileResult dilated = schedc::compile(
      "conv 1x7x11x64 filter 64x3x3 stride 2x1 pad 2x1 dilation 2x3\ndtype s8\n"
      "tile 128x128x128\nwarp 64x128\nwgmma s8\ntma\nstages 3\nswizzle smem\n"
      "warp_specialize\n");
  ASSERT_TRUE(dilated.ok()) << dilated.rendered;
  const schedc::ConvGeometry d = *dilated.kernel->convolution();
  EXPECT_EQ(
      std::vector<int64_t>({d.stride_h, d.stride_w, d.pad_h, d.pad_w, d.dilation_h, d.dilation_w}),
      std::vector<int64_t>({2, 1, 2, 1, 2, 3}));
  EXPECT_EQ(d.p(), (7 + 2 * 2 - 2 * 2 - 1) / 2 + 1);
  EXPECT_EQ(d.q(), (11 + 2 * 1 - 3 * 2 - 1) / 1 + 1);
}

// Every mistake in a convolution launch is an ArgumentError thrown before
// the device is touched (so this runs without one), with what is wrong.
TEST(Api, ConvolutionArgumentsAreCheckedFirst) {
  schedc::CompileResult r = schedc::compile_file(kConvInt8);
  schedc::CompileResult gemm = schedc::compile(kSgemm);
  ASSERT_TRUE(r.ok() && gemm.ok()) << r.rendered << gemm.rendered;
  const schedc::Kernel& k = *r.kernel;
  void* aligned = reinterpret_cast<void*>(uintptr_t(256));  // never dereferenced
  const schedc::Conv good{*k.convolution(), aligned, aligned, aligned};
  auto expect_refused = [&](const schedc::Conv& conv, const std::string& words) {
    const std::string why = refusal(k, conv);
    EXPECT_NE(why.find(words), std::string::npos) << why;
  };

  EXPECT_NE(refusal(*gemm.kernel, good).find("computes a GEMM (its schedule has no 'conv'"),
            std::string::npos)
      << refusal(*gemm.kernel, good);
  const schedc::Gemm as_gemm{25088, 128, 1152, aligned, 0, aligned, 0, aligned, 0};
  EXPECT_NE(refusal(k, as_gemm).find("computes a convolution (its schedule has 'conv')"),
            std::string::npos)
      << refusal(k, as_gemm);

  schedc::Conv v = good;
  v.geometry.c = 24;  // 24 bytes a pixel of int8
  expect_refused(v, "C = 24 channels of s8 are 24 bytes a pixel, not a multiple of 16");
  v = good;
  v.geometry.n = 0;
  expect_refused(v,
                 "the convolution 0x28x28x128 filter 128x3x3 stride 1 pad 1: N must be at least 1");
  v = good;
  v.geometry.pad_w = -1;
  expect_refused(v, "the padding must be at least 0");
  v = good;
  v.geometry.stride_w = int64_t(1) << 40;  // past the kernels' int
  expect_refused(v, "1099511627776 is past 32 bits");
  v = good;
  v.geometry.h = 2, v.geometry.pad_h = 0;  // a 3x3 filter over 2 rows
  expect_refused(v, "no output pixel");
  v = good;
  v.geometry.r = v.geometry.s = 17;
  expect_refused(v, "289 taps");
  v = good;
  v.geometry.n = 1 << 20;  // 2^20 x 28 x 28 x 128 elements
  expect_refused(v, "2^31 elements or more");
  v = good;
  v.x = nullptr;
  expect_refused(v, "x, w and y must be device pointers");
  v = good;
  v.x = reinterpret_cast<void*>(uintptr_t(264));
  expect_refused(v, "the input tensor (A) is not 16-byte aligned");
  v = good;
  v.alpha = 0.5f;
  expect_refused(v, "alpha 0.5 is not a whole number");

  // f16 and bf16 copy 8 channels a chunk.
  schedc::CompileResult bf16 =
      schedc::compile_file(SCHEDC_SOURCE_DIR "/tests/gpu/schedules/conv_bf16_epilogue.sched");
  ASSERT_TRUE(bf16.ok()) << bf16.rendered;
  schedc::Conv h{*bf16.kernel->convolution(), aligned, aligned, aligned};
  h.geometry.c = 12;
  const std::string why = refusal(*bf16.kernel, h);
  EXPECT_NE(why.find("C = 12 channels of bf16 are 24 bytes a pixel"), std::string::npos) << why;
  // Its epilogue reads a bias (`epilogue ... bias`): a null one would be read
  // at address 0; a scale it does not read would be believed applied.
  schedc::Conv nb{*bf16.kernel->convolution(), aligned, aligned, aligned};
  const std::string no_bias = refusal(*bf16.kernel, nb);
  EXPECT_NE(no_bias.find("reads a bias ('epilogue ... bias'): bias must point to K device floats"),
            std::string::npos)
      << no_bias;
  nb.bias = reinterpret_cast<const float*>(aligned);
  nb.scale = reinterpret_cast<const float*>(aligned);
  const std::string stray = refusal(*bf16.kernel, nb);
  EXPECT_NE(stray.find("scale given, but"), std::string::npos) << stray;
  EXPECT_FALSE(bf16.kernel->takes_scale());
}

// Whether a CUDA device is there to launch on (the GPU tests skip without).
bool has_device() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return true;
  cudaGetLastError();
  return false;
}

// Integers small enough that every product and sum is exact in f32.
// A program's own A, B and C on the device, copied from host vectors; C
// comes back with c_back(); freed at scope exit.
struct DeviceGemm {
  float *a = nullptr, *b = nullptr, *c = nullptr;
  size_t c_count = 0;
  DeviceGemm(const std::vector<float>& ha, const std::vector<float>& hb,
             const std::vector<float>& hc)
      : c_count(hc.size()) {
    const std::pair<float**, const std::vector<float>*> all[] = {{&a, &ha}, {&b, &hb}, {&c, &hc}};
    for (auto [ptr, host] : all) {
      EXPECT_EQ(cudaMalloc(ptr, host->size() * 4), cudaSuccess);
      EXPECT_EQ(cudaMemcpy(*ptr, host->data(), host->size() * 4, cudaMemcpyHostToDevice),
                cudaSuccess);
    }
  }
  std::vector<float> c_back() const {
    std::vector<float> out(c_count);
    EXPECT_EQ(cudaMemcpy(out.data(), c, c_count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
  ~DeviceGemm() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

TEST(ApiGpu, LaunchOnTheProgramsOwnBuffersIsExact) {
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  schedc::CompileResult r = schedc::compile(kSgemm);
  ASSERT_TRUE(r.ok()) << r.rendered;
  for (int64_t ld_pad : {0, 1}) {
    const int64_t M = 127, N = 129, K = 65, lda = K + ld_pad, ldb = N + ld_pad, ldc = N + ld_pad;
    std::vector<float> a(M * lda, 0.f), b(K * ldb, 0.f), c(M * ldc, -1.f), want(M * ldc, -1.f);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) a[i * lda + k] = float((i * 3 + k * 5) % 7 - 3);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) b[k * ldb + j] = float((k * 2 + j) % 5 - 2);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float s = 0;
        for (int64_t k = 0; k < K; ++k) s += a[i * lda + k] * b[k * ldb + j];
        want[i * ldc + j] = s;
      }
    const DeviceGemm d(a, b, c);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    r.kernel->launch({M, N, K, d.a, lda, d.b, ldb, d.c, ldc}, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(d.c_back(), want) << "ld + " << ld_pad;  // padding columns stay -1 too
    cudaStreamDestroy(stream);
  }
  // Out of range arguments throw schedc::Error, not crash.
  EXPECT_THROW(r.kernel->launch({0, 1, 1, nullptr, 0, nullptr, 0, nullptr, 0}), schedc::Error);
}

// Launches go through the driver on the current context's function: a
// thread that has made no CUDA call before its first launch (no context
// current yet) launches right, and so does the thread that loaded the module.
TEST(ApiGpu, LaunchFromAThreadThatMadeNoCudaCallIsExact) {
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  schedc::CompileResult r = schedc::compile(kSgemm);
  ASSERT_TRUE(r.ok()) << r.rendered;
  const int64_t M = 33, N = 17, K = 9;
  std::vector<float> a(M * K), b(K * N), c(M * N, -1.f), want(M * N, 0.f);
  for (int64_t i = 0; i < M * K; ++i) a[i] = float(i % 5 - 2);
  for (int64_t i = 0; i < K * N; ++i) b[i] = float(i % 3 - 1);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) want[i * N + j] += a[i * K + k] * b[k * N + j];
  const DeviceGemm d(a, b, c);
  std::string error;
  std::thread first([&] {
    try {
      r.kernel->launch({M, N, K, d.a, K, d.b, N, d.c, N});
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  first.join();
  ASSERT_EQ(error, "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(d.c_back(), want);
  ASSERT_EQ(cudaMemset(d.c, 0, M * N * 4), cudaSuccess);
  r.kernel->launch({M, N, K, d.a, K, d.b, N, d.c, N});
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(d.c_back(), want);
}

// A strided batch of three, each operand's GEMMs 5 elements apart beyond
// packed: every GEMM exact, the gaps untouched (-1).
TEST(ApiGpu, BatchLaunchIsExact) {
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  schedc::CompileResult r = schedc::compile(std::string(kSgemm) + "batch 3\n");
  ASSERT_TRUE(r.ok()) << r.rendered;
  const int64_t M = 127, N = 129, K = 65, batch = 3;
  const int64_t sa = M * K + 5, sb = K * N + 5, sc = M * N + 5;
  std::vector<float> a(batch * sa, 0.f), b(batch * sb, 0.f), c(batch * sc, -1.f), want = c;
  for (int64_t g = 0; g < batch; ++g) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) a[g * sa + i * K + k] = float((i * 3 + k * 5 + g) % 7 - 3);
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) b[g * sb + k * N + j] = float((k * 2 + j + g) % 5 - 2);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        float s = 0;
        for (int64_t k = 0; k < K; ++k) s += a[g * sa + i * K + k] * b[g * sb + k * N + j];
        want[g * sc + i * N + j] = s;
      }
  }
  const DeviceGemm d(a, b, c);
  schedc::Gemm g{M, N, K, d.a, 0, d.b, 0, d.c, 0};
  g.batch = batch;
  g.stride_a = sa;
  g.stride_b = sb;
  g.stride_c = sc;
  r.kernel->launch(g);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(d.c_back(), want);
}

}  // namespace
