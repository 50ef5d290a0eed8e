#include "runtime/cuda_libs.h"

#include <dlfcn.h>

#include <string>

#include "runtime/error.h"

namespace schedc::runtime {

namespace {

// `name` (e.g. libnvrtc.so.13) through the loader's search path, else in the
// toolkit's library folder this schedc was built against.
void* open_library(const std::string& name, Error::Kind kind) {
  if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  const std::string first = dlerror();
  const std::string path = std::string(SCHEDC_CUDA_LIB_DIR) + "/" + name;
  if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  throw Error(kind, "cannot open " + name + " (" + first + "; " + path + ": " + dlerror() +
                        "): install the CUDA toolkit's libraries or add their folder to "
                        "LD_LIBRARY_PATH");
}

template <typename F>
void resolve(void* lib, const char* library, const char* symbol, Error::Kind kind, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!out) throw Error(kind, std::string(library) + " has no " + symbol);
}

std::string soname(const char* stem) {
  return std::string(stem) + ".so." + std::to_string(SCHEDC_CUDA_MAJOR);
}

}  // namespace

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = [] {
    const auto k = Error::Kind::nvrtc;
    const std::string name = soname("libnvrtc");
    void* lib = open_library(name, k);
    NvrtcApi a{};
    resolve(lib, name.c_str(), "nvrtcGetErrorString", k, a.GetErrorString);
    resolve(lib, name.c_str(), "nvrtcVersion", k, a.Version);
    resolve(lib, name.c_str(), "nvrtcCreateProgram", k, a.CreateProgram);
    resolve(lib, name.c_str(), "nvrtcDestroyProgram", k, a.DestroyProgram);
    resolve(lib, name.c_str(), "nvrtcCompileProgram", k, a.CompileProgram);
    resolve(lib, name.c_str(), "nvrtcGetProgramLogSize", k, a.GetProgramLogSize);
    resolve(lib, name.c_str(), "nvrtcGetProgramLog", k, a.GetProgramLog);
    resolve(lib, name.c_str(), "nvrtcGetCUBINSize", k, a.GetCUBINSize);
    resolve(lib, name.c_str(), "nvrtcGetCUBIN", k, a.GetCUBIN);
    return a;
  }();
  return api;
}

const CublasApi& cublas() {
  static const CublasApi api = [] {
    const auto k = Error::Kind::cuda;
    const std::string name = soname("libcublas");
    void* lib = open_library(name, k);
    CublasApi a{};
    resolve(lib, name.c_str(), "cublasCreate_v2", k, a.Create);
    resolve(lib, name.c_str(), "cublasDestroy_v2", k, a.Destroy);
    resolve(lib, name.c_str(), "cublasSetStream_v2", k, a.SetStream);
    resolve(lib, name.c_str(), "cublasSetMathMode", k, a.SetMathMode);
    resolve(lib, name.c_str(), "cublasGemmEx", k, a.GemmEx);
    resolve(lib, name.c_str(), "cublasGetStatusName", k, a.GetStatusName);
    resolve(lib, name.c_str(), "cublasGetStatusString", k, a.GetStatusString);
    return a;
  }();
  return api;
}

}  // namespace schedc::runtime
