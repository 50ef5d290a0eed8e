#pragma once
// The CUDA device schedc runs on, and the "no CUDA device" answer. Works on
// a machine with no driver at all: the CUDA runtime is linked statically and
// loads the driver itself, so the query fails cleanly instead of the program
// failing to start.

#include <cstddef>
#include <optional>
#include <string>

#include "compiler/target.h"

namespace schedc::runtime {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int sm = 0;  // compute capability * 10
  int num_sms = 0;
  size_t l2_bytes = 0;
  size_t smem_per_block_optin = 0;
  size_t smem_per_sm = 0;
  size_t global_bytes = 0;

  std::string arch() const { return "sm_" + std::to_string(sm); }  // NVRTC's name
};

// Device 0 as CUDA_VISIBLE_DEVICES presents it. Returns nothing and sets
// `why` (the CUDA runtime's own words) when no device can be used.
std::optional<DeviceInfo> find_device(std::string& why);
// Device `ordinal`, likewise (`why` also when there is no such device).
std::optional<DeviceInfo> find_device(int ordinal, std::string& why);
// How many devices the CUDA runtime sees (0 with no driver or none).
int device_count();

// Ends device `ordinal`'s CUDA context (cudaDeviceReset) so that a session
// after a faulting kernel starts on a fresh one; errors are ignored (the
// next session's creation reports them).
void reset_device(int ordinal);

// The driver's CUDA version, "13.0" (cudaDriverGetVersion); "" with no driver.
std::string driver_version();

// The compiler's Target for this device: the table's entry for its
// architecture (or defaults for one the table lacks), refined with the
// device's own SM count and shared-memory limits.
compiler::Target target_for_device(const DeviceInfo& device);

}  // namespace schedc::runtime
