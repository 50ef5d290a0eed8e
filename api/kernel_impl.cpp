// KernelImpl (api/kernel_impl.h): a Kernel's modules, one per device, and its launch.
#include "api/kernel_impl.h"

#include <cuda_runtime.h>

#include <string>

#include "runtime/conv_launch.h"
#include "runtime/error.h"
#include "runtime/jit.h"
#include "runtime/validate.h"

namespace schedc {

namespace {

int current_device() {
  int device = 0;
  runtime::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

}  // namespace

void check_range(int64_t v, const char* what, int64_t least) {
  if (v < least || v > 2147483647)
    throw ArgumentError(std::string("schedc: ") + what + " = " + std::to_string(v) +
                        " is out of range (" + std::to_string(least) + " .. 2^31-1)");
}

const runtime::Module& KernelImpl::module(int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(device);
  if (it != modules_.end()) return *it->second;
  int major = 0, minor = 0;
  runtime::check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                      "cudaDeviceGetAttribute(ComputeCapabilityMajor)");
  runtime::check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                      "cudaDeviceGetAttribute(ComputeCapabilityMinor)");
  const int sm = major * 10 + minor;
  const int want = c_.target.sm;
  // A kernel for one architecture runs on its own; one of sm_80's family
  // (no wgmma) on any later device.
  if (sm < want || (c_.kernel.arch_specific && sm != want))
    throw Error(
        "schedc: the kernel was generated for sm_" + std::to_string(want) + " and device " +
        std::to_string(device) + " is sm_" + std::to_string(sm) +
        (c_.kernel.arch_specific ? " (wgmma and setmaxnreg run on that architecture only)" : ""));
  // Main (and its stream_k tail) now; the fallback and the repack entry
  // when a launch first needs them (runtime/module_load.cpp).
  auto m = std::make_unique<runtime::Module>(c_.kernel, device, "sm_" + std::to_string(sm),
                                             runtime::JitOptions{});
  m->require(runtime::main_entries(c_.kernel));
  return *modules_.emplace(device, std::move(m)).first->second;
}

void KernelImpl::check_channel_vectors(const runtime::GemmArgs& args) const {
  const std::string& name = c_.kernel.main.name;
  const char* count = args.conv ? "K device floats (one per output channel)"
                                : "N device floats (one per column of C)";
  auto check = [&](const void* given, bool taken, const std::string& what,
                   const std::string& item) {
    if (taken && !given)
      throw ArgumentError("schedc: " + name + "'s epilogue reads " + what + " ('epilogue ... " +
                          item + "'): " + item + " must point to " + count + ", not null");
    if (!taken && given)
      throw ArgumentError("schedc: " + item + " given, but " + name + "'s epilogue has no '" +
                          item + "': it would be ignored");
  };
  check(args.bias, c_.schedule.epilogue.bias, "a bias", "bias");
  check(args.scale, c_.kernel.channel_scale, "per-channel scales", "scale");
}

void KernelImpl::launch(const compiler::Problem& p, const runtime::GemmArgs& args,
                        void* stream) const {
  try {
    const runtime::EntryChoice choice = runtime::choose_entry(c_.kernel, p, args.a, args.b, args.c);
    // The runtime checks these again at the launch; here they come first, as
    // the caller's mistakes, before any device is looked for.
    try {
      runtime::check_conv_launch(c_.kernel, choice, p, args);
    } catch (const runtime::Error& e) {
      throw ArgumentError(std::string("schedc: ") + e.what());
    }
    if (std::string why = runtime::integer_scalars_error(c_.kernel, args.alpha, args.beta);
        !why.empty())
      throw ArgumentError("schedc: " + why);
    check_channel_vectors(args);
    module(current_device()).launch(choice, p, args, stream);
  } catch (const runtime::Error& e) {
    if (e.kind() == runtime::Error::Kind::refused)  // the caller's problem, as compiled
      throw ArgumentError(std::string("schedc: ") + e.what());
    throw Error(e.what());
  }
}

}  // namespace schedc
