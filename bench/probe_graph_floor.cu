// Probe (bench/NOTES.md, session 39; docs/convolution.md "The last row of tiles"): what a short
// kernel's time inside a CUDA graph is made of. One kernel, 256 threads a block, whose mode
// decides what a block does after `griddepcontrol.wait`: nothing, an 8 KB store, or k-tiles of
// 12 KB by TMA (tile mode, an 8-stage ring of mbarriers, consumers that wait and release each)
// and then the store. Each variant is launched 20 times into a graph (with or without
// programmatic dependent launch, in clusters or not), the graph replayed 30 times; the median
// per launch is printed.
// Build here: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o probe_graph_floor
// bench/probe_graph_floor.cu -lcuda (setmaxnreg needs sm_90a);
// run on the GPU machine. Session 39's figures came from this program's first, untidied form
// (the same kernel and variants); session 40 ran this copy (H200): the same figures within
// 0.1 us, and its "240 regs" variants 0.89 us empty (0.87 without) and 2.11 us with 6 k-tiles
// (2.08): the registers a block takes at launch cost nothing. Session 41 moved its helpers into
// bench/probe_util.h (shared with bench/probe_multicast.cu); the same figures within 0.05 us.
#include "probe_util.h"

enum Mode { kEmpty = 0, kStores = 1, kTiles = 2 };
enum Hint { kNoHint = 0, kHintAtStart = 1, kHintAfterCopies = 2 };

struct Args {
  int mode, k_tiles, hint;
  int* C;
};

constexpr int kStages = 8, kStageBytes = 12288;  // A 64x128 + B 32x128 int8

// Pad: more kernel parameters (PadInts ints) beside the two tensor maps.
template <int PadInts>
struct Pad {
  int v[PadInts];
};

// WideRegs: the warpgroups trade registers as schedc's Hopper kernels do with one block an SM
// (setmaxnreg: the producer's down to 56, the consumers' up to 240), so the kernel is compiled
// and launched with 240 registers a thread, as conv_s8_64x32_s16_split6's is; without it the
// kernel uses a few dozen.
template <int PadInts, bool WideRegs>
__global__ void __launch_bounds__(256, 1)
    probe(Args a, const __grid_constant__ Map ma, const __grid_constant__ Map mb,
          const __grid_constant__ Pad<PadInts> pad) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const unsigned full = base + kStages * kStageBytes, empty = full + 8 * kStages;
  if (threadIdx.x == 0 && a.mode == kTiles) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(&ma));
    asm volatile("prefetch.tensormap [%0];" ::"l"(&mb));
    for (int s = 0; s < kStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full + 8 * s));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 4;" ::"r"(empty + 8 * s));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if (a.hint == kHintAtStart && threadIdx.x == 0) asm volatile("griddepcontrol.launch_dependents;");
  const int n = a.mode == kTiles ? a.k_tiles + pad.v[PadInts - 1] : 0;  // pad.v is zeros
  if (threadIdx.x < 128) {  // the producer: thread 0 issues the copies
    if (WideRegs) asm volatile("setmaxnreg.dec.sync.aligned.u32 56;");
    if (threadIdx.x == 0) {
      for (int it = 0; it < n; ++it) {
        const int s = it % kStages;
        if (it >= kStages) wait_parity(empty + 8 * s, ((it / kStages) + 1) & 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * s),
                     "r"(kStageBytes)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            "[%0], "
            "[%1, {%3, %4}], [%2];" ::"r"(base + s * kStageBytes),
            "l"(&ma), "r"(full + 8 * s), "r"(it * 128), "r"(static_cast<int>(blockIdx.x) * 64)
            : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            "[%0], "
            "[%1, {%3, %4}], [%2];" ::"r"(base + s * kStageBytes + 8192),
            "l"(&mb), "r"(full + 8 * s), "r"(it * 128), "r"(0)
            : "memory");
      }
      if (a.hint == kHintAfterCopies) asm volatile("griddepcontrol.launch_dependents;");
    }
    return;
  }
  if (WideRegs) asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
  int sum = 0;  // the consumers: wait for each stage, read a byte of it, release it
  for (int it = 0; it < n; ++it) {
    const int s = it % kStages;
    wait_parity(full + 8 * s, (it / kStages) & 1);
    sum += smem[s * kStageBytes + threadIdx.x];
    if (threadIdx.x % 32 == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * s) : "memory");
  }
  if (a.mode == kEmpty) return;
  int4* c = reinterpret_cast<int4*>(a.C) + static_cast<size_t>(blockIdx.x) * 512;  // 8 KB a block
  const int t = threadIdx.x - 128;
  for (int i = 0; i < 4; ++i) c[t + 128 * i] = make_int4(sum, t, i, 1);
}

struct Variant {
  const char* name;
  Mode mode;
  int k_tiles;
  Hint hint;
  bool pdl;
  int blocks, smem_kb;
  bool big_params = false;
  int cluster = 1;
  bool wide_regs = false;
};

int main() {
  const int K = 4608, M = 132 * 64;
  void *A, *B, *C;
  CHECK(cudaMalloc(&A, static_cast<size_t>(M) * K));
  CHECK(cudaMalloc(&B, static_cast<size_t>(32) * K));
  CHECK(cudaMalloc(&C, static_cast<size_t>(132) * 8192));
  CHECK(cudaMemset(A, 1, static_cast<size_t>(M) * K));
  CHECK(cudaMemset(B, 1, static_cast<size_t>(32) * K));
  const Map ma = make_map(A, M, K, 64), mb = make_map(B, 32, K, 32);
  CHECK(cudaFuncSetAttribute(probe<1, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             220 * 1024));
  CHECK(cudaFuncSetAttribute(probe<1, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             220 * 1024));
  CHECK(cudaFuncSetAttribute(probe<512, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             220 * 1024));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<Variant> variants = {
      {"empty, no PDL", kEmpty, 0, kNoHint, false, 100, 196},
      {"empty, PDL, no hint", kEmpty, 0, kNoHint, true, 100, 196},
      {"empty, PDL, hint at start", kEmpty, 0, kHintAtStart, true, 100, 196},
      {"empty, PDL, hint, 98 KB (2 an SM)", kEmpty, 0, kHintAtStart, true, 100, 98},
      {"empty, PDL, hint, 16 blocks", kEmpty, 0, kHintAtStart, true, 16, 196},
      {"empty, PDL, hint, 2 KB more parameters", kEmpty, 0, kHintAtStart, true, 100, 196, true},
      {"empty, PDL, no hint, 96 blocks, 217 KB", kEmpty, 0, kNoHint, true, 96, 217},
      {"empty, PDL, no hint, 96 blocks, 217 KB, clusters of 6", kEmpty, 0, kNoHint, true, 96, 217,
       false, 6},
      {"empty, PDL, hint, 96 blocks, clusters of 2", kEmpty, 0, kHintAtStart, true, 96, 196, false,
       2},
      {"empty, PDL, hint, 96 blocks, clusters of 8", kEmpty, 0, kHintAtStart, true, 96, 196, false,
       8},
      {"stores 8 KB a block, PDL, hint", kStores, 0, kHintAtStart, true, 100, 196},
      {"stores, no PDL", kStores, 0, kNoHint, false, 100, 196},
      {"1 k-tile + stores, PDL, hint after the copies", kTiles, 1, kHintAfterCopies, true, 100,
       196},
      {"1 k-tile + stores, no PDL", kTiles, 1, kNoHint, false, 100, 196},
      {"1 k-tile + stores, PDL, hint, 16 blocks", kTiles, 1, kHintAfterCopies, true, 16, 196},
      {"5 k-tiles + stores, PDL, hint", kTiles, 5, kHintAfterCopies, true, 100, 196},
      {"5 k-tiles + stores, PDL, hint, 2 KB more parameters", kTiles, 5, kHintAfterCopies, true,
       100, 196, true},
      {"6 k-tiles + stores, PDL, hint, 96 blocks, clusters of 6", kTiles, 6, kHintAfterCopies, true,
       96, 196, false, 6},
      {"9 k-tiles + stores, PDL, hint", kTiles, 9, kHintAfterCopies, true, 100, 196},
      {"36 k-tiles + stores, PDL, hint", kTiles, 36, kHintAfterCopies, true, 100, 196},
      {"36 k-tiles + stores, PDL, hint, 16 blocks", kTiles, 36, kHintAfterCopies, true, 16, 196},
      {"36 k-tiles + stores, no PDL", kTiles, 36, kNoHint, false, 100, 196},
      // session 39's lead: conv_s8_64x32_s16_split6 returning right after griddepcontrol.wait
      // took 1.32 us in a graph where this program's empty kernels take 0.7-0.8
      {"empty, PDL, no hint, 96 blocks, 217 KB, clusters of 6, 240 regs", kEmpty, 0, kNoHint, true,
       96, 217, false, 6, true},
      {"empty, PDL, no hint, 96 blocks, 217 KB, 240 regs", kEmpty, 0, kNoHint, true, 96, 217, false,
       1, true},
      {"6 k-tiles + stores, PDL, hint, 96 blocks, clusters of 6, 240 regs", kTiles, 6,
       kHintAfterCopies, true, 96, 196, false, 6, true},
  };
  const Pad<1> pad1{};
  const Pad<512> pad512{};
  for (const Variant& v : variants) {
    const Args a{v.mode, v.k_tiles, v.hint, static_cast<int*>(C)};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(v.blocks);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = v.smem_kb * 1024;
    cfg.stream = stream;
    cudaLaunchAttribute attrs[2];
    int n = 0;
    if (v.pdl) {
      attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attrs[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (v.cluster > 1) {
      attrs[n].id = cudaLaunchAttributeClusterDimension;
      attrs[n].val.clusterDim.x = v.cluster;
      attrs[n].val.clusterDim.y = 1;
      attrs[n++].val.clusterDim.z = 1;
    }
    cfg.attrs = attrs;
    cfg.numAttrs = n;
    const GraphTime t = time_in_graph(stream, 20, [&] {
      if (v.big_params)
        CHECK(cudaLaunchKernelEx(&cfg, probe<512, false>, a, ma, mb, pad512));
      else if (v.wide_regs)
        CHECK(cudaLaunchKernelEx(&cfg, probe<1, true>, a, ma, mb, pad1));
      else
        CHECK(cudaLaunchKernelEx(&cfg, probe<1, false>, a, ma, mb, pad1));
    });
    std::printf("%-58s %6.2f us (min %6.2f)\n", v.name, t.median_us, t.min_us);
  }
  return 0;
}
