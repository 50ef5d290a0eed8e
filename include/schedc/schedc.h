#pragma once
// schedc as a library: compile a GEMM schedule (the text of a .sched file;
// a convolution's with `conv`) into a CUDA kernel, inspect what it became,
// and launch it on device pointers the caller owns. docs/api.md has the
// guide; the command line (`schedc check`, `emit`, `run`) runs the same
// pipeline.
//
//   schedc::CompileResult r = schedc::compile("tile 128x128x8; thread 8x8\n");
//   if (!r.ok()) { std::cerr << r.rendered; return 1; }   // located diagnostics
//   std::cout << r.kernel->cuda_source();                  // what `schedc emit` prints
//   r.kernel->launch({M, N, K, dA, lda, dB, ldb, dC, ldc}, stream);  // needs a GPU
//   conv_kernel->launch(schedc::Conv{geometry, dX, dW, dY}, stream);  // a `conv` schedule's
//
// Bad input never exits the process or throws: it comes back as
// diagnostics. Errors of CUDA, NVRTC or the device (no GPU, a failed launch)
// throw schedc::Error; launch arguments the kernel cannot take throw its
// subclass schedc::ArgumentError. Everything here is thread-compatible: one
// Kernel may be launched from several threads; its first launch on a device
// compiles it (NVRTC, through the same on-disk cache as the command line)
// and loads it.
//
// This header includes no CUDA header: pointers and streams are void*.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#if defined(SCHEDC_BUILDING_LIBRARY)
#define SCHEDC_API __attribute__((visibility("default")))
#else
#define SCHEDC_API
#endif

namespace schedc {

// A place in the schedule's text (1-based; line 0: no place, e.g. a default).
struct SourceLocation {
  std::string file;
  int line = 0, column = 0, length = 0;
};

struct DiagnosticNote {
  SourceLocation where;
  std::string message;
};

struct Diagnostic {
  enum class Severity { error, warning };
  Severity severity = Severity::error;
  SourceLocation where;
  std::string message;
  std::vector<DiagnosticNote> notes;
};

struct CompileOptions {
  std::string arch = "sm_90";            // the target: sm_80, sm_86, sm_89, sm_90
  std::string file_name = "gemm.sched";  // the text's name in diagnostics and the kernel's name
};

// The problem of one launch (or one strided batch of them). Row-major A
// (M x K), B (K x N), C (M x N);
// leading dimensions in elements (0: packed). Elements are the schedule's
// dtype (float, __half or __nv_bfloat16; for s8, A and B signed char and C
// int, alpha and beta integers); bias is N floats, scale N floats (the
// per-channel scales of `epilogue ... scale`), each given exactly when the
// schedule's epilogue reads it (a launch throws ArgumentError otherwise).
// Whether C is read (beta) and relu applied is the schedule's epilogue;
// alpha and beta are its values unless given here.
struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  const float* bias = nullptr;
  const float* scale = nullptr;  // 0.3.0
  // A strided batch, for a schedule with `batch` (docs/api.md): `batch` GEMMs
  // (1 to 65535), GEMM g's A, B and C g strides past a, b and c, strides in
  // elements (0: packed, the matrix's rows x leading dimension; at least
  // that: GEMMs may not overlap). bias is every GEMM's. A schedule without
  // `batch` computes one GEMM.
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

// The geometry of a 2-D convolution (docs/convolution.md): N images of H x W
// pixels with C channels, K filters of R x S taps (of C channels), stride,
// padding and dilation per axis (H, W). The output is N x P x Q x K. The
// tensors' layout is the module's (Kernel::convolution_layout).
struct SCHEDC_API ConvGeometry {
  int64_t n = 1, h = 1, w = 1, c = 1;
  int64_t k = 1, r = 1, s = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  // The output's height and width: P = (H + 2·pad_h − dilation_h·(R − 1) − 1)
  // / stride_h + 1, Q likewise (below 1 when the filter is larger than the
  // padded input, which a launch refuses).
  int64_t p() const;
  int64_t q() const;
};

// One convolution on a convolution module (Kernel::is_convolution):
// y = alpha · conv(x, w) (+ beta · y, bias, relu: the schedule's epilogue).
// In an NHWC module x is the input [N][H][W][C], w the filters [K][R][S][C],
// y the output [N][P][Q][K]; in an NCHW32 one (`conv ... nchw32`) x is
// [N][C/32][H][W][32], w [K][C/32][R][S][32], y [N][K/32][P][Q][32] (C and
// K multiples of 32). All packed, elements of the schedule's dtype as `schedc run
// --conv` takes them (s8: x and w signed char, y int, alpha and beta
// integers; f16 and bf16: __half or __nv_bfloat16 throughout); bias and
// scale are K floats (one per output channel), each given exactly when the
// schedule's epilogue reads it (`bias`, `scale`). x must be 16-byte aligned and
// C·sizeof(element) a multiple of 16 (the kernel copies 16-byte chunks of a
// pixel's channels). Any geometry the module can compute is taken, not only
// the one its schedule names (docs/api.md).
struct Conv {
  ConvGeometry geometry;
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  float alpha = 1.0f, beta = 0.0f;
  const float* bias = nullptr;
  const float* scale = nullptr;  // 0.3.0
};

// A failure outside the schedule's text: CUDA, NVRTC, the device, a launch
// argument out of range. what() says which and why.
class SCHEDC_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A launch's argument that the kernel cannot take (a size out of range, a
// convolution given to a GEMM module or the reverse, a misaligned input),
// found before the device is touched. An Error too.
class SCHEDC_API ArgumentError : public Error {
 public:
  using Error::Error;
};

class KernelImpl;

// A checked, lowered and generated schedule.
class SCHEDC_API Kernel {
 public:
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // The schedule as schedc resolved it, defaults filled in, one directive a
  // line (what `schedc check` prints).
  std::string schedule_text() const;
  // The generated CUDA C++ module (what `schedc emit` prints, without its
  // closing launch comments).
  const std::string& cuda_source() const;
  // The main entry's extern "C" name, and the element type ("f32", "f16", "bf16", "s8":
  // int8 A and B, int32 C, integer alpha and beta).
  const std::string& entry_name() const;
  const std::string& dtype() const;
  // C's element type: dtype(), but "s32" for s8, and "s8" for s8 with
  // `epilogue ... requantize` (an int8 C; alpha, beta and bias any floats).
  std::string c_dtype() const;
  // Whether launches take per-channel scales (`epilogue ... scale`, with
  // requantize): Gemm::scale / Conv::scale, N (K) floats. 0.3.0.
  bool takes_scale() const;
  // The architecture it was generated for ("sm_90").
  std::string arch() const;
  // A's, B's and C's layouts in memory, in that order: N row-major, T
  // column-major ("NNN"; "NTN" for `layout B col`, C = X·Wᵀ; "NNT" for
  // `layout C col`). The leading dimensions of launch() are in these layouts.
  std::string layout() const;
  // Threads per block and dynamic shared memory of the main entry.
  int block_threads() const;
  int64_t shared_memory_bytes() const;

  // Launches C = alpha * A * B (+ beta * C, bias, relu: the schedule's
  // epilogue) on `stream` (a cudaStream_t; null: the default stream) of the
  // current device, asynchronously. The first launch on a device compiles
  // the kernel for it (the fallback or repack entry: the first launch that
  // needs it, docs/api.md). Throws ArgumentError, before the device is
  // touched, when an argument is out of range or the kernel is a convolution
  // module (`conv`: launch it with a Conv); Error when the device cannot run
  // the kernel's architecture or when CUDA fails.
  void launch(const Gemm& gemm, void* stream = nullptr) const;

  // Whether the schedule computes a convolution (its `conv` directive): then
  // launch(const Conv&) runs it and launch(const Gemm&) refuses.
  bool is_convolution() const;
  // The convolution the schedule names (its `conv` directive's geometry):
  // the one the kernel was tuned for, and `schedc run`'s default; nothing
  // for a GEMM module.
  std::optional<ConvGeometry> convolution() const;
  // The layout of a convolution module's tensors: "nhwc" or "nchw32" (its
  // `conv` directive's); "" for a GEMM module.
  std::string convolution_layout() const;
  // Launches y = alpha · conv(x, w) (+ beta · y, bias, relu: the schedule's
  // epilogue) on `stream` of the current device, asynchronously, as
  // launch(const Gemm&) does, through the runtime's convolution launch
  // (the implicit GEMM with the geometry and offset table as its last
  // parameter). Throws ArgumentError, before the device is touched, for a
  // GEMM module, a geometry the module cannot compute (sizes, padding, more
  // than 256 taps, C·sizeof(element) not a multiple of 16 bytes, tensors of
  // 2^31 elements or more), null pointers, a misaligned x, or s8's alpha or
  // beta not an integer; Error as launch(const Gemm&) does otherwise.
  void launch(const Conv& conv, void* stream = nullptr) const;

 private:
  friend class KernelImpl;
  explicit Kernel(std::unique_ptr<KernelImpl> impl);
  std::unique_ptr<KernelImpl> impl_;
};

struct CompileResult {
  std::shared_ptr<const Kernel> kernel;  // null when there are errors
  std::vector<Diagnostic> diagnostics;   // errors and warnings, in order
  std::string rendered;                  // the same, printed as schedc prints them
  bool ok() const { return kernel != nullptr; }
};

// Parses, checks, lowers and generates the schedule `text`.
SCHEDC_API CompileResult compile(std::string_view text, const CompileOptions& options = {});
// The same for the file at `path` (its name in the diagnostics); a file that
// cannot be read is one diagnostic without a place.
SCHEDC_API CompileResult compile_file(const std::string& path, const CompileOptions& options = {});

// "0.3.0": this library's version; the CMake package's too.
SCHEDC_API const char* version();

}  // namespace schedc
