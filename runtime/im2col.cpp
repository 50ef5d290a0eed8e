#include "runtime/im2col.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "runtime/error.h"
#include "runtime/kernel_launch.h"
#include "runtime/parallel_chunks.h"

namespace schedc::runtime {

std::vector<char> im2col_host(const compiler::Conv2d& conv, const std::vector<char>& input,
                              int elem) {
  const int64_t P = conv.p(), Q = conv.q(), K = conv.c * conv.r * conv.s;
  // A run of channels contiguous in both the input and a row of A: one
  // pixel's C channels (NHWC), or one pixel's 32 of one group (NCHW32).
  const bool nchw32 = conv.layout == compiler::ConvLayout::nchw32;
  const int64_t lanes = nchw32 ? 32 : conv.c, groups = conv.c / lanes;
  const size_t run = size_t(lanes) * size_t(elem);
  std::vector<char> a(size_t(conv.n * P * Q) * size_t(K) * size_t(elem), 0);
  parallel_chunks(conv.n * P * Q, 1024, [&](size_t, int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const int64_t n = m / (P * Q), oh = m / Q % P, ow = m % Q;
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t r = 0; r < conv.r; ++r)
          for (int64_t s = 0; s < conv.s; ++s) {
            const int64_t ih = oh * conv.stride_h - conv.pad_h + r * conv.dil_h;
            const int64_t iw = ow * conv.stride_w - conv.pad_w + s * conv.dil_w;
            if (ih < 0 || ih >= conv.h || iw < 0 || iw >= conv.w) continue;  // padding: zeros
            // NHWC: kk = (r·S + s)·C + c; NCHW32: ((g·R + r)·S + s)·32 + c % 32 (c = 0 here).
            const int64_t kk = ((g * conv.r + r) * conv.s + s) * lanes;
            const int64_t at = ((n * groups + g) * conv.h + ih) * conv.w + iw;  // the pixel's run
            std::memcpy(a.data() + size_t(m * K + kk) * size_t(elem),
                        input.data() + size_t(at * lanes) * size_t(elem), run);
          }
    }
  });
  return a;
}

std::string im2col_source() {
  return R"(// im2col of an NHWC or NCHW32 convolution (schedc's explicit pipeline,
// runtime/im2col.h): A (M x K, row-major; m = (n*P + oh)*Q + ow) in 16-byte
// chunks, one thread each. A pixel's channels lie in `groups` runs of `vecs`
// chunks (NHWC: one run of C; NCHW32: C/32 runs of 32), and a row of A is
// (group, tap, chunk) in that order: kk = ((g*R + r)*S + s)*run + lane.
extern "C" __global__ void schedc_im2col(const uint4* __restrict__ input, uint4* __restrict__ a,
                                         long long chunks, int H, int W, int groups, int vecs,
                                         int P, int Q, int S, int taps, int stride_h, int stride_w,
                                         int pad_h, int pad_w, int dil_h, int dil_w) {
#if __CUDA_ARCH__ >= 900
  // Launched early behind the grid ahead (programmatic dependent launch, as
  // schedc's own kernels are): wait for its writes, then let the next start.
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= chunks) return;
  const long long row_chunks = (long long)groups * taps * vecs;
  const long long m = i / row_chunks;
  const int j = (int)(i - m * row_chunks);
  const int slot = j / vecs, v = j - slot * vecs;
  const int g = slot / taps, tap = slot - g * taps;
  const int r = tap / S, s = tap - r * S;
  const int ow = (int)(m % Q), oh = (int)(m / Q % P);
  const long long n = m / ((long long)P * Q);
  const int ih = oh * stride_h - pad_h + r * dil_h, iw = ow * stride_w - pad_w + s * dil_w;
  uint4 value = make_uint4(0u, 0u, 0u, 0u);
  if (ih >= 0 && ih < H && iw >= 0 && iw < W)
    value = input[(((n * groups + g) * H + ih) * W + iw) * vecs + v];
  a[i] = value;
}
)";
}

Im2colKernel::Im2colKernel(const std::string& arch, const JitOptions& jit_options) {
  codegen::GeneratedKernel k;
  k.source = im2col_source();
  k.dtype = "s8";  // the kernel copies bytes: any type
  k.main.name = "schedc_im2col";
  const JitResult compiled = jit(k, arch, jit_options);
  cudaLibrary_t lib = nullptr;
  check_cuda(
      cudaLibraryLoadData(&lib, compiled.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
      "cudaLibraryLoadData (the im2col kernel)");
  library_ = lib;
  cudaKernel_t fn = nullptr;
  check_cuda(cudaLibraryGetKernel(&fn, lib, "schedc_im2col"),
             "cudaLibraryGetKernel(\"schedc_im2col\")");
  kernel_ = fn;
  // "sm_90", "sm_90a", "sm_100": the compute capability's major number.
  early_ = launch_early(std::atoi(arch.c_str() + (arch.rfind("sm_", 0) == 0 ? 3 : 0)) / 10);
}

Im2colKernel::~Im2colKernel() {
  if (kernel_hung()) return;  // the device may still be running the hung kernel
  if (library_) cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

void Im2colKernel::launch(const compiler::Conv2d& conv, int elem, const void* input, void* a,
                          void* stream) const {
  if ((conv.c * elem) % 16 != 0)
    throw Error(Error::Kind::cuda, "internal error: im2col of C = " + std::to_string(conv.c) +
                                       " channels of " + std::to_string(elem) +
                                       " bytes: not 16-byte chunks");
  const bool nchw32 = conv.layout == compiler::ConvLayout::nchw32;
  int groups = nchw32 ? int(conv.c / 32) : 1;
  int vecs = int((nchw32 ? 32 : conv.c) * elem / 16);
  int h = int(conv.h), w = int(conv.w), p = int(conv.p()), q = int(conv.q()), s = int(conv.s);
  int taps = int(conv.r * conv.s);
  int stride_h = int(conv.stride_h), stride_w = int(conv.stride_w);
  int pad_h = int(conv.pad_h), pad_w = int(conv.pad_w);
  int dil_h = int(conv.dil_h), dil_w = int(conv.dil_w);
  long long chunks = (long long)conv.gemm_m() * groups * taps * vecs;
  const void* in = input;
  void* out = a;
  void* params[] = {&in, &out,  &chunks,   &h,        &w,     &groups, &vecs,  &p,    &q,
                    &s,  &taps, &stride_h, &stride_w, &pad_h, &pad_w,  &dil_h, &dil_w};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned((chunks + 255) / 256), 1, 1);
  config.blockDim = dim3(256, 1, 1);
  config.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  if (early_) {
    config.attrs = &early;
    config.numAttrs = 1;
  }
  check_cuda(cudaLaunchKernelExC(&config, kernel_, params), "cudaLaunchKernelExC(schedc_im2col)");
}

}  // namespace schedc::runtime
