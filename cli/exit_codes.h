#pragma once
// schedc's exit codes (docs/cli.md).
namespace schedc::cli {
enum ExitCode : int {
  kOk = 0,
  kWrongResult = 1,  // the kernel ran but its result is wrong
  kBadInput = 2,     // usage, syntax, invalid schedule
  kToolchain = 3,    // NVRTC rejected generated code (a schedc bug), CUDA error, no GPU
};
}  // namespace schedc::cli
