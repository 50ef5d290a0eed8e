#include "runtime/device.h"

#include <cuda_runtime.h>

#include "runtime/error.h"

namespace schedc::runtime {

std::optional<DeviceInfo> find_device(std::string& why) {
  return find_device(0, why);
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void reset_device(int ordinal) {
  if (cudaSetDevice(ordinal) == cudaSuccess) cudaDeviceReset();
  cudaGetLastError();
}

std::string driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0) {
    cudaGetLastError();
    return "";
  }
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::optional<DeviceInfo> find_device(int ordinal, std::string& why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    // No driver (cudaErrorInsufficientDriver), no device (cudaErrorNoDevice), …
    std::string plain = err == cudaErrorInsufficientDriver ? "no usable CUDA driver; "
                        : err == cudaErrorNoDevice         ? "no CUDA-capable device; "
                                                           : "";
    why = plain + "the CUDA runtime says: " + cudaGetErrorString(err) + " [" +
          cudaGetErrorName(err) + "]";
    cudaGetLastError();  // clear the sticky-free error so later queries start clean
    return std::nullopt;
  }
  if (count == 0) {
    why = "the CUDA runtime sees 0 devices";
    return std::nullopt;
  }
  if (ordinal < 0 || ordinal >= count) {
    why = "there is no device " + std::to_string(ordinal) + " (the CUDA runtime sees " +
          std::to_string(count) + ")";
    return std::nullopt;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, ordinal);
  if (err != cudaSuccess) {
    why = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(err);
    return std::nullopt;
  }
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = prop.name;
  d.sm = prop.major * 10 + prop.minor;
  d.num_sms = prop.multiProcessorCount;
  d.l2_bytes = size_t(prop.l2CacheSize);
  d.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  d.smem_per_sm = prop.sharedMemPerMultiprocessor;
  d.global_bytes = prop.totalGlobalMem;
  return d;
}

compiler::Target target_for_device(const DeviceInfo& device) {
  compiler::Target t;
  if (!compiler::target_for_arch(device.arch(), t)) t.sm = device.sm;
  if (device.num_sms) t.num_sms = device.num_sms;
  if (device.smem_per_block_optin) t.smem_per_block_optin = int(device.smem_per_block_optin);
  if (device.smem_per_sm) t.smem_per_sm = int(device.smem_per_sm);
  return t;
}

}  // namespace schedc::runtime
