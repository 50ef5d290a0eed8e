#pragma once
// Shared by the runtime's tests: one GpuSession per test binary (or the
// reason there is none), a private kernel cache, and hand-written kernels
// given to the runtime as codegen::GeneratedKernel values.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "codegen/generated_kernel.h"
#include "runtime/report.h"
#include "runtime/run.h"

namespace schedc::testing {

// A fresh cache directory under the system temp dir for this process.
inline std::string test_cache_dir() {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("schedc_test_cache_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

// JIT options that compile into this process's private cache.
inline runtime::JitOptions test_jit() {
  runtime::JitOptions jit;
  jit.cache_dir = test_cache_dir();
  return jit;
}

// The source tree: $SCHEDC_SOURCE_DIR when set (the GPU machine runs a copy
// of the tree at another path), else the one this binary was built from.
inline std::filesystem::path source_dir() {
  const char* env = std::getenv("SCHEDC_SOURCE_DIR");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(SCHEDC_SOURCE_DIR);
}

// The process's GPU session, or null with `why`.
// A fresh SQLite path under the test cache's `folder` (created): the file
// and its WAL and shared-memory companions removed.
inline std::string fresh_database(const std::string& folder, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(test_cache_dir()) / folder;
  std::filesystem::create_directories(dir);
  const std::string p = (dir / (name + ".sqlite")).string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p + suffix);
  return p;
}

// A tune::TuneOptions::edit_kernel that makes the model's best candidate
// (rank 1) return at once: the fastest kernel there is, and wrong (its
// output keeps the poison the run wrote before it).
inline void first_candidate_returns_at_once(int rank, codegen::GeneratedKernel& k) {
  if (rank != 1) return;
  size_t at = k.source.find(k.main.name + "(");
  ASSERT_NE(at, std::string::npos);
  at = k.source.find('{', at);
  k.source.insert(at + 1, " return;");
}

inline runtime::GpuSession* gpu_session(std::string& why) {
  static std::string reason;
  static std::unique_ptr<runtime::GpuSession> session = [] {
    // No device: skip. A device whose session cannot start throws: a failure, never a skip.
    std::optional<runtime::DeviceInfo> device = runtime::find_device(reason);
    return device ? std::make_unique<runtime::GpuSession>(*device) : nullptr;
  }();
  why = reason;
  return session.get();
}

#define SCHEDC_REQUIRE_GPU(session_var)                                           \
  std::string no_gpu_why_;                                                        \
  runtime::GpuSession* session_var = ::schedc::testing::gpu_session(no_gpu_why_); \
  if (!session_var) GTEST_SKIP() << "no CUDA device: " << no_gpu_why_

// What a planted kernel does wrong (or nothing).
enum class Plant {
  correct,         // a correct naive kernel
  writes_nothing,  // returns at once
  wrong_element,   // adds 1 to C[M-1][N-1]
  partial,         // writes only the top half of C's rows
  reads_c,         // computes beta*C even when beta == 0 (NaN poison shows it)
  writes_padding,  // also writes one element past each row end (into the ldc padding)
  skips_last_k,    // drops the last k step
};

// A naive kernel (one thread per C element, 16x16 blocks) with the fixed
// ABI, for dtype "f32" | "f16" | "bf16", doing what `plant` says.
inline codegen::GeneratedKernel naive_kernel(const std::string& dtype = "f32",
                                             Plant plant = Plant::correct,
                                             const std::string& name = "planted_gemm") {
  std::string T = dtype == "f32" ? "float" : dtype == "f16" ? "__half" : "__nv_bfloat16";
  std::string load = dtype == "f32" ? "" : dtype == "f16" ? "__half2float" : "__bfloat162float";
  std::string store = dtype == "f32"   ? ""
                      : dtype == "f16" ? "__float2half_rn"
                                       : "__float2bfloat16_rn";
  std::string src;
  if (dtype == "f16") src += "#include <cuda_fp16.h>\n";
  if (dtype == "bf16") src += "#include <cuda_bf16.h>\n";
  src += "extern \"C\" __global__ void " + name + "(int M, int N, int K, const " + T +
         "* A, int lda, const " + T + "* B, int ldb, " + T +
         "* C, int ldc, float alpha, float beta, const float* bias) {\n"
         "  int m = blockIdx.y * 16 + threadIdx.y, n = blockIdx.x * 16 + threadIdx.x;\n"
         "  if (m >= M || n >= N) return;\n";
  if (plant == Plant::writes_nothing) src += "  return;\n";
  if (plant == Plant::partial) src += "  if (m >= (M + 1) / 2) return;\n";
  std::string kend = plant == Plant::skips_last_k ? "K - 1" : "K";
  src +=
      "  float acc = 0.0f;\n"
      "  for (int k = 0; k < " +
      kend +
      "; ++k)\n"
      "    acc += " +
      load + "(A[(size_t)m * lda + k]) * " + load +
      "(B[(size_t)k * ldb + n]);\n"
      "  float v = alpha * acc;\n";
  if (plant == Plant::reads_c)
    src += "  v += beta * " + load + "(C[(size_t)m * ldc + n]);\n";
  else
    src += "  if (beta != 0.0f) v += beta * " + load + "(C[(size_t)m * ldc + n]);\n";
  src += "  if (bias) v += bias[n];\n";
  if (plant == Plant::wrong_element) src += "  if (m == M - 1 && n == N - 1) v += 1.0f;\n";
  src += "  C[(size_t)m * ldc + n] = " + store + "(v);\n";
  if (plant == Plant::writes_padding)
    src += "  if (n == N - 1 && ldc > N) C[(size_t)m * ldc + N] = " + store + "(v);\n";
  src += "}\n";
  codegen::GeneratedKernel k;
  k.source = src;
  k.dtype = dtype;
  k.needs_cuda_headers = dtype != "f32";  // cuda_fp16.h / cuda_bf16.h
  k.min_sm = 80;
  k.main.name = name;
  k.main.block = {16, 16, 1};
  k.main.tile_m = 16;
  k.main.tile_n = 16;
  return k;
}

// The naive kernel with relu after bias.
inline codegen::GeneratedKernel naive_relu_kernel(const std::string& dtype = "f32") {
  codegen::GeneratedKernel k = naive_kernel(dtype, Plant::correct, "planted_gemm_relu");
  std::string store_line = "  C[(size_t)m * ldc + n] =";
  k.source.insert(k.source.find(store_line), "  v = v > 0.0f ? v : 0.0f;\n");
  return k;
}

// Runs `k` validated in `s` and prints the line `schedc run` prints (and the
// failure's details), so a failing test reads like the command line.
inline runtime::RunReport run_printed(runtime::GpuSession& s, const codegen::GeneratedKernel& k,
                                      const runtime::RunOptions& o) {
  auto prepared = s.prepare(k, test_jit());
  runtime::RunReport r = s.run(*prepared, o);
  std::cout << runtime::run_line(k.main.name, o.problem, k.dtype, r) << "\n";
  if (!r.ok()) runtime::print_failure_details(std::cout, r);
  return r;
}

}  // namespace schedc::testing
