// Probe (bench/NOTES.md, session 41): does TMA multicast make the k loop of ResNet-50's res5 3x3
// at batch 8 faster? That convolution (392x512x4608 as a GEMM) runs as 112 CTAs of 64x64 tiles,
// two CTAs a tile along k (split_k), 18 k-tiles of 16 KB each (A 64x128 + B 64x128 int8), and
// session 40 measured its k loop as data delivery: ~0.2 us a k-tile a CTA with only the copies
// left. Here every block runs only that loop: a producer thread copies each k-tile by TMA into a
// ring of mbarrier stages, consumer warps wait for each stage and release it. Variants:
//   own      each CTA copies its own A and B tiles (what schedc emits today);
//   pairs    clusters of 2 CTAs of neighbouring N tiles (the same A rows and k-tiles): each copies
//            half of A, multicast into both, and its own B; the L2 sends 12 KB a CTA a k-tile;
//   quads    clusters of 2x2 (M pair x N pair): A halves multicast along N, B halves along M;
//            8 KB a CTA a k-tile from the L2 (needs an even count of M tiles: 8 of them, 128 CTAs);
//   cluster  clusters of 2 without multicast (the cost of the cluster alone).
// Each variant is launched 20 times into a CUDA graph, the graph replayed 30 times; the median
// per launch is printed, with the bytes the SMs took in a second.
// Session 41 (H200, 580.159.04; two calls gave the same order): own 5.43 us (6.1 TB/s into the
// SMs), a cluster of 2 without multicast 5.86, pairs sharing A 5.88, 128 CTAs own 5.56 against
// pairs 5.91 and quads 10.96; 56 CTAs of 36 k-tiles 8.85 own, 9.54 pairs; 4, 8 or 12 stages
// alike. Multicast saves L2 reads but not the bytes each SM takes in, and that is what the loop
// waits on: the SMs' intake, not the L2, bounds it. (The remote arrive must be the plain
// `mbarrier.arrive.shared::cluster`: with `.release.cluster` every variant in clusters took
// 15-41 us.) The same session's second form, with bench/probe_util.h shared with
// bench/probe_graph_floor.cu, read the same within 0.05 us.
// Build here: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o probe_multicast
// bench/probe_multicast.cu -lcuda; run on the GPU machine.
#include "probe_util.h"

// How the CTAs of a cluster share their operands: a multicast half of A across the N pair, a
// multicast half of B across the M pair.
enum Share { kOwn = 0, kShareA = 1, kShareAB = 3, kClusterOnly = 4 };

struct Args {
  int share, k_tiles, stages, m_tiles;
  int* C;
};

constexpr int kStageBytes = 16384, kHalfA = 4096, kHalfB = 4096;

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

// A box of `rows` x 128 bytes at (k, row) into `dst`, multicast to the CTAs of `mask` when the
// mask is not zero.
__device__ __forceinline__ void copy(unsigned dst, const Map* map, unsigned bar, int k, int row,
                                     unsigned short mask) {
  if (mask == 0)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], "
        "[%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"(map), "r"(bar), "r"(k), "r"(row)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes."
        "multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst),
        "l"(map), "r"(bar), "r"(k), "r"(row), "h"(mask)
        : "memory");
}

__global__ void __launch_bounds__(256, 1)
    probe(Args a, const __grid_constant__ Map ma_full, const __grid_constant__ Map ma_half,
          const __grid_constant__ Map mb_full, const __grid_constant__ Map mb_half) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const unsigned full = base + a.stages * kStageBytes, empty = full + 8 * a.stages;
  const bool clustered = a.share != kOwn;
  const unsigned rank = clustered ? cluster_rank() : 0;
  const int peers = a.share == kShareAB ? 4 : a.share == kOwn ? 1 : 2;
  // Which tile this CTA computes: blocks in order (k slice, M tile, N tile) with the N pair (and
  // for quads the M pair) of a cluster neighbours in x.
  const int b = blockIdx.x, n_tiles = 8;
  int m, n, slice;
  if (a.share == kShareAB) {
    const int q = b / 4, r = b % 4;  // r: bit 0 the N half, bit 1 the M half
    n = (q % (n_tiles / 2)) * 2 + (r & 1);
    m = ((q / (n_tiles / 2)) % (a.m_tiles / 2)) * 2 + (r >> 1);
    slice = q / ((n_tiles / 2) * (a.m_tiles / 2));
  } else {
    n = b % n_tiles;
    m = (b / n_tiles) % a.m_tiles;
    slice = b / (n_tiles * a.m_tiles);
  }
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(&ma_full));
    asm volatile("prefetch.tensormap [%0];" ::"l"(&mb_full));
    for (int s = 0; s < a.stages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(full + 8 * s));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(empty + 8 * s), "r"(4 * peers));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (clustered)
    cluster_sync();
  else
    __syncthreads();
  const int k0 = slice * a.k_tiles;
  if (threadIdx.x < 128) {  // the producer: thread 0 issues the copies
    if (threadIdx.x == 0) {
      const unsigned short pair_n = a.share == kShareAB ? (rank & 2 ? 0xC : 0x3) : 0x3;
      const unsigned short pair_m = rank & 1 ? 0xA : 0x5;
      for (int it = 0; it < a.k_tiles; ++it) {
        const int s = it % a.stages, k = (k0 + it) * 128;
        if (it >= a.stages) wait_parity(empty + 8 * s, ((it / a.stages) + 1) & 1);
        const unsigned dst = base + s * kStageBytes, bar = full + 8 * s;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                     "r"(kStageBytes)
                     : "memory");
        if (a.share & kShareA) {  // my half of A, into both CTAs of my N pair
          const int h = rank & 1;
          copy(dst + h * kHalfA, &ma_half, bar, k, m * 64 + h * 32, pair_n);
        } else {
          copy(dst, &ma_full, bar, k, m * 64, 0);
        }
        if (a.share == kShareAB) {  // my half of B, into both CTAs of my M pair
          const int h = (rank >> 1) & 1;
          copy(dst + 8192 + h * kHalfB, &mb_half, bar, k, n * 64 + h * 32, pair_m);
        } else {
          copy(dst + 8192, &mb_full, bar, k, n * 64, 0);
        }
      }
    }
  } else {
    int sum = 0;  // the consumers: wait for each stage, read a byte of it, release it everywhere
    for (int it = 0; it < a.k_tiles; ++it) {
      const int s = it % a.stages;
      wait_parity(full + 8 * s, (it / a.stages) & 1);
      sum += smem[s * kStageBytes + threadIdx.x] + smem[s * kStageBytes + 8192 + threadIdx.x];
      if (threadIdx.x % 32 == 0) {
        for (int p = 0; p < peers; ++p) {
          if (!clustered) {
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * s)
                         : "memory");
          } else {
            unsigned remote;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                         : "=r"(remote)
                         : "r"(empty + 8 * s), "r"(p));
            asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
          }
        }
      }
    }
    a.C[b * 128 + threadIdx.x - 128] = sum;
  }
  if (clustered) cluster_sync();  // no CTA leaves while a peer may still write into it
}

struct Variant {
  const char* name;
  Share share;
  int m_tiles, slices, k_tiles, stages;  // CTAs: m_tiles x 8 N tiles x slices
};

int main() {
  const int K = 4608, M = 512, N = 512;
  void *A, *B, *C;
  CHECK(cudaMalloc(&A, static_cast<size_t>(M) * K));
  CHECK(cudaMalloc(&B, static_cast<size_t>(N) * K));
  CHECK(cudaMalloc(&C, 256 * 128 * sizeof(int)));
  CHECK(cudaMemset(A, 1, static_cast<size_t>(M) * K));
  CHECK(cudaMemset(B, 1, static_cast<size_t>(N) * K));
  const Map ma_full = make_map(A, M, K, 64), ma_half = make_map(A, M, K, 32);
  const Map mb_full = make_map(B, N, K, 64), mb_half = make_map(B, N, K, 32);
  CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // 7 M tiles x 8 N tiles x 2 slices = 112 CTAs (res5 at batch 8); 8 x 8 x 2 = 128 for quads.
  const std::vector<Variant> variants = {
      {"own, 112 CTAs, 18 k-tiles, 8 stages", kOwn, 7, 2, 18, 8},
      {"cluster of 2, no multicast, 112 CTAs", kClusterOnly, 7, 2, 18, 8},
      {"pairs share A, 112 CTAs", kShareA, 7, 2, 18, 8},
      {"own, 128 CTAs", kOwn, 8, 2, 18, 8},
      {"pairs share A, 128 CTAs", kShareA, 8, 2, 18, 8},
      {"quads share A and B, 128 CTAs", kShareAB, 8, 2, 18, 8},
      {"own, 56 CTAs, 36 k-tiles", kOwn, 7, 1, 36, 8},
      {"pairs share A, 56 CTAs, 36 k-tiles", kShareA, 7, 1, 36, 8},
      {"own, 112 CTAs, 4 stages", kOwn, 7, 2, 18, 4},
      {"pairs share A, 112 CTAs, 4 stages", kShareA, 7, 2, 18, 4},
      {"own, 112 CTAs, 12 stages", kOwn, 7, 2, 18, 12},
      {"pairs share A, 112 CTAs, 12 stages", kShareA, 7, 2, 18, 12},
  };
  for (const Variant& v : variants) {
    const int blocks = v.m_tiles * 8 * v.slices;
    const Args a{v.share, v.k_tiles, v.stages, v.m_tiles, static_cast<int*>(C)};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = v.stages * kStageBytes + 1024;
    cfg.stream = stream;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = v.share == kShareAB ? 4 : v.share == kOwn ? 1 : 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    const GraphTime t = time_in_graph(stream, 20, [&] {
      CHECK(cudaLaunchKernelEx(&cfg, probe, a, ma_full, ma_half, mb_full, mb_half));
    });
    const double bytes = static_cast<double>(blocks) * v.k_tiles * kStageBytes;
    std::printf("%-44s %6.2f us (min %6.2f)  %5.2f TB/s into the SMs\n", v.name, t.median_us,
                t.min_us, bytes / (t.median_us * 1e-6) / 1e12);
  }
  return 0;
}
