#include "runtime/run.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <sstream>
#include <thread>

#include "runtime/cuda_libs.h"
#include "runtime/error.h"
#include "runtime/host_cases.h"
#include "runtime/npy.h"
#include "runtime/reference.h"

namespace schedc::runtime {

namespace {

using Clock = std::chrono::steady_clock;

// Host memory for validation cases kept between runs: at 4096^3 f32 one
// mode's case is 256 MB, so the three shapes of a tune (both modes) fit.
constexpr size_t kHostCaseBytes = size_t(3) << 30;

void check_problem(const compiler::Problem& p) {
  auto bad = [](const std::string& what) {
    throw Error(Error::Kind::cuda, "invalid problem: " + what);
  };
  if (p.m < 1 || p.n < 1 || p.k < 1) bad("M, N and K must be >= 1");
  if (p.a_ld() < p.a_row_len()) bad(p.a_col ? "lda < M (A column-major)" : "lda < K");
  if (p.b_ld() < p.b_row_len()) bad(p.b_col ? "ldb < K (B column-major)" : "ldb < N");
  if (p.c_ld() < p.c_row_len()) bad(p.c_col ? "ldc < M (C column-major)" : "ldc < N");
  const int64_t int_max = 2147483647;
  if (p.a_rows() * p.a_ld() > int_max || p.b_rows() * p.b_ld() > int_max ||
      p.c_rows() * p.c_ld() > int_max)
    bad("a matrix has more than 2^31 - 1 elements (the kernel ABI indexes with int)");
  static const char* const kStrideNames[3] = {"stride_a", "stride_b", "stride_c"};
  if (std::string why = batch_error(p, kStrideNames); !why.empty()) bad(why);
}

// The case key: everything a HostCase depends on.
std::string case_key(const compiler::Problem& p, ElemType t, RefMode ref, InputMode mode,
                     uint64_t seed, const compiler::Epilogue& epi) {
  std::ostringstream k;
  k.precision(9);
  k << p.m << ' ' << p.n << ' ' << p.k << ' ' << p.a_ld() << ' ' << p.b_ld() << ' ' << p.c_ld()
    << ' ' << p.a_col << p.b_col << p.c_col << ' ' << p.batch << ' ' << p.a_stride() << ' '
    << p.b_stride() << ' ' << p.c_stride() << ' ' << int(t) << ' ' << int(ref) << ' ' << int(mode)
    << ' ' << seed << ' ' << epi.alpha << ' ' << epi.beta << ' ' << epi.bias << epi.relu
    << epi.requantize << epi.scale;
  return k.str();
}

// Draws the inputs and computes cuBLAS's reference (in dA, dB and dRef), or
// finds them in `cache`. With `keep_inputs` (.npy files are saved) the case
// also holds the inputs as drawn and is neither looked up nor kept. `t` is
// A's and B's type, `out` C's (s32 for s8, else t).
std::shared_ptr<const HostCase> host_case(HostCaseCache& cache, void* cublas_handle,
                                          cudaStream_t stream, const compiler::Problem& p,
                                          ElemType t, ElemType out, RefMode ref, InputMode mode,
                                          uint64_t seed, const compiler::Epilogue& epi,
                                          bool keep_inputs, const DeviceBuffer& dA,
                                          const DeviceBuffer& dB, const DeviceBuffer& dRef) {
  const std::string key = case_key(p, t, ref, mode, seed, epi);
  if (!keep_inputs)
    if (auto found = cache.find(key)) return found;
  auto hc = std::make_shared<HostCase>();
  GemmInputs in = make_inputs(p, t, mode, seed, epi);
  hc->a = encode(t, in.a);
  hc->b = encode(t, in.b);
  hc->bias = in.bias;
  hc->scale = in.scale;
  hc->sent = encode(out, in.c0);
  hc->ref = ref;
  dA.upload(hc->a.data(), dA.bytes(), "A", stream);
  dB.upload(hc->b.data(), dB.bytes(), "B", stream);
  compute_reference(*hc, in, cublas_handle, stream, p, t, ref, epi, dA, dB, dRef);
  if (keep_inputs)
    hc->inputs = std::move(in);
  else
    cache.insert(key, hc);
  return hc;
}

}  // namespace

bool RunReport::ok() const {
  for (const ValidationResult& v : validations)
    if (!v.ok) return false;
  return race.empty();
}

std::string RunReport::failure() const {
  std::string out;
  for (const ValidationResult& v : validations)
    if (!v.ok) out += (out.empty() ? "" : "; ") + std::string(to_string(v.mode)) + ": " + v.failure;
  if (!race.empty()) out += (out.empty() ? "" : "; ") + race;
  return out;
}

double RunReport::rel_err() const {
  for (const ValidationResult& v : validations)
    if (v.mode == InputMode::random) return v.rel_err;
  return validations.empty() ? 0 : validations.front().rel_err;
}

double RunReport::percent_of_cublas() const {
  if (timed && !no_baseline.empty()) return std::nan("");  // no baseline, no ratio
  return timed && kernel.median_ms > 0 ? 100.0 * cublas.median_ms / kernel.median_ms : 0;
}

GpuSession::GpuSession(const DeviceInfo& device)
    : device_(device), cases_(std::make_unique<HostCaseCache>(kHostCaseBytes)) {
  auto t0 = Clock::now();
  check_cuda(cudaSetDevice(device.ordinal), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree(0) (creating the CUDA context)");
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreate(&s), "cudaStreamCreate");
  stream_ = s;
  cublasHandle_t h = nullptr;
  check_cublas(cublas().Create(&h), "cublasCreate");
  cublas_ = h;
  check_cublas(cublas().SetStream(h, s), "cublasSetStream");
  // After SetStream, which resets the workspace to the default pool.
  const size_t workspace = size_t(device.sm >= 90 ? 32 : 4) << 20;
  check_cuda(cudaMalloc(&cublas_workspace_, workspace), "cudaMalloc (cuBLAS workspace)");
  check_cublas(cublas().SetWorkspace(h, cublas_workspace_, workspace), "cublasSetWorkspace");
  init_ms_ = ms_since(t0);
}

GpuSession::~GpuSession() {
  if (kernel_hung()) return;  // cublasDestroy would wait for the hung kernel
  if (cublas_) cublas().Destroy(static_cast<cublasHandle_t>(cublas_));
  if (cublas_workspace_) cudaFree(cublas_workspace_);
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

std::unique_ptr<GpuSession> start_session(const DeviceInfo& device, std::string& error) {
  try {
    return std::make_unique<GpuSession>(device);
  } catch (const Error& e) {
    error = e.what();
    return nullptr;
  }
}

std::shared_ptr<PreparedKernel> GpuSession::prepare(const codegen::GeneratedKernel& kernel,
                                                    const JitOptions& jit_options,
                                                    const compiler::Problem* problem) {
  auto p = std::make_shared<PreparedKernel>();
  p->kernel = kernel;
  p->module = std::make_unique<Module>(p->kernel, device_.ordinal, device_.arch(), jit_options);
  Module::Required r =
      p->module->require(problem ? entries_for(p->kernel, *problem) : main_entries(p->kernel));
  p->entries = std::move(r.entries);
  p->jit = std::move(r.jit);
  p->load_ms = r.load_ms;
  return p;
}

RunReport GpuSession::run(const PreparedKernel& prepared, const RunOptions& options) {
  const codegen::GeneratedKernel& kernel = prepared.kernel;
  // The problem in the kernel's layouts: its leading dimensions (0: packed)
  // are in those.
  const compiler::Problem p = kernel.in_layouts(options.problem);
  check_problem(p);
  if (p.batch > 1 && !kernel.batched)
    throw Error(Error::Kind::cuda, "a batch of " + std::to_string(p.batch) + " GEMMs asked of " +
                                       kernel.main.name +
                                       ": the kernel computes one GEMM; its schedule has no "
                                       "'batch' directive");
  // A's and B's type, and C's: they differ for s8 (int8 in, int32 out, or
  // int8 out when requantized).
  const ElemType t = elem_type(kernel.dtype), out = output_type(kernel.dtype, kernel.c_dtype);
  const size_t es = size_t(elem_size(t)), es_out = size_t(elem_size(out));
  const compiler::Epilogue epi = kernel_epilogue(kernel, options.epilogue);
  auto stream = static_cast<cudaStream_t>(stream_);

  RunReport report;
  report.ref_mode = reference_mode(kernel);
  // The timed baseline's mode: the reference's as the kernel asks it (s8:
  // cuBLAS int8 even where the reference fell back to f64).
  const RefMode baseline_mode = report.ref_mode;

  // Every GEMM of a batch at its stride (the gaps poisoned like ld padding).
  DeviceBuffer dA(size_t(p.a_span()) * es, "A"), dB(size_t(p.b_span()) * es, "B"),
      dC(size_t(p.c_span()) * es_out, "C");
  // f32, or s32 for s8: 4 bytes an element either way.
  DeviceBuffer dRef(size_t(p.batch * p.m * p.n) * 4, "the cuBLAS reference");
  DeviceBuffer dBias(epi.bias ? size_t(p.n) * 4 : 0, "bias");
  DeviceBuffer dScale(epi.scale ? size_t(p.n) * 4 : 0, "the per-channel scales");
  report.entry = choose_entry(kernel, p, dA.get(), dB.get(), dC.get());
  report.late = prepared.module->require(entries_for(kernel, report.entry));

  GemmArgs args{dA.get(),  dB.get(), dC.get(),
                epi.alpha, epi.beta, epi.bias ? static_cast<const float*>(dBias.get()) : nullptr};
  if (epi.scale) args.scale = static_cast<const float*>(dScale.get());
  auto launch = [&] { prepared.module->launch(report.entry, p, args, stream); };

  // C after the random-mode run, to spot races later, and what was sent.
  std::vector<char>& random_result = scratch_.random_result;
  random_result.clear();
  std::shared_ptr<const HostCase> random_case;
  std::vector<char> unvalidated_sent;  // C0 when nothing is validated
  const std::vector<char>* random_sent = &unvalidated_sent;
  if (options.validate) {
    auto t0 = Clock::now();
    // A relu can zero the whole reference on tiny shapes (1x1x1 with a
    // negative product); comparing against zeros would prove nothing, so such
    // inputs are drawn again with another seed, a bounded number of times.
    constexpr int kMaxDraws = 16;
    // A requantized (int8) C: random inputs only; its sums are exact in
    // every mode, and exact mode's small integers scale to zeros.
    std::vector<InputMode> modes = {InputMode::exact, InputMode::random};
    if (epi.requantize) modes = {InputMode::random};
    for (InputMode mode : modes)
      for (int draw = 0;; ++draw) {
        uint64_t seed = options.seed + uint64_t(draw) * 1000003u;
        const std::shared_ptr<const HostCase> hc =
            host_case(*cases_, cublas_, stream, p, t, out, baseline_mode, mode, seed, epi,
                      !options.save_dir.empty(), dA, dB, dRef);
        if (hc->ref != baseline_mode) report.ref_mode = hc->ref;  // s8 checked against f64
        dA.upload(hc->a.data(), dA.bytes(), "A", stream);
        dB.upload(hc->b.data(), dB.bytes(), "B", stream);
        if (epi.bias) dBias.upload(hc->bias.data(), dBias.bytes(), "bias", stream);
        if (epi.scale) dScale.upload(hc->scale.data(), dScale.bytes(), "scale", stream);
        // C holds C0 where beta reads it, NaN everywhere else (the poison).
        const std::vector<char>& sent = hc->sent;
        dC.upload(sent.data(), dC.bytes(), "C (poisoned)", stream);

        launch();
        wait_or_hang(stream, seconds_allowed(p),
                     "running " + report.entry.name + " (cudaStreamSynchronize)");
        std::vector<char>& got_raw = scratch_.got_raw;
        got_raw.resize(dC.bytes());
        dC.download(got_raw.data(), got_raw.size(), "C", stream);
        const std::vector<float>& expected = hc->expected;
        const GemmInputs& in = hc->inputs;

        std::vector<float>& got = scratch_.got;
        std::vector<int32_t>& got_s32 = scratch_.got_s32;
        ValidationResult v;
        if (epi.requantize) {  // int8 values, bit for bit
          decode_s8_into(got_raw, got_s32);
          v = compare_s8(p, mode, got_s32, got_raw, sent, hc->expected_s32);
        } else if (is_integer(out)) {  // s8: int32 values, always bit for bit
          decode_s32_into(got_raw, got_s32);
          v = compare_s32(p, mode, got_s32, got_raw, sent, hc->expected_s32);
        } else {
          bool bit_exact =
              mode == InputMode::exact && exact_scale(epi.alpha) && exact_scale(epi.beta);
          decode_into(t, got_raw, got);
          v = compare(p, mode, t, got, got_raw, sent, expected, bit_exact,
                      random_tolerance(report.ref_mode, t, p.k));
        }
        if (v.ref_norm == 0 && v.nan_count == 0 && epi.relu && draw + 1 < kMaxDraws) continue;
        report.validations.push_back(v);

        if (!options.save_dir.empty()) {
          namespace fs = std::filesystem;
          fs::path dir = mode == InputMode::random ? fs::path(options.save_dir)
                                                   : fs::path(options.save_dir) / "exact";
          std::error_code ec;
          fs::create_directories(dir, ec);
          if (ec)
            throw Error(Error::Kind::io, "cannot create " + dir.string() + ": " + ec.message());
          // A batch's matrices (`batch` of them) are saved as one batch x
          // rows x cols array; bias, every GEMM's, as one row.
          auto save = [&](const char* name, const auto& m, int64_t batch, int64_t r, int64_t c,
                          int64_t ld, int64_t stride) {
            std::string why, path = (dir / name).string();
            if (!write_npy(path, m, r, c, ld, why, batch, stride))
              throw Error(Error::Kind::io, why);
            report.saved.push_back(path);
          };
          // As stored: with layout A col (B col), A.npy holds the K x M
          // matrix A^T (B.npy the N x K matrix B^T).
          const int64_t b = p.batch;
          save("A.npy", in.a, b, p.a_rows(), p.a_row_len(), p.a_ld(), p.a_stride());
          save("B.npy", in.b, b, p.b_rows(), p.b_row_len(), p.b_ld(), p.b_stride());
          if (is_integer(out)) {  // int32, exact
            save("C_schedc.npy", got_s32, b, p.c_rows(), p.c_row_len(), p.c_ld(), p.c_stride());
            save("C_cublas.npy", hc->expected_s32, b, p.m, p.n, p.n, p.m * p.n);
          } else {
            save("C_schedc.npy", got, b, p.c_rows(), p.c_row_len(), p.c_ld(), p.c_stride());
            save("C_cublas.npy", expected, b, p.m, p.n, p.n, p.m * p.n);
          }
          if (epi.beta != 0.0f)
            save("C0.npy", in.c0, b, p.c_rows(), p.c_row_len(), p.c_ld(), p.c_stride());
          if (epi.bias) save("bias.npy", in.bias, 1, 1, p.n, p.n, 0);
          if (epi.scale) save("scale.npy", in.scale, 1, 1, p.n, p.n, 0);
        }
        if (mode == InputMode::random) {
          random_result.swap(got_raw);  // both the session's: no 64 MB copy
          random_case = hc;
          random_sent = &hc->sent;
        }
        break;
      }
    report.validate_ms = ms_since(t0);
  } else {
    const GemmInputs in = make_inputs(p, t, InputMode::random, options.seed, epi);
    dA.upload(encode(t, in.a).data(), dA.bytes(), "A", stream);
    dB.upload(encode(t, in.b).data(), dB.bytes(), "B", stream);
    if (epi.bias) dBias.upload(in.bias.data(), dBias.bytes(), "bias", stream);
    if (epi.scale) dScale.upload(in.scale.data(), dScale.bytes(), "scale", stream);
    unvalidated_sent = encode(out, in.c0);
    dC.upload(unvalidated_sent.data(), dC.bytes(), "C", stream);
  }

  // A wrong kernel is not worth timing.
  if (options.time && report.ok()) {
    auto t0 = Clock::now();
    TimingOptions topt = options.timing;
    if (topt.hang_seconds <= 0) topt.hang_seconds = seconds_allowed(p);
    const std::unique_ptr<DeviceBuffer> flush =
        l2_flush_buffer(options.flush_l2, device_.l2_bytes, topt);
    // cuBLAS writes its own C (kernel's type and ldc; baseline_c); its runs
    // alternate with the kernel's in one harness (runtime/timing.h says why).
    const BaselineC base = baseline_c(epi, p.c_span(), *random_sent, stream);
    const DeviceBuffer& dCublas = *base.c;
    const compiler::Epilogue& base_epi = base.epi;
    auto cublas_launch = [&] {
      cublas_gemm(cublas_, baseline_mode, t, p, dA.get(), dB.get(), kernel_c(p, dCublas.get()),
                  base_epi.alpha, base_epi.beta);
    };
    // s8: one call says whether cuBLAS int8 takes the kernel's C.
    report.no_baseline = int8_baseline_refusal(cublas_, baseline_mode, t, p, dA.get(), dB.get(),
                                               dCublas.get(), base_epi);
    std::vector<std::function<void()>> launches = {launch};
    if (report.no_baseline.empty()) launches.push_back(cublas_launch);
    const std::vector<TimingStats> stats = time_interleaved(launches, stream_, topt);
    report.kernel = stats[0];
    if (stats.size() > 1) report.cublas = stats[1];
    // With beta == 0 every run must write the same C: a change is a race.
    if (!random_result.empty() && epi.beta == 0.0f)
      report.race = race_after_timing(dC, random_result, scratch_.again, stream);
    report.timed = true;
    report.time_ms = ms_since(t0);
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (end of run)");
  return report;
}

}  // namespace schedc::runtime
