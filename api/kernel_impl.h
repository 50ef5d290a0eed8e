#pragma once
// What a schedc::Kernel holds (include/schedc/schedc.h): the pipeline's
// result and, per device, the loaded module; and the one launch that both
// Kernel::launch overloads end in (a GEMM's: api/schedc.cpp; a
// convolution's: api/convolution.cpp).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "cli/pipeline.h"
#include "compiler/problem.h"
#include "runtime/launch.h"
#include "schedc/schedc.h"

namespace schedc {

class KernelImpl {
 public:
  explicit KernelImpl(cli::Compiled c) : c_(std::move(c)) {}

  static std::shared_ptr<const Kernel> make(cli::Compiled c) {
    return std::shared_ptr<const Kernel>(new Kernel(std::make_unique<KernelImpl>(std::move(c))));
  }

  const cli::Compiled& compiled() const { return c_; }

  // Launches `args` on `p` on the current device, asynchronously on
  // `stream`. First, on the host: the entry for these pointers
  // (runtime::choose_entry) and the checks the runtime makes of it
  // (runtime::check_conv_launch: the input's alignment, the implicit GEMM;
  // s8's integer alpha and beta), which throw ArgumentError. Then the
  // module is compiled and loaded (its first launch on the device) and
  // launched; runtime failures throw Error.
  void launch(const compiler::Problem& p, const runtime::GemmArgs& args, void* stream) const;

  // Throws ArgumentError where the epilogue reads a bias or per-channel
  // scales (`epilogue ... bias`, `scale`) that args leave null (the kernel
  // would read address 0), or where args give one the epilogue does not
  // read (the caller would believe it applied).
  void check_channel_vectors(const runtime::GemmArgs& args) const;

 private:
  // The module of the current device, compiled and loaded at its first use.
  const runtime::Module& module(int device) const;

  cli::Compiled c_;
  mutable std::mutex mutex_;
  mutable std::map<int, std::unique_ptr<runtime::Module>> modules_;
};

// Throws ArgumentError unless least <= v <= 2^31 - 1 (the kernels' ABI
// takes sizes as int): "schedc: <what> = <v> is out of range (…)".
void check_range(int64_t v, const char* what, int64_t least);

}  // namespace schedc
