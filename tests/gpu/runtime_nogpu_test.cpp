// Runtime tests that need no GPU: NVRTC to CUBIN, ptxas-log parsing, the
// kernel cache, element encodings, validation inputs and comparison, npy.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "cli/pipeline.h"
#include "dsl/source.h"
#include "gpu_test_util.h"
#include "runtime/device_buffer.h"
#include "runtime/error.h"
#include "runtime/host_data.h"
#include "runtime/jit.h"
#include "runtime/kernel_cache.h"
#include "runtime/launch.h"
#include "runtime/npy.h"
#include "runtime/nvrtc_compile.h"
#include "runtime/validate.h"

namespace schedc {
namespace {

namespace fs = std::filesystem;
using namespace runtime;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::path(testing::test_cache_dir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// ---- NVRTC ----

TEST(Nvrtc, CompilesHandWrittenKernelForSm80AndSm90) {
  for (const char* dtype : {"f32", "f16", "bf16"})
    for (const char* arch : {"sm_80", "sm_90"}) {
      SCOPED_TRACE(std::string(dtype) + " " + arch);
      CubinResult r = compile_to_cubin(testing::naive_kernel(dtype), arch);
      EXPECT_GT(r.cubin.size(), 100u);
      ASSERT_EQ(r.functions.count("planted_gemm"), 1u) << r.log;
      const PtxasInfo& f = r.functions.at("planted_gemm");
      EXPECT_GT(f.registers, 0);
      EXPECT_EQ(f.spill_store_bytes + f.spill_load_bytes, 0);
      EXPECT_EQ(f.stack_frame_bytes, 0);
    }
}

TEST(Nvrtc, VersionLooksLikeMajorDotMinor) {
  std::string v = nvrtc_version();
  EXPECT_NE(v.find('.'), std::string::npos) << v;
}

// The naive kernel plus a function NVRTC rejects, compiled for sm_90: the
// error thrown (kind and message), or nullopt if NVRTC accepted it.
std::optional<std::pair<Error::Kind, std::string>> compile_broken(const std::string& source_file) {
  codegen::GeneratedKernel k = testing::naive_kernel();
  k.source += "extern \"C\" __global__ void broken() { undeclared_thing = 1; }\n";
  k.source_file = source_file;
  try {
    compile_to_cubin(k, "sm_90");
  } catch (const Error& e) {
    return std::make_pair(e.kind(), std::string(e.what()));
  }
  return std::nullopt;
}

TEST(Nvrtc, FailureIsAnNvrtcErrorWithLogAndNumberedSource) {
  auto err = compile_broken("");
  ASSERT_TRUE(err) << "NVRTC accepted broken source";
  const auto& [kind, msg] = *err;
  EXPECT_EQ(kind, Error::Kind::nvrtc);
  EXPECT_NE(msg.find("undeclared_thing"), std::string::npos) << msg;  // the log
  EXPECT_NE(msg.find("schedc"), std::string::npos) << msg;            // says whose bug
  EXPECT_NE(msg.find("    1 | "), std::string::npos) << msg;          // numbered source
}

// A person's file (`schedc run --kernel-source`) that NVRTC rejects is their
// error: its own kind (exit 2), named in the message and in NVRTC's log.
TEST(Nvrtc, RejectedPersonsSourceIsNotCalledASchedcBug) {
  auto err = compile_broken("edited.cu");
  ASSERT_TRUE(err) << "NVRTC accepted broken source";
  const auto& [kind, msg] = *err;
  EXPECT_EQ(kind, Error::Kind::rejected_source);
  EXPECT_NE(msg.find("the kernel source edited.cu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("edited.cu("), std::string::npos) << msg;  // NVRTC's log names the file
  EXPECT_EQ(msg.find("bug"), std::string::npos) << msg;
}

TEST(Nvrtc, OptionsCarryArchAndPtxasVerbose) {
  auto opts = nvrtc_options(testing::naive_kernel(), "sm_80");
  auto has = [&](const std::string& o) {
    return std::find(opts.begin(), opts.end(), o) != opts.end();
  };
  EXPECT_TRUE(has("--gpu-architecture=sm_80"));
  EXPECT_TRUE(has("--ptxas-options=-v"));
  EXPECT_TRUE(has("-lineinfo"));
  EXPECT_FALSE(has("-O3"));               // NVRTC rejects it
  EXPECT_TRUE(has("--split-compile=0"));  // the optimizer on every core
  auto serial = nvrtc_options(testing::naive_kernel(), "sm_80", true, false);
  EXPECT_EQ(std::find(serial.begin(), serial.end(), "--split-compile=0"), serial.end());
}

TEST(Nvrtc, NeedsCudaHeadersAddsIncludeDir) {
  codegen::GeneratedKernel k = testing::naive_kernel();
  k.needs_cuda_headers = true;
  auto opts = nvrtc_options(k, "sm_90");
  bool found = false;
  for (const std::string& o : opts) found = found || o.rfind("-I", 0) == 0;
  EXPECT_TRUE(found);
  k.source = "#include <mma.h>\n" + k.source;
  EXPECT_NO_THROW(compile_to_cubin(k, "sm_90"));
}

TEST(Ptxas, ParsesRegistersSpillsStackAndSmemPerFunction) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'k2' for 'sm_90'\n"
      "ptxas info    : Function properties for k2\n"
      "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 132 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 19.346 ms\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 1 barriers, 1024 bytes smem, 392 bytes cmem[0]\n";
  auto f = parse_ptxas_log(log);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f["k2"].registers, 132);
  EXPECT_EQ(f["k2"].stack_frame_bytes, 24);
  EXPECT_EQ(f["k2"].spill_store_bytes, 8);
  EXPECT_EQ(f["k2"].spill_load_bytes, 12);
  EXPECT_EQ(f["k2"].shared_bytes, 0);
  EXPECT_EQ(f["k"].registers, 8);
  EXPECT_EQ(f["k"].shared_bytes, 1024);
}

TEST(Nvrtc, NumberLines) {
  EXPECT_EQ(number_lines("a\nb\n"), "    1 | a\n    2 | b\n");
}

// ---- cache ----

TEST(Cache, KeyIgnoresOptionOrderButNotSourceArchOrVersion) {
  std::string k = cache_key("src", {"-a", "-b"}, "13.0", "sm_90");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, cache_key("src", {"-b", "-a"}, "13.0", "sm_90"));
  EXPECT_NE(k, cache_key("src ", {"-a", "-b"}, "13.0", "sm_90"));
  EXPECT_NE(k, cache_key("src", {"-a", "-b"}, "13.0", "sm_80"));
  EXPECT_NE(k, cache_key("src", {"-a", "-b"}, "13.1", "sm_90"));
  EXPECT_NE(k, cache_key("src", {"-a"}, "13.0", "sm_90"));
  // Field boundaries matter: ("ab", "c") is not ("a", "bc").
  EXPECT_NE(cache_key("ab", {"c"}, "1", "x"), cache_key("a", {"bc"}, "1", "x"));
}

TEST(Cache, StemIsReadable) {
  std::string key = cache_key("src", {}, "13.0", "sm_90");
  EXPECT_EQ(cache_stem(key, "sm_90", "13.0"), "gemm_" + key.substr(0, 12) + "_sm90_nvrtc13.0");
}

TEST(Cache, DefaultDirFollowsEnvironmentOrder) {
  const char* saved[3];
  const char* names[3] = {"SCHEDC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::string values[3];
  for (int i = 0; i < 3; ++i) {
    saved[i] = std::getenv(names[i]);
    values[i] = saved[i] ? saved[i] : "";
  }
  setenv("SCHEDC_CACHE_DIR", "/a", 1);
  setenv("XDG_CACHE_HOME", "/b", 1);
  setenv("HOME", "/c", 1);
  EXPECT_EQ(default_cache_dir(), "/a");
  unsetenv("SCHEDC_CACHE_DIR");
  EXPECT_EQ(default_cache_dir(), "/b/schedc");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_cache_dir(), "/c/.cache/schedc");
  for (int i = 0; i < 3; ++i)
    if (saved[i])
      setenv(names[i], values[i].c_str(), 1);
    else
      unsetenv(names[i]);
}

// The hang limit: 10 s plus the problem at 100 GFLOP/s, the 10 replaced by
// SCHEDC_HANG_SECONDS when that is a whole number of seconds in range.
TEST(Hang, LimitIsTenSecondsPlusTheProblemOrTheEnvironmentsBase) {
  const char* saved = std::getenv("SCHEDC_HANG_SECONDS");
  const std::string value = saved ? saved : "";
  compiler::Problem p;
  p.m = p.n = p.k = 1000;  // 2e9 flops: 0.02 s at 100 GFLOP/s
  unsetenv("SCHEDC_HANG_SECONDS");
  EXPECT_DOUBLE_EQ(seconds_allowed(p), 10.02);
  setenv("SCHEDC_HANG_SECONDS", "300", 1);
  EXPECT_DOUBLE_EQ(seconds_allowed(p), 300.02);
  for (const char* bad : {"", "0", "-5", "12s", "1e3", "86401"}) {
    setenv("SCHEDC_HANG_SECONDS", bad, 1);
    EXPECT_DOUBLE_EQ(seconds_allowed(p), 10.02) << "SCHEDC_HANG_SECONDS='" << bad << "'";
  }
  if (saved)
    setenv("SCHEDC_HANG_SECONDS", value.c_str(), 1);
  else
    unsetenv("SCHEDC_HANG_SECONDS");
}

TEST(Cache, StoreLoadRoundTripLeavesNoTempFiles) {
  fs::path dir = fresh_dir("roundtrip");
  KernelCache cache(dir.string());
  std::string key = cache_key("src", {}, "13.0", "sm_90"), stem = cache_stem(key, "sm_90", "13.0");
  KernelCache::Entry e{"ptxas log", {'C', 'U', 'B', 'I', 'N'}}, got;
  std::string why;
  EXPECT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::miss);
  ASSERT_TRUE(cache.store(key, stem, e, why)) << why;
  ASSERT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::hit) << why;
  EXPECT_EQ(got.log, e.log);
  EXPECT_EQ(got.cubin, e.cubin);
  int files = 0;
  for (auto& f : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(f.path().filename().string().find(".tmp"), std::string::npos) << f.path();
  }
  EXPECT_EQ(files, 1);
}

TEST(Cache, CorruptEntriesAreDetected) {
  fs::path dir = fresh_dir("corrupt");
  KernelCache cache(dir.string());
  std::string key = cache_key("src", {}, "13.0", "sm_90"), stem = cache_stem(key, "sm_90", "13.0");
  KernelCache::Entry e{"log", std::vector<char>(1000, 'x')}, got;
  std::string why;
  ASSERT_TRUE(cache.store(key, stem, e, why));
  std::string path = cache.path(stem);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << b;
  };
  // Truncated in the body, truncated in the header, one flipped byte, foreign file, other key.
  write(bytes.substr(0, bytes.size() - 10));
  EXPECT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::corrupt);
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  write(bytes.substr(0, 20));
  EXPECT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::corrupt);
  std::string flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x40;
  write(flipped);
  EXPECT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::corrupt);
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
  write(
      "\x7f"
      "ELF not ours at all, but long enough to hold a header of sixty-four bytes...");
  EXPECT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::corrupt);
  write(bytes);
  std::string other = cache_key("other", {}, "13.0", "sm_90");
  EXPECT_EQ(cache.load(other, stem, got, why), KernelCache::Lookup::corrupt);
  EXPECT_EQ(cache.load(key, stem, got, why), KernelCache::Lookup::hit);
}

TEST(Cache, JitMissThenHitThenRebuildsCorruptEntryWithWarning) {
  fs::path dir = fresh_dir("jit");
  JitOptions opt;
  opt.cache_dir = dir.string();
  std::ostringstream warnings;
  opt.warnings = &warnings;
  codegen::GeneratedKernel k = testing::naive_kernel("f32", testing::Plant::correct, "jit_probe");
  JitResult cold = jit(k, "sm_90", opt);
  EXPECT_FALSE(cold.cache_hit);
  ASSERT_TRUE(fs::exists(cold.cache_path)) << cold.cache_path;
  EXPECT_NE(cold.cache_path.find("_sm90_nvrtc"), std::string::npos);
  JitResult warm = jit(k, "sm_90", opt);
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.cubin, cold.cubin);
  EXPECT_EQ(warm.functions.at("jit_probe").registers, cold.functions.at("jit_probe").registers);
  EXPECT_TRUE(warnings.str().empty()) << warnings.str();

  fs::resize_file(cold.cache_path, fs::file_size(cold.cache_path) / 2);  // truncate by hand
  JitResult rebuilt = jit(k, "sm_90", opt);
  EXPECT_FALSE(rebuilt.cache_hit);
  EXPECT_EQ(rebuilt.cubin, cold.cubin);
  EXPECT_NE(warnings.str().find("corrupt"), std::string::npos) << warnings.str();
  EXPECT_TRUE(jit(k, "sm_90", opt).cache_hit);

  // Another architecture is another entry; --no-cache neither reads nor writes.
  EXPECT_FALSE(jit(k, "sm_80", opt).cache_hit);
  JitOptions off = opt;
  off.use_cache = false;
  JitResult nocache = jit(k, "sm_90", off);
  EXPECT_FALSE(nocache.cache_hit);
  EXPECT_TRUE(nocache.cache_path.empty());
}

// bench and ablate compile every entry they will run side by side first:
// afterwards each is a cache hit; a module without entry guards (a planted
// kernel) is compiled whole, once; without a cache nothing is compiled.
TEST(Cache, PrecompileFillsTheCacheWithEveryEntryOnce) {
  fs::path dir = fresh_dir("precompile");
  JitOptions opt;
  opt.cache_dir = dir.string();
  compiler::Target target;
  ASSERT_TRUE(compiler::target_for_arch("sm_90", target));
  std::ostringstream err;
  auto file =
      std::make_shared<dsl::SourceFile>("pre.sched", "tile 64x64x8\nthread 4x4\nvectorize 4\n");
  std::optional<cli::Compiled> c = cli::compile_source(file, target, err);
  ASSERT_TRUE(c) << err.str();
  const codegen::GeneratedKernel& k = c->kernel;
  std::vector<std::string> entries = entries_for(k, compiler::Problem{256, 256, 256});
  ASSERT_EQ(entries, std::vector<std::string>{k.main.name});
  entries.push_back(entries_for(k, compiler::Problem{127, 129, 65})[0]);  // lda 65: the fallback
  ASSERT_EQ(entries[1], k.fallback.name);
  codegen::GeneratedKernel p1 = testing::naive_kernel("f32", testing::Plant::correct, "pre_one");
  codegen::GeneratedKernel p2 = testing::naive_kernel("f16", testing::Plant::correct, "pre_two");
  ASSERT_FALSE(p1.entry_guards);

  JitOptions off = opt;
  off.use_cache = false;
  EXPECT_EQ(precompile({{&k, entries}}, "sm_90", off, 2), 0);
  EXPECT_TRUE(fs::is_empty(dir));

  EXPECT_GT(precompile({{&k, entries}, {&p1, {"pre_one"}}, {&p2, {"ignored: compiled whole"}}},
                       "sm_90", opt, 2),
            0);
  size_t cubins = 0;
  for (const auto& e : fs::directory_iterator(dir)) cubins += e.path().extension() == ".cubin";
  EXPECT_EQ(cubins, 4u);  // main, fallback, and each planted module whole
  for (const std::string& e : entries) EXPECT_TRUE(jit(k, "sm_90", opt, e).cache_hit) << e;
  EXPECT_TRUE(jit(p1, "sm_90", opt).cache_hit);
  EXPECT_TRUE(jit(p2, "sm_90", opt).cache_hit);
}

TEST(Cache, KeepSourceWritesTheCuBesideTheEntry) {
  fs::path dir = fresh_dir("keep");
  JitOptions opt;
  opt.cache_dir = dir.string();
  setenv("SCHEDC_KEEP_SOURCE", "1", 1);
  codegen::GeneratedKernel k = testing::naive_kernel("f32", testing::Plant::correct, "keep_probe");
  JitResult r = jit(k, "sm_90", opt);
  unsetenv("SCHEDC_KEEP_SOURCE");
  fs::path cu = fs::path(r.cache_path).replace_extension(".cu");
  ASSERT_TRUE(fs::exists(cu)) << cu;
  std::ifstream in(cu);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, k.source);
}

// ---- element types and inputs ----

TEST(HostData, HalfAndBf16RoundToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);               // ties to even -> inf
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);     // tie -> even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3c02);     // tie -> even (up)
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  for (uint32_t h = 0; h < 0x7c00; ++h) ASSERT_EQ(float_to_half(half_to_float(uint16_t(h))), h);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 1.0f / 256)), 1.0f);  // tie -> even
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

double max_abs_product_sum(const compiler::Problem& p, const GemmInputs& in) {
  double worst = 0;
  for (int64_t j = 0; j < p.n; ++j) {
    double col = 0;
    for (int64_t k = 0; k < p.k; ++k) col += std::fabs(in.b[size_t(k * p.b_ld() + j)]);
    worst = std::max(worst, col * in.exact_range);
  }
  return worst;
}

TEST(HostData, ExactInputsStayWithinTheOutputTypesExactRange) {
  struct Case {
    ElemType t;
    int64_t k;
    double limit;
  } cases[] = {{ElemType::f32, 4096, 16777216}, {ElemType::f16, 65, 2048},
               {ElemType::f16, 1023, 2048},     {ElemType::f16, 4096, 2048},
               {ElemType::bf16, 65, 256},       {ElemType::bf16, 4096, 256}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.t)) + " K=" + std::to_string(c.k));
    compiler::Problem p{7, 13, c.k};
    GemmInputs in = make_inputs(p, c.t, InputMode::exact, 1, 1.0f, 1.0f, true);
    EXPECT_LE(max_abs_product_sum(p, in) + 2 + 2, c.limit);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t k = 0; k < p.k; ++k) {
        float v = in.a[size_t(i * p.k + k)];
        ASSERT_TRUE(v != 0 && v == std::floor(v) && std::fabs(v) <= 2);  // never zero
      }
  }
}

TEST(HostData, InputsAreSeededAndPaddingIsNaN) {
  compiler::Problem p{5, 6, 7, 8, 7, 9};
  GemmInputs a = make_inputs(p, ElemType::f32, InputMode::random, 3, 1, 0, false);
  GemmInputs b = make_inputs(p, ElemType::f32, InputMode::random, 3, 1, 0, false);
  GemmInputs c = make_inputs(p, ElemType::f32, InputMode::random, 4, 1, 0, false);
  EXPECT_EQ(std::memcmp(a.a.data(), b.a.data(), a.a.size() * 4), 0);
  EXPECT_NE(a.a[0], c.a[0]);
  EXPECT_TRUE(std::isnan(a.a[7]));  // A row 0, column 7 = lda padding
  EXPECT_FALSE(std::isnan(a.a[6]));
  EXPECT_TRUE(std::isnan(a.c0[0]));     // beta == 0: C is all poison
  EXPECT_TRUE(std::isnan(a.b[6 + 0]));  // ldb 7 > N 6
}

// ---- comparison ----

struct CompareCase {
  compiler::Problem p{3, 4, 5, 0, 0, 6};
  std::vector<float> expected = std::vector<float>(12);
  std::vector<float> got = std::vector<float>(18, NAN);
  CompareCase() {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        expected[size_t(i * 4 + j)] = got[size_t(i * 6 + j)] = float(i - j);
  }
  ValidationResult run(bool exact, const std::vector<float>* sent_override = nullptr) {
    std::vector<char> sent = encode(ElemType::f32, std::vector<float>(18, NAN));
    std::vector<char> raw = encode(ElemType::f32, got);
    Tolerance tol = random_tolerance(RefMode::f32_pedantic, ElemType::f32, p.k);
    return compare(p, exact ? InputMode::exact : InputMode::random, ElemType::f32, got, raw,
                   sent_override ? encode(ElemType::f32, *sent_override) : sent, expected, exact,
                   tol);
  }
};

TEST(Compare, ExactMatchPasses) {
  CompareCase c;
  ValidationResult r = c.run(true);
  EXPECT_TRUE(r.ok) << r.failure;
  EXPECT_EQ(r.rel_err, 0);
}

TEST(Compare, OneUlpFailsExactModeAndNamesTheElement) {
  CompareCase c;
  c.got[1 * 6 + 2] = std::nextafter(c.got[1 * 6 + 2], 10.0f);
  ValidationResult r = c.run(true);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].row, 1);
  EXPECT_EQ(r.first[0].col, 2);
  EXPECT_EQ(r.worst.row, 1);
}

TEST(Compare, NaNNeverPasses) {
  CompareCase c;
  c.got[0] = NAN;
  EXPECT_FALSE(c.run(true).ok);
  ValidationResult r = c.run(false);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.nan_count, 1);
}

TEST(Compare, WritesIntoLdPaddingFail) {
  CompareCase c;
  c.got[0 * 6 + 4] = 1.0f;  // row 0, column 4: padding (N = 4, ldc = 6)
  ValidationResult r = c.run(true);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.padding_writes, 1);
}

TEST(Compare, AllZeroReferenceOrResultFails) {
  CompareCase c;
  for (float& v : c.expected) v = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) c.got[size_t(i * 6 + j)] = 0;
  EXPECT_FALSE(c.run(true).ok);
}

// A C large enough to be compared in several chunks of rows on several
// threads (runtime/parallel_chunks.h): the counts, the worst element and the
// first mismatches come out as one pass in row order would give them.
TEST(Compare, ChunkedCompareReportsInRowOrder) {
  compiler::Problem p{3000, 128, 8};  // 2048 rows a chunk: two chunks
  std::vector<float> expected(size_t(p.m * p.n));
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = float(int(i % 97) - 48);
  std::vector<float> got = expected;
  // Seven wrong elements, the first in the second chunk; two equally worst
  // ones (off by 5), the first of them at row 2500.
  const std::vector<std::pair<int, int>> wrong = {{2100, 3}, {2100, 90}, {2500, 0},  {2600, 1},
                                                  {2700, 2}, {2999, 5},  {2999, 127}};
  for (auto [i, j] : wrong) got[size_t(i * p.n + j)] += (i == 2500 || i == 2999) && j != 5 ? 5 : 1;
  const std::vector<char> raw = encode(ElemType::f32, got);
  const Tolerance tol = random_tolerance(RefMode::f32_pedantic, ElemType::f32, p.k);
  ValidationResult r =
      compare(p, InputMode::exact, ElemType::f32, got, raw, raw, expected, true, tol);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.checked, p.m * p.n);
  EXPECT_EQ(r.mismatches, 7);
  ASSERT_EQ(r.first.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(r.first[k].row, wrong[k].first) << k;
    EXPECT_EQ(r.first[k].col, wrong[k].second) << k;
  }
  EXPECT_EQ(r.worst.row, 2500);
  EXPECT_EQ(r.worst.col, 0);
  EXPECT_EQ(r.worst_abs_err, 5);
  // Unchanged: the worst is the first element, as the serial pass had it.
  r = compare(p, InputMode::exact, ElemType::f32, expected, raw, raw, expected, true, tol);
  EXPECT_TRUE(r.ok) << r.failure;
  EXPECT_EQ(r.worst.row, 0);
  EXPECT_EQ(r.worst.col, 0);
}

TEST(Compare, RandomModeToleratesRoundingButNotAWrongElement) {
  CompareCase c;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      c.got[size_t(i * 6 + j)] = std::nextafter(c.got[size_t(i * 6 + j)], 100.0f);
  EXPECT_TRUE(c.run(false).ok);
  c.got[2 * 6 + 3] += 0.5f;
  EXPECT_FALSE(c.run(false).ok);
}

TEST(Tolerance, OnePlaceWithReasonsAndSensibleSizes) {
  Tolerance f32 = random_tolerance(RefMode::f32_pedantic, ElemType::f32, 4096);
  Tolerance tf32 = random_tolerance(RefMode::tf32, ElemType::f32, 4096);
  Tolerance f16 = random_tolerance(RefMode::f16, ElemType::f16, 4096);
  Tolerance bf16 = random_tolerance(RefMode::bf16, ElemType::bf16, 4096);
  EXPECT_LT(f32.rel_frobenius, 1e-4);
  EXPECT_LT(f32.rel_frobenius, f16.rel_frobenius);
  EXPECT_LT(f16.rel_frobenius, bf16.rel_frobenius);
  EXPECT_LT(f16.rel_frobenius, tf32.rel_frobenius);
  EXPECT_LT(bf16.rel_frobenius, 0.05);
  EXPECT_FALSE(f32.reason.empty());
  EXPECT_TRUE(exact_scale(1.0f));
  EXPECT_TRUE(exact_scale(-0.5f));
  EXPECT_TRUE(exact_scale(3.0f));
  EXPECT_FALSE(exact_scale(0.1f));
}

TEST(ReferenceMode, MatchesTheKernelsArithmetic) {
  codegen::GeneratedKernel k = testing::naive_kernel();
  EXPECT_EQ(reference_mode(k), RefMode::f32_pedantic);
  k.tensor_cores = true;
  k.mma_type = "tf32";
  EXPECT_EQ(reference_mode(k), RefMode::tf32);
  EXPECT_EQ(reference_mode(testing::naive_kernel("f16")), RefMode::f16);
  EXPECT_EQ(reference_mode(testing::naive_kernel("bf16")), RefMode::bf16);
}

// ---- launch choice ----

TEST(Launch, FallbackWhenAlignmentPreconditionsFail) {
  codegen::GeneratedKernel k = testing::naive_kernel();
  k.main.align_bytes = 16;
  k.main.ld_multiple = 4;
  k.fallback = k.main;
  k.fallback.name = "fallback";
  k.fallback.align_bytes = 0;
  k.fallback.ld_multiple = 1;
  alignas(16) static float buf[8];
  compiler::Problem packed{64, 64, 64};
  EXPECT_FALSE(choose_entry(k, packed, buf, buf, buf).fallback);
  compiler::Problem ragged{64, 64, 64, 65, 64, 64};
  EntryChoice c = choose_entry(k, ragged, buf, buf, buf);
  EXPECT_TRUE(c.fallback);
  EXPECT_NE(c.why.find("lda = 65"), std::string::npos) << c.why;
  EXPECT_TRUE(choose_entry(k, packed, buf + 1, buf, buf).fallback);
  k.fallback = {};
  EXPECT_THROW(choose_entry(k, ragged, buf, buf, buf), Error);
}

// A SIMT main entry stores C as float4 groups with no element-by-element
// path at C's right edge: it runs only when N is a multiple of 4, even with
// aligned pointers and padded leading dimensions; the fallback takes the rest.
TEST(Launch, RaggedNGoesToTheFallback) {
  std::ostringstream err;
  std::optional<cli::Compiled> compiled =
      cli::compile_source(std::make_shared<dsl::SourceFile>(
                              "t.sched", "tile 128x128x8\nthread 8x8\nvectorize 4\nstages 2\n"),
                          compiler::Target{}, err);
  ASSERT_TRUE(compiled) << err.str();
  const codegen::GeneratedKernel& k = compiled->kernel;
  ASSERT_TRUE(k.has_fallback());
  EXPECT_EQ(k.main.n_multiple, 4u);
  EXPECT_EQ(k.fallback.n_multiple, 1u);
  EXPECT_EQ(k.source.find("if (n + e < N) store_c", k.source.find(k.main.name + "(")),
            k.source.find("if (n + e < N) store_c", k.source.find(k.fallback.name + "(")))
      << "only the fallback has the element-by-element edge";
  alignas(16) static float buf[8];
  const compiler::Problem n_multiple{64, 68, 64, 64, 68, 68};
  EXPECT_FALSE(choose_entry(k, n_multiple, buf, buf, buf).fallback);
  const compiler::Problem ragged_n{64, 65, 64, 64, 68, 68};  // padded lds, N odd
  const EntryChoice c = choose_entry(k, ragged_n, buf, buf, buf);
  EXPECT_TRUE(c.fallback);
  EXPECT_NE(c.why.find("N = 65 is not a multiple of 4"), std::string::npos) << c.why;
}

// An operand the main entry copies element by element (a transposed A under
// cp.async) is left out of the preconditions: an odd lda or an A at 4 bytes
// past alignment keeps the main entry; B and C still count.
TEST(Launch, OnlyVectorAccessedOperandsMakePreconditions) {
  std::ostringstream err;
  std::optional<cli::Compiled> compiled = cli::compile_source(
      std::make_shared<dsl::SourceFile>("t.sched",
                                        "tile 256x128x16\nthread 16x8 split 4x2\nwarp 64x64\n"
                                        "vectorize 4\ntranspose A\npad A 4\nstages 3\n"),
      compiler::Target{}, err);
  ASSERT_TRUE(compiled) << err.str();
  const codegen::GeneratedKernel& k = compiled->kernel;
  ASSERT_TRUE(k.has_fallback());
  EXPECT_FALSE(k.main.aligned[0]);
  EXPECT_TRUE(k.main.aligned[1] && k.main.aligned[2]);
  EXPECT_EQ(k.main.aligned_operands(), "B, C");
  alignas(16) static float buf[8];
  compiler::Problem odd_lda{64, 64, 65, 65, 64, 64};
  EXPECT_FALSE(choose_entry(k, odd_lda, buf + 1, buf, buf).fallback);
  compiler::Problem odd_ldb{64, 64, 64, 64, 65, 64};
  EntryChoice c = choose_entry(k, odd_ldb, buf, buf, buf);
  EXPECT_TRUE(c.fallback);
  EXPECT_NE(c.why.find("ldb = 65"), std::string::npos) << c.why;
  EXPECT_TRUE(choose_entry(k, odd_lda, buf, buf, buf + 1).fallback);
}

// ---- npy ----

TEST(Npy, HeaderIsVersion1AlignedTo64AndDataIsPacked) {
  std::vector<float> m = {1, 2, 99, 3, 4, 99};  // 2 x 2 with ld 3
  std::string b = npy_bytes(m, 2, 2, 3);
  ASSERT_GE(b.size(), 10u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len = uint8_t(b[8]) | (uint8_t(b[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  std::string header = b.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (2, 2)"), std::string::npos);
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(b.size(), 10 + header_len + 16);
  float last;
  std::memcpy(&last, b.data() + b.size() - 4, 4);
  EXPECT_EQ(last, 4.0f);
}

}  // namespace
}  // namespace schedc
