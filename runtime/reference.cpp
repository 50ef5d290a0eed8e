#include "runtime/reference.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>

#include "runtime/error.h"
#include "runtime/validate.h"

namespace schedc::runtime {

// C as stored (its layout, ldc and stride, compiler::Problem::c_index) as
// packed row-major M x N matrices, one per GEMM of the batch.
std::vector<float> packed(const std::vector<float>& c, const compiler::Problem& p) {
  std::vector<float> out(size_t(p.batch * p.m * p.n));
  for (int64_t g = 0; g < p.batch; ++g)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j)
        out[size_t((g * p.m + i) * p.n + j)] = c[size_t(g * p.c_stride() + p.c_index(i, j))];
  return out;
}

namespace {

// The reference of a float dtype into `hc` (its A and B already in dA and
// dB): alpha*A*B + beta*C0 in f32 by cuBLAS in mode `ref`, then bias/relu
// on the host and one rounding to the output type.
void float_reference(HostCase& hc, const GemmInputs& in, void* cublas_handle, cudaStream_t stream,
                     const compiler::Problem& p, ElemType t, RefMode ref,
                     const compiler::Epilogue& epi, const DeviceBuffer& dA, const DeviceBuffer& dB,
                     const DeviceBuffer& dRef) {
  if (epi.beta != 0.0f) {
    std::vector<float> c0 = packed(in.c0, p);
    dRef.upload(c0.data(), dRef.bytes(), "reference C0", stream);
  } else {
    check_cuda(cudaMemsetAsync(dRef.get(), 0, dRef.bytes(), stream), "cudaMemsetAsync");
  }
  cublas_gemm(cublas_handle, ref, t, p, dA.get(), dB.get(), reference_c(p, dRef.get()), epi.alpha,
              epi.beta);
  check_cuda(cudaStreamSynchronize(stream), "cuBLAS reference (cudaStreamSynchronize)");
  std::vector<float> ref32(size_t(p.batch * p.m * p.n));
  dRef.download(ref32.data(), dRef.bytes(), "reference", stream);
  hc.expected = finish_reference(ref32, p, in.bias, epi.relu, t);
}

// dtype s8's reference into `hc` (its A and B already in dA and dB):
// alpha*A*B + beta*C0 by cuBLAS int8, exact in int32; where cuBLAS int8
// rejects the problem (it does not take every layout, leading dimension and
// alignment), by cublasDgemm on the same integers as f64, exact too (the
// inputs' rule keeps every sum below 2^31, far below f64's 2^53). Then bias
// and relu on the host, as the kernel's epilogue (finish_reference_s32). An
// int8 C (epi.requantize): cuBLAS's sums alone (alpha 1, beta 0), the whole
// epilogue in f32 on the host (requantize_reference).
void s8_reference(HostCase& hc, const GemmInputs& in, void* cublas_handle, cudaStream_t stream,
                  const compiler::Problem& p, const compiler::Epilogue& epi, const DeviceBuffer& dA,
                  const DeviceBuffer& dB, const DeviceBuffer& dRef) {
  const size_t count = size_t(p.batch * p.m * p.n);
  const float alpha = epi.requantize ? 1.0f : epi.alpha, beta = epi.requantize ? 0.0f : epi.beta;
  const std::vector<float> c0 = beta != 0.0f ? packed(in.c0, p) : std::vector<float>(count, 0.0f);
  const std::vector<char> c0_s32 = encode(ElemType::s32, c0);
  dRef.upload(c0_s32.data(), dRef.bytes(), "reference C0", stream);
  std::vector<int64_t> acc(count);
  const std::string int8_failed =
      try_cublas_gemm(cublas_handle, RefMode::s8, ElemType::s8, p, dA.get(), dB.get(),
                      reference_c(p, dRef.get()), alpha, beta);
  if (int8_failed.empty()) {
    check_cuda(cudaStreamSynchronize(stream), "cuBLAS int8 reference (cudaStreamSynchronize)");
    std::vector<char> raw(dRef.bytes());
    dRef.download(raw.data(), raw.size(), "reference", stream);
    std::vector<int32_t> ref32;
    decode_s32_into(raw, ref32);
    std::copy(ref32.begin(), ref32.end(), acc.begin());
    hc.ref = RefMode::s8;
  } else {
    // A and B as they lie (padding included, never read), C0 packed.
    std::vector<double> a64(hc.a.size()), b64(hc.b.size()), c64(c0.begin(), c0.end());
    for (size_t i = 0; i < a64.size(); ++i) a64[i] = double(int8_t(hc.a[i]));
    for (size_t i = 0; i < b64.size(); ++i) b64[i] = double(int8_t(hc.b[i]));
    DeviceBuffer dA64(a64.size() * 8, "A as f64"), dB64(b64.size() * 8, "B as f64"),
        dC64(c64.size() * 8, "the f64 reference");
    dA64.upload(a64.data(), dA64.bytes(), "A as f64", stream);
    dB64.upload(b64.data(), dB64.bytes(), "B as f64", stream);
    dC64.upload(c64.data(), dC64.bytes(), "reference C0 as f64", stream);
    cublas_gemm_f64(cublas_handle, p, static_cast<const double*>(dA64.get()),
                    static_cast<const double*>(dB64.get()), reference_c(p, dC64.get()),
                    double(int32_t(alpha)), double(int32_t(beta)));
    check_cuda(cudaStreamSynchronize(stream), "cuBLAS f64 reference (cudaStreamSynchronize)");
    dC64.download(c64.data(), dC64.bytes(), "the f64 reference", stream);
    for (size_t i = 0; i < count; ++i) acc[i] = std::llround(c64[i]);
    hc.ref = RefMode::s8_via_f64;
  }
  hc.expected_s32 =
      epi.requantize
          ? requantize_reference(acc, p, epi.beta != 0.0f ? packed(in.c0, p) : std::vector<float>{},
                                 in.bias, in.scale, epi)
          : finish_reference_s32(acc, p, in.bias, epi.relu);
}

}  // namespace

void compute_reference(HostCase& hc, const GemmInputs& in, void* cublas_handle, cudaStream_t stream,
                       const compiler::Problem& p, ElemType t, RefMode ref,
                       const compiler::Epilogue& epi, const DeviceBuffer& dA,
                       const DeviceBuffer& dB, const DeviceBuffer& dRef) {
  hc.ref = ref;
  if (is_integer(t))
    s8_reference(hc, in, cublas_handle, stream, p, epi, dA, dB, dRef);
  else
    float_reference(hc, in, cublas_handle, stream, p, t, ref, epi, dA, dB, dRef);
}

BaselineC baseline_c(const compiler::Epilogue& epi, int64_t elements, const std::vector<char>& sent,
                     cudaStream_t stream) {
  BaselineC b;
  b.epi = epi.requantize ? compiler::Epilogue{} : epi;
  const size_t bytes = epi.requantize ? size_t(elements) * 4 : sent.size();
  b.c = std::make_unique<DeviceBuffer>(bytes, "cuBLAS's C");
  if (epi.requantize) {
    const std::vector<char> zeros(bytes, 0);
    b.c->upload(zeros.data(), bytes, "cuBLAS's C", stream);
  } else {
    b.c->upload(sent.data(), bytes, "cuBLAS's C", stream);
  }
  return b;
}

std::string int8_baseline_refusal(void* cublas_handle, RefMode mode, ElemType t,
                                  const compiler::Problem& p, const void* a, const void* b, void* c,
                                  const compiler::Epilogue& epi) {
  if (!is_integer(t)) return "";
  const std::string why =
      try_cublas_gemm(cublas_handle, mode, t, p, a, b, kernel_c(p, c), epi.alpha, epi.beta);
  return why.empty() ? "" : "cuBLAS int8 rejects this problem: " + why;
}

}  // namespace schedc::runtime
