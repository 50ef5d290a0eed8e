#pragma once
// im2col: a convolution's implicit-GEMM A written out, for run_conv's
// reference and its explicit pipeline (runtime/conv_run.h). A is M x K,
// row-major, M = N·P·Q output pixels (m = (n·P + oh)·Q + ow), K = C·R·S
// in the convolution's K order (compiler/conv.h: NHWC kk = (r·S + s)·C + c,
// NCHW32 ((c/32)·R·S + r·S + s)·32 + c%32), as the convolution modules read
// it.

#include <string>
#include <vector>

#include "compiler/conv.h"
#include "runtime/jit.h"

namespace schedc::runtime {

// A from the convolution's definition, on the host, independent of the
// kernels' address arithmetic (no offset table): A(m, kk) is the input's
// element (n, c, ih, iw) (NHWC or NCHW32) with ih = oh·stride_h − pad_h + r·dil_h,
// iw = ow·stride_w − pad_w + s·dil_w, or zero outside H x W. `input` holds
// the tensor's bytes, `elem` bytes an element (zero bytes are a zero in
// every element type). Runs on the host's cores.
std::vector<char> im2col_host(const compiler::Conv2d& conv, const std::vector<char>& input,
                              int elem);

// The GPU im2col's CUDA source: `schedc_im2col`, one thread per 16-byte
// chunk of A (consecutive threads, consecutive chunks: coalesced stores),
// zero for the padding. Needs C·elem a multiple of 16 and 16-byte aligned
// buffers.
std::string im2col_source();

// schedc_im2col compiled (through the kernel cache) and loaded on the
// current device.
class Im2colKernel {
 public:
  Im2colKernel(const std::string& arch, const JitOptions& jit);
  ~Im2colKernel();
  Im2colKernel(const Im2colKernel&) = delete;
  Im2colKernel& operator=(const Im2colKernel&) = delete;

  // Writes A of `conv` (elements of `elem` bytes) from `input` into `a` (M
  // x K, packed), asynchronously on `stream` (a cudaStream_t). Throws Error
  // on a launch failure or when C·elem is not a multiple of 16. From sm_90 on
  // the launch may start it early: it waits for the grid ahead (as schedc's
  // kernels do, so the pipeline the benchmarks compare with starts its
  // kernels as early as schedc's).
  void launch(const compiler::Conv2d& conv, int elem, const void* input, void* a,
              void* stream) const;

 private:
  void* library_ = nullptr;  // cudaLibrary_t
  void* kernel_ = nullptr;   // cudaKernel_t
  bool early_ = false;       // launched as a programmatic dependent launch (sm_90 on)
};

}  // namespace schedc::runtime
