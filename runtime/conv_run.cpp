// GpuSession::run_conv (runtime/conv_run.h; docs/runtime.md, "Convolution").
#include "runtime/conv_run.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>

#include "dsl/diagnostics.h"
#include "runtime/conv_args.h"
#include "runtime/conv_launch.h"
#include "runtime/device_buffer.h"
#include "runtime/error.h"
#include "runtime/im2col.h"
#include "runtime/reference.h"

namespace schedc::runtime {

namespace {

using Clock = std::chrono::steady_clock;

compiler::DType dtype_of(const std::string& dtype) {
  const std::optional<compiler::DType> t = compiler::dtype_from_string(dtype);
  SCHEDC_INTERNAL_ASSERT(t.has_value(), "a module of an unknown dtype '" + dtype + "'");
  return *t;
}

// Throws when the GPU im2col's A (`gpu`) is not the host's byte for byte,
// naming the first element that differs.
void check_im2col(const compiler::Problem& p, const std::vector<char>& host,
                  const std::vector<char>& gpu, int elem) {
  if (gpu == host) return;
  size_t at = 0;
  while (at < host.size() && at < gpu.size() && host[at] == gpu[at]) ++at;
  const int64_t element = int64_t(at) / elem;
  throw Error(Error::Kind::cuda,
              "the GPU im2col's A differs from the host's at A(" + std::to_string(element / p.k) +
                  ", " + std::to_string(element % p.k) +
                  ") (a bug of schedc's explicit pipeline: its timing would mean nothing)");
}

// Element (m, k) of the output as a matrix <-> its place in NCHW32, one
// element at a time (the host's arithmetic, not the kernel's).
template <bool kToLayout>
std::vector<char> permute_nchw32(const compiler::Conv2d& conv, const std::vector<char>& from,
                                 int elem) {
  std::vector<char> to(from.size());
  const int64_t P = conv.p(), Q = conv.q(), K = conv.k, M = conv.gemm_m();
  for (int64_t m = 0; m < M; ++m) {
    const int64_t n = m / (P * Q), pix = m % (P * Q);
    for (int64_t k = 0; k < K; ++k) {
      const size_t matrix = size_t(m * K + k) * size_t(elem);
      const size_t layout =
          size_t(((n * (K / 32) + k / 32) * P * Q + pix) * 32 + k % 32) * size_t(elem);
      if (kToLayout)
        std::memcpy(to.data() + layout, from.data() + matrix, size_t(elem));
      else
        std::memcpy(to.data() + matrix, from.data() + layout, size_t(elem));
    }
  }
  return to;
}

}  // namespace

std::vector<char> output_in_layout(const compiler::Conv2d& conv, const std::vector<char>& c,
                                   int elem) {
  if (conv.layout != compiler::ConvLayout::nchw32) return c;
  return permute_nchw32<true>(conv, c, elem);
}

std::vector<char> output_as_matrix(const compiler::Conv2d& conv, const std::vector<char>& out,
                                   int elem) {
  if (conv.layout != compiler::ConvLayout::nchw32) return out;
  return permute_nchw32<false>(conv, out, elem);
}

double ConvReport::x_of_explicit() const {
  if (timed && !no_baseline.empty()) return std::nan("");
  return timed && kernel.median_ms > 0 ? explicit_pipeline.median_ms / kernel.median_ms : 0;
}

ConvCase make_conv_case(const compiler::Conv2d& conv, const std::string& dtype, uint64_t seed,
                        const compiler::Epilogue& epi) {
  const ElemType t = elem_type(dtype);
  const ConvInputs in = make_conv_inputs(conv, t, seed, epi);
  ConvCase cc;
  cc.input = encode(t, in.input);
  cc.hc.a = im2col_host(conv, cc.input, elem_size(t));
  cc.hc.b = encode(t, in.filters);
  cc.hc.bias = in.bias;
  cc.hc.scale = in.scale;
  // z where beta reads it, else the poison
  cc.hc.sent = encode(output_type(dtype, epi.requantize ? "s8" : ""), in.z);
  cc.reference_inputs.c0 = in.z;
  cc.reference_inputs.bias = in.bias;
  cc.reference_inputs.scale = in.scale;
  return cc;
}

compiler::Problem conv_problem(const compiler::Conv2d& conv, compiler::DType dtype) {
  compiler::Problem p{conv.gemm_m(), conv.gemm_n(), conv.gemm_k(), 0, 0, 0, dtype};
  p.b_col = true;
  return p;
}

ConvReport GpuSession::run_conv(const PreparedKernel& prepared, const ConvRunOptions& options) {
  const codegen::GeneratedKernel& kernel = prepared.kernel;
  const compiler::Conv2d& conv = options.conv;
  if (kernel.conv.empty())
    throw Error(Error::Kind::cuda, kernel.main.name +
                                       " computes a GEMM, not a convolution (its schedule has no "
                                       "'conv' directive)");
  if (std::string why = conv_run_error(conv, kernel.dtype, kernel.conv); !why.empty())
    throw Error(Error::Kind::cuda, kernel.main.name + " cannot compute this convolution: " + why);
  if (std::string why =
          integer_scalars_error(kernel, options.epilogue.alpha, options.epilogue.beta);
      !why.empty())
    throw Error(Error::Kind::cuda, why);
  const ElemType t = elem_type(kernel.dtype), out = output_type(kernel.dtype, kernel.c_dtype);
  const compiler::Epilogue epi = kernel_epilogue(kernel, options.epilogue);
  const int es = elem_size(t), es_out = elem_size(out);
  const compiler::Problem p = conv_problem(conv, dtype_of(kernel.dtype));
  auto stream = static_cast<cudaStream_t>(stream_);
  const ConvArgs conv_args = make_conv_args(conv);

  ConvReport report;
  report.conv = conv;
  report.problem = p;
  report.ref_mode = reference_mode(kernel);
  const RefMode baseline_mode = report.ref_mode;

  const size_t a_bytes = size_t(p.m * p.k) * size_t(es);
  DeviceBuffer dInput(size_t(conv.n * conv.h * conv.w * conv.c) * size_t(es), "the input tensor"),
      dFilters(size_t(p.n * p.k) * size_t(es), "the filters"),
      dOut(size_t(p.m * p.n) * size_t(es_out), "the output"),
      dA(a_bytes, "im2col's A (the host's)"), dA_gpu(a_bytes, "im2col's A (the GPU's)"),
      dRef(size_t(p.m * p.n) * 4, "the cuBLAS reference"),
      dBias(epi.bias ? size_t(p.n) * 4 : 0, "bias"),
      dScale(epi.scale ? size_t(p.n) * 4 : 0, "the per-channel scales");
  report.entry = choose_entry(kernel, p, dInput.get(), dFilters.get(), dOut.get());
  report.late = prepared.module->require(entries_for(kernel, report.entry));
  std::string no_halo;  // why a `halo` entry does not take this convolution's input once a tile
  const std::optional<compiler::HaloGeometry> halo =
      report.entry.entry && report.entry.entry->a_halo_bytes > 0
          ? prepared.module->conv_halo(report.entry, p, conv_args, &no_halo)
          : std::nullopt;
  if (halo) {
    report.a_copy = halo_note(*halo, compiler::halo_row_bytes(conv, es));
  } else if (report.entry.entry && report.entry.entry->a_im2col) {
    std::string why;
    const int copies = prepared.module->conv_a_copies(report.entry, p, conv_args, &why);
    report.a_copy = copies == 0   ? "by the producer's copies (" + why + ")"
                    : copies == 2 ? "by TMA's im2col mode, two copies a k-tile (64-byte panels)"
                                  : "by TMA's im2col mode";
    if (!no_halo.empty()) report.a_copy += "; not once a tile: " + no_halo;
  }
  report.grid_problem = p;
  if (halo) report.grid_problem.m = halo->tiles * int64_t(report.entry.entry->tile_m);
  GemmArgs args{dInput.get(), dFilters.get(),
                dOut.get(),   epi.alpha,
                epi.beta,     epi.bias ? static_cast<const float*>(dBias.get()) : nullptr,
                &conv_args};
  if (epi.scale) args.scale = static_cast<const float*>(dScale.get());
  auto launch = [&] { prepared.module->launch(report.entry, p, args, stream); };
  if (!im2col_) im2col_ = std::make_shared<Im2colKernel>(device_.arch(), options.jit);
  const Im2colKernel& im2col = *im2col_;

  // The inputs, A from the convolution's definition and (validating) the
  // reference. A relu can zero the whole reference of a tiny convolution;
  // such inputs are drawn again with another seed, as GpuSession::run does.
  auto t0 = Clock::now();
  ConvCase cc;
  HostCase& hc = cc.hc;
  std::vector<char>& got_raw = scratch_.got_raw;
  constexpr int kMaxDraws = 16;
  for (int draw = 0;; ++draw) {
    cc = make_conv_case(conv, kernel.dtype, options.seed + uint64_t(draw) * 1000003u, epi);
    dInput.upload(cc.input.data(), dInput.bytes(), "the input tensor", stream);
    dFilters.upload(hc.b.data(), dFilters.bytes(), "the filters", stream);
    dA.upload(hc.a.data(), dA.bytes(), "im2col's A", stream);
    if (epi.bias) dBias.upload(hc.bias.data(), dBias.bytes(), "bias", stream);
    if (epi.scale) dScale.upload(hc.scale.data(), dScale.bytes(), "scale", stream);
    const bool nchw32 = conv.layout == compiler::ConvLayout::nchw32;
    const std::vector<char> sent =
        nchw32 ? output_in_layout(conv, hc.sent, es_out) : std::vector<char>{};
    dOut.upload((nchw32 ? sent : hc.sent).data(), dOut.bytes(), "the output (poisoned)", stream);
    if (!options.validate) break;
    compute_reference(hc, cc.reference_inputs, cublas_, stream, p, t, baseline_mode, epi, dA,
                      dFilters, dRef);
    if (hc.ref != baseline_mode) report.ref_mode = hc.ref;  // s8 checked against f64

    launch();
    wait_or_hang(stream, seconds_allowed(p),
                 "running " + report.entry.name + " (cudaStreamSynchronize)");
    got_raw.resize(dOut.bytes());
    dOut.download(got_raw.data(), got_raw.size(), "the output", stream);
    // Compared as the GEMM's C (an NCHW32 output rearranged on the host).
    const std::vector<char> got_nchw32 =
        nchw32 ? output_as_matrix(conv, got_raw, es_out) : std::vector<char>{};
    const std::vector<char>& got_c = nchw32 ? got_nchw32 : got_raw;
    ValidationResult v;
    if (epi.requantize) {  // int8 values, bit for bit
      decode_s8_into(got_c, scratch_.got_s32);
      v = compare_s8(p, InputMode::random, scratch_.got_s32, got_c, hc.sent, hc.expected_s32);
    } else if (is_integer(out)) {  // s8: int32 values, bit for bit
      decode_s32_into(got_c, scratch_.got_s32);
      v = compare_s32(p, InputMode::random, scratch_.got_s32, got_c, hc.sent, hc.expected_s32);
    } else {
      decode_into(t, got_c, scratch_.got);
      v = compare(p, InputMode::random, t, scratch_.got, got_c, hc.sent, hc.expected, false,
                  random_tolerance(report.ref_mode, t, p.k));
    }
    if (v.ref_norm == 0 && v.nan_count == 0 && epi.relu && draw + 1 < kMaxDraws) continue;
    report.validations.push_back(v);
    scratch_.random_result.swap(got_raw);
    break;
  }
  // The explicit pipeline's im2col, once, against the host's.
  im2col.launch(conv, es, dInput.get(), dA_gpu.get(), stream);
  wait_or_hang(stream, seconds_allowed(p), "running schedc_im2col (cudaStreamSynchronize)");
  {
    std::vector<char> gpu_a(a_bytes);
    dA_gpu.download(gpu_a.data(), gpu_a.size(), "the GPU im2col's A", stream);
    check_im2col(p, hc.a, gpu_a, es);
    report.im2col_checked = true;
  }
  report.validate_ms = ms_since(t0);

  // A wrong kernel is not worth timing.
  if (options.time && report.ok()) {
    t0 = Clock::now();
    TimingOptions topt = options.timing;
    if (topt.hang_seconds <= 0) topt.hang_seconds = seconds_allowed(p);
    const std::unique_ptr<DeviceBuffer> flush =
        l2_flush_buffer(options.flush_l2, device_.l2_bytes, topt);
    // cuBLAS writes a C of its own (baseline_c; an int8 C's is int32: no
    // requantization pass is charged to cuBLAS or the pipeline).
    const BaselineC base = baseline_c(epi, p.m * p.n, hc.sent, stream);
    const DeviceBuffer& dCublas = *base.c;
    const compiler::Epilogue& base_epi = base.epi;
    auto gemm_on = [&](const DeviceBuffer& a) {
      cublas_gemm(cublas_, baseline_mode, t, p, a.get(), dFilters.get(), kernel_c(p, dCublas.get()),
                  base_epi.alpha, base_epi.beta);
    };
    // (b): cuBLAS on the A the host built; (c): the GPU im2col, then cuBLAS on its A.
    auto gemm_alone = [&] { gemm_on(dA); };
    auto explicit_pipeline = [&] {
      im2col.launch(conv, es, dInput.get(), dA_gpu.get(), stream);
      gemm_on(dA_gpu);
    };
    // cuBLAS int8 may reject the problem: then neither baseline is timed.
    report.no_baseline = int8_baseline_refusal(cublas_, baseline_mode, t, p, dA.get(),
                                               dFilters.get(), dCublas.get(), base_epi);
    std::vector<std::function<void()>> launches = {launch};
    if (report.no_baseline.empty())
      launches.insert(launches.end(), {gemm_alone, explicit_pipeline});
    const std::vector<TimingStats> stats = time_interleaved(launches, stream_, topt);
    report.kernel = stats[0];
    if (stats.size() > 2) {
      report.cublas = stats[1];
      report.explicit_pipeline = stats[2];
    }
    // With beta == 0 every run must write the same output: a change is a race.
    if (options.validate && epi.beta == 0.0f)
      report.race = race_after_timing(dOut, scratch_.random_result, scratch_.again, stream);
    report.timed = true;
    report.time_ms = ms_since(t0);
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (end of run_conv)");
  return report;
}

}  // namespace schedc::runtime
