#include "runtime/cuda_libs.h"

#include <dlfcn.h>

#include <string>

#include "runtime/error.h"

namespace schedc::runtime {

namespace {

// One opened library (`stem` + ".so." + the toolkit's major version): through
// the loader's search path, else in the toolkit's library folder this schedc
// was built against. Errors are `kind` and name the library.
class Library {
 public:
  Library(const char* stem, Error::Kind kind)
      : name_(std::string(stem) + ".so." + std::to_string(SCHEDC_CUDA_MAJOR)), kind_(kind) {
    if ((handle_ = dlopen(name_.c_str(), RTLD_NOW | RTLD_LOCAL))) return;
    const std::string first = dlerror();
    const std::string path = std::string(SCHEDC_CUDA_LIB_DIR) + "/" + name_;
    if ((handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) return;
    throw Error(kind_, "cannot open " + name_ + " (" + first + "; " + path + ": " + dlerror() +
                           "): install the CUDA toolkit's libraries or add their folder to "
                           "LD_LIBRARY_PATH");
  }
  // `out` = the function `symbol`, with the type its header declares.
  template <typename F>
  void get(F& out, const char* symbol) const {
    out = reinterpret_cast<F>(dlsym(handle_, symbol));
    if (!out) throw Error(kind_, name_ + " has no " + symbol);
  }

 private:
  std::string name_;
  Error::Kind kind_;
  void* handle_ = nullptr;
};

}  // namespace

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = [] {
    const Library lib("libnvrtc", Error::Kind::nvrtc);
    NvrtcApi a{};
    lib.get(a.GetErrorString, "nvrtcGetErrorString");
    lib.get(a.Version, "nvrtcVersion");
    lib.get(a.CreateProgram, "nvrtcCreateProgram");
    lib.get(a.DestroyProgram, "nvrtcDestroyProgram");
    lib.get(a.CompileProgram, "nvrtcCompileProgram");
    lib.get(a.GetProgramLogSize, "nvrtcGetProgramLogSize");
    lib.get(a.GetProgramLog, "nvrtcGetProgramLog");
    lib.get(a.GetCUBINSize, "nvrtcGetCUBINSize");
    lib.get(a.GetCUBIN, "nvrtcGetCUBIN");
    return a;
  }();
  return api;
}

const CublasApi& cublas() {
  static const CublasApi api = [] {
    const Library lib("libcublas", Error::Kind::cuda);
    CublasApi a{};
    lib.get(a.Create, "cublasCreate_v2");
    lib.get(a.Destroy, "cublasDestroy_v2");
    lib.get(a.SetStream, "cublasSetStream_v2");
    lib.get(a.SetMathMode, "cublasSetMathMode");
    lib.get(a.SetWorkspace, "cublasSetWorkspace_v2");
    lib.get(a.GemmEx, "cublasGemmEx");
    lib.get(a.GemmStridedBatchedEx, "cublasGemmStridedBatchedEx");
    lib.get(a.Dgemm, "cublasDgemm_v2");
    lib.get(a.DgemmStridedBatched, "cublasDgemmStridedBatched");
    lib.get(a.GetStatusName, "cublasGetStatusName");
    lib.get(a.GetStatusString, "cublasGetStatusString");
    return a;
  }();
  return api;
}

}  // namespace schedc::runtime
