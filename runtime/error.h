#pragma once
// Errors of the runtime. All but one are toolchain or device failures (exit
// code 3): NVRTC rejected generated code (a schedc bug), a CUDA or cuBLAS call
// failed, or there is no CUDA device. `rejected_source` is NVRTC rejecting a
// person's file (`schedc run --kernel-source`), and `refused` a problem the
// module cannot compute as compiled (a `halo only` kernel's launch on a
// convolution whose phase images its shared memory does not take): bad
// input (exit code 2). A
// wrong result is not an error: it is a ValidationResult with ok == false
// (exit code 1).

#include <stdexcept>
#include <string>

namespace schedc::runtime {

class Error : public std::runtime_error {
 public:
  // hang: a kernel did not finish in its time (GpuSession::run); the GPU
  // may still be running it, so its CUDA context is not usable again.
  enum class Kind { nvrtc, rejected_source, cuda, no_device, io, hang, refused };
  Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// True once a kernel of this process hung (Error::Kind::hang). The GPU may
// still be running it, and tearing CUDA down (cublasDestroy, the runtime's
// exit handlers) waits for the device: sessions then skip their teardown,
// and schedc's main leaves with std::_Exit.
bool kernel_hung();
void note_kernel_hung();

// Throws Error(cuda) naming `call` when `status` is not cudaSuccess. `status`
// is an int so this header needs no CUDA include.
void check_cuda(int status, const char* call);
// Same for cuBLAS status codes.
void check_cublas(int status, const char* call);

}  // namespace schedc::runtime
