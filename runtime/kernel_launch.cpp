#include "runtime/kernel_launch.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "runtime/driver_api.h"
#include "runtime/error.h"

namespace schedc::runtime {

namespace {

constexpr const char* kWhy = "launching a kernel needs a CUDA 12 driver";

// "CUDA_ERROR_... (what it means)", as check_cuda words the runtime's errors.
std::string driver_error(CUresult r) {
  using Describe = CUresult (*)(CUresult, const char**);
  static const auto get_name = driver_function<Describe>("cuGetErrorName", kWhy);
  static const auto get_string = driver_function<Describe>("cuGetErrorString", kWhy);
  const char *name = nullptr, *text = nullptr;
  if (get_name(r, &name) != CUDA_SUCCESS || !name) return "CUresult " + std::to_string(int(r));
  if (get_string(r, &text) != CUDA_SUCCESS || !text) return name;
  return std::string(name) + " (" + text + ")";
}

}  // namespace

void* current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  static const auto get_current = driver_function<GetCurrent>("cuCtxGetCurrent", kWhy);
  CUcontext ctx = nullptr;
  if (get_current(&ctx) == CUDA_SUCCESS && ctx) return ctx;
  // A thread that has made no CUDA call yet has no context current, which the
  // runtime's launch would have made (the current device's primary context):
  // make it as the runtime does, then ask again.
  cudaFree(nullptr);
  if (get_current(&ctx) != CUDA_SUCCESS) return nullptr;
  return ctx;
}

void* function_in_current_context(void* kernel, const std::string& name, uint32_t dynamic_smem) {
  using GetFunction = CUresult (*)(CUfunction*, CUkernel);
  using SetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
  static const auto get_function = driver_function<GetFunction>("cuKernelGetFunction", kWhy);
  static const auto set_attribute = driver_function<SetAttribute>("cuFuncSetAttribute", kWhy);
  CUfunction f = nullptr;
  if (CUresult r = get_function(&f, static_cast<CUkernel>(kernel)); r != CUDA_SUCCESS)
    throw Error(Error::Kind::cuda, "cuKernelGetFunction(" + name + ") failed: " + driver_error(r));
  if (dynamic_smem > 48 * 1024)
    if (CUresult r =
            set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(dynamic_smem));
        r != CUDA_SUCCESS)
      throw Error(Error::Kind::cuda,
                  "cuFuncSetAttribute(" + name + ", MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                      std::to_string(dynamic_smem) + ") failed: " + driver_error(r));
  return f;
}

void launch_kernel(const LaunchableEntry& entry, const std::string& name, codegen::Dim3 grid,
                   const codegen::KernelEntry& e, void** params, void* stream, bool early,
                   uint32_t cluster_x, uint32_t cluster_y) {
  using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  static const auto launch = driver_function<LaunchEx>("cuLaunchKernelEx", kWhy);
  CUlaunchConfig config{};
  config.gridDimX = grid.x, config.gridDimY = grid.y, config.gridDimZ = grid.z;
  config.blockDimX = e.block.x, config.blockDimY = e.block.y, config.blockDimZ = e.block.z;
  config.sharedMemBytes = e.dynamic_smem;
  config.hStream = static_cast<CUstream>(stream);
  CUlaunchAttribute attrs[2] = {};
  unsigned n = 0;
  if (early) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attrs[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster_x * cluster_y > 1) {
    attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[n].value.clusterDim.x = cluster_x;
    attrs[n].value.clusterDim.y = cluster_y;
    attrs[n++].value.clusterDim.z = 1;
  }
  config.attrs = n ? attrs : nullptr;
  config.numAttrs = n;
  const CUresult r = launch(&config, static_cast<CUfunction>(entry.function), params, nullptr);
  if (r == CUDA_SUCCESS) return;
  std::ostringstream what;
  what << "cuLaunchKernelEx(" << name << ", grid " << grid.x << "x" << grid.y << "x" << grid.z
       << ", block " << e.block.x << "x" << e.block.y << "x" << e.block.z << ", " << e.dynamic_smem
       << " bytes dynamic smem" << (early ? ", programmatic dependent launch" : "")
       << (cluster_x * cluster_y > 1
               ? ", clusters of " + std::to_string(cluster_x) +
                     (cluster_y > 1 ? "x" + std::to_string(cluster_y) : std::string())
               : "")
       << ") failed: " << driver_error(r);
  cudaFuncAttributes fa{};
  if (cudaFuncGetAttributes(&fa, entry.kernel) == cudaSuccess)
    what << " [kernel: " << fa.numRegs << " registers, at most " << fa.maxThreadsPerBlock
         << " threads per block, " << fa.sharedSizeBytes << " bytes static smem]";
  else
    cudaGetLastError();
  throw Error(Error::Kind::cuda, what.str());
}

bool launch_early(int cc_major) {
  static const bool allowed = [] {
    const char* v = std::getenv("SCHEDC_DEPENDENT_LAUNCH");
    return !(v && std::string(v) == "0");
  }();
  return cc_major >= 9 && allowed;
}

}  // namespace schedc::runtime
