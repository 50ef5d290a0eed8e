#pragma once
// Errors of the runtime. All but one are toolchain or device failures (exit
// code 3): NVRTC rejected generated code (a schedc bug), a CUDA or cuBLAS call
// failed, or there is no CUDA device. `rejected_source` is NVRTC rejecting a
// person's file (`schedc run --kernel-source`): bad input (exit code 2). A
// wrong result is not an error: it is a ValidationResult with ok == false
// (exit code 1).

#include <stdexcept>
#include <string>

namespace schedc::runtime {

class Error : public std::runtime_error {
 public:
  enum class Kind { nvrtc, rejected_source, cuda, no_device, io };
  Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Throws Error(cuda) naming `call` when `status` is not cudaSuccess. `status`
// is an int so this header needs no CUDA include.
void check_cuda(int status, const char* call);
// Same for cuBLAS status codes.
void check_cublas(int status, const char* call);

}  // namespace schedc::runtime
