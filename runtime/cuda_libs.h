#pragma once
// cuBLAS and NVRTC, opened with dlopen at their first use instead of linked.
// Linked, their pages made every schedc process about 250 MB resident before
// it read a byte, `schedc check` and `emit` included, which never call them
// (issue 22: a hostile input's check must stay under 100 MB). Each entry has
// the type its header declares, so calls read as before: nvrtc().Version(…).
#include <cublas_v2.h>
#include <nvrtc.h>

namespace schedc::runtime {

struct NvrtcApi {
  decltype(&::nvrtcGetErrorString) GetErrorString;
  decltype(&::nvrtcVersion) Version;
  decltype(&::nvrtcCreateProgram) CreateProgram;
  decltype(&::nvrtcDestroyProgram) DestroyProgram;
  decltype(&::nvrtcCompileProgram) CompileProgram;
  decltype(&::nvrtcGetProgramLogSize) GetProgramLogSize;
  decltype(&::nvrtcGetProgramLog) GetProgramLog;
  decltype(&::nvrtcGetCUBINSize) GetCUBINSize;
  decltype(&::nvrtcGetCUBIN) GetCUBIN;
};

struct CublasApi {
  decltype(&::cublasCreate_v2) Create;
  decltype(&::cublasDestroy_v2) Destroy;
  decltype(&::cublasSetStream_v2) SetStream;
  decltype(&::cublasSetMathMode) SetMathMode;
  decltype(&::cublasSetWorkspace_v2) SetWorkspace;
  // The exported cublasGemmEx (the header also has an inline overload taking
  // a cudaDataType compute type).
  cublasStatus_t (*GemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                           const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                           int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                           cublasGemmAlgo_t);
  // The exported cublasGemmStridedBatchedEx (an inline overload likewise):
  // a strided batch's reference and baseline (docs/runtime.md).
  cublasStatus_t (*GemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                         int, int, const void*, const void*, cudaDataType, int,
                                         long long, const void*, cudaDataType, int, long long,
                                         const void*, void*, cudaDataType, int, long long, int,
                                         cublasComputeType_t, cublasGemmAlgo_t);
  // dtype s8's exact fallback reference, where cuBLAS int8 rejects a problem
  // (runtime/validate.h, cublas_gemm_f64).
  decltype(&::cublasDgemm_v2) Dgemm;
  decltype(&::cublasDgemmStridedBatched) DgemmStridedBatched;
  decltype(&::cublasGetStatusName) GetStatusName;
  decltype(&::cublasGetStatusString) GetStatusString;
};

// The libraries' functions, opened once (thread-safe). Throws Error (kind
// nvrtc for NVRTC, cuda for cuBLAS) naming the library, where it was looked
// for and dlerror()'s words when it cannot be opened or lacks a function.
const NvrtcApi& nvrtc();
const CublasApi& cublas();

}  // namespace schedc::runtime
