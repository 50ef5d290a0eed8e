// What the standalone nvcc probes (bench/probe_graph_floor.cu, probe_multicast.cu and
// probe_halo.cu) share: a CUDA call checked, int8 tensor maps (an int8 K-major matrix as a 2-D
// one; the bare driver call, as the probes use no schedc code), an mbarrier wait, and a launch
// timed inside a CUDA graph.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                          \
  do {                                                    \
    const cudaError_t e = (x);                            \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)

// A CUtensorMap as a kernel parameter (__grid_constant__).
struct __align__(64) Map {
  unsigned long long opaque[16];
};

// An int8 tensor of `rank` dimensions (innermost first; `strides` in bytes, rank - 1 of them)
// as a tile-mode tensor map, 128-byte swizzle, zeros outside; exits naming `what` if the
// driver refuses it.
// (`type` and `swizzle` name another element type and swizzle where given.)
inline Map encode_map(const char* what, void* p, unsigned rank, const cuuint64_t* dims,
                      const cuuint64_t* strides, const cuuint32_t* box,
                      const cuuint32_t* elem_strides,
                      CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT8,
                      CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_128B) {
  CUtensorMap m;
  const CUresult r = cuTensorMapEncodeTiled(
      &m, type, rank, p, dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled (%s): error %d\n", what, static_cast<int>(r));
    std::exit(1);
  }
  Map out;
  std::memcpy(&out, &m, sizeof m);
  return out;
}

// A K-major int8 matrix of `rows` x `cols` as a 2-D tensor map: boxes of 128 bytes x box_rows,
// 128-byte swizzle.
inline Map make_map(void* p, unsigned long long rows, unsigned long long cols, unsigned box_rows) {
  const cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols};
  const cuuint32_t box[2] = {128, box_rows}, elem_strides[2] = {1, 1};
  return encode_map("matrix", p, 2, dims, strides, box, elem_strides);
}

// Waits until the mbarrier at shared address `bar` has completed the phase of `parity`.
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile(
      "{.reg .pred d; W%=: mbarrier.try_wait.parity.shared::cta.b64 d, [%0], %1; @!d bra W%=;}" ::
          "r"(bar),
      "r"(parity)
      : "memory");
}

// The same wait by polling mbarrier.test_wait (never suspends the thread).
__device__ __forceinline__ void spin_parity(unsigned bar, unsigned parity) {
  asm volatile(
      "{.reg .pred d; S%=: mbarrier.test_wait.parity.shared::cta.b64 d, [%0], %1; @!d bra S%=;}" ::
          "r"(bar),
      "r"(parity)
      : "memory");
}

struct GraphTime {
  float median_us, min_us;
};

// `launch()` (one kernel launch on `stream`) captured `per_graph` times into a CUDA graph, the
// graph replayed 5 times to warm up and then 30 times: the median and the least time a launch.
template <typename Launch>
GraphTime time_in_graph(cudaStream_t stream, int per_graph, Launch&& launch) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < per_graph; ++i) launch();
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < 5; ++w) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<float> us;
  for (int r = 0; r < 30; ++r) {
    CHECK(cudaEventRecord(start, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1000.0f / static_cast<float>(per_graph));
  }
  std::sort(us.begin(), us.end());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return {us[us.size() / 2], us[0]};
}
