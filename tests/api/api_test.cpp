// The library API (include/schedc/schedc.h) as a program uses it, linked
// against libschedc alone: compile from text and from a file, the
// diagnostics as values, the queries; and on a GPU (SKIPPED without one) a
// launch on the program's own device buffers, checked exactly.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
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

// A batch's arguments are checked before the device is touched (so this
// runs without one): a batch for a schedule without `batch`, one out of
// range, a stride that makes GEMMs overlap.
TEST(Api, BatchArgumentsAreCheckedFirst) {
  auto message = [](const schedc::Kernel& k, const schedc::Gemm& g) {
    try {
      k.launch(g);
    } catch (const schedc::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
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
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    GTEST_SKIP() << "no CUDA device";
  }
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

// A strided batch of three, each operand's GEMMs 5 elements apart beyond
// packed: every GEMM exact, the gaps untouched (-1).
TEST(ApiGpu, BatchLaunchIsExact) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    GTEST_SKIP() << "no CUDA device";
  }
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
