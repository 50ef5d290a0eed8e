// Probe (bench/NOTES.md, session 41): does TMA multicast make the k loop of ResNet-50's res5 3x3
// at batch 8 faster? (And, in its last rows, how fast TMA fills k-tiles of other sizes.) That
// convolution (392x512x4608 as a GEMM) runs as 112 CTAs of 64x64 tiles, two CTAs a tile along k
// (split_k), 18 k-tiles of 16 KB each (A 64x128 + B 64x128 int8), and session 40 measured its k
// loop as data delivery: ~0.2 us a k-tile a CTA with only the copies left. Here every block runs
// only that loop: a producer thread copies each k-tile by TMA into a ring of mbarrier stages,
// consumer warps wait for each stage and release it. Variants:
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
// waits on: the SMs' side, not the L2 (the last rows: a cost per stage). (The remote arrive must be
// the plain `mbarrier.arrive.shared::cluster`: with `.release.cluster` every variant in clusters
// took 15-41 us.) The same session's second form, with bench/probe_util.h shared with
// bench/probe_graph_floor.cu, read the same within 0.05 us.
// The last rows (also session 41, two calls alike) time k-tiles of other sizes, 64 a CTA, from
// 8192-row matrices: a 64x64 k-tile (16 KB) 0.227 us, 64x32 (12 KB) 0.228, 64x128 (24 KB) 0.295,
// 128x64 0.352-0.355, 128x128 (6 stages) 0.428-0.430, int8_best's 128x256 (48 KB, 4 stages)
// 0.566-0.569 (11.4 TB/s into 132 SMs), 256x128 0.684-0.686; 64x64 on 112 CTAs 0.226. Small
// k-tiles cost a floor of ~0.23 us whatever their bytes; large ones approach ~85 GB/s an SM
// (the 128- and 256-row A rows read ~34-45 MB of A, near the L2's size, and run slower than
// their transposes). int8_best at 1,300 TOPS spends 0.85 us a k-tile: its copies alone take
// two thirds of that, so at 8192^3 it is not held by the SMs' intake. k-tiles of B alone: 4, 8
// and 16 KB 0.225-0.226 us each, 16 stages as 8: up to ~16 KB a k-tile's cost is per stage phase,
// not per byte. The BK 256 / 512 rows (two or four 128-byte k columns a stage) and the last three
// (every k-tile in flight at once, and consumers spinning on test_wait) ran in session 42, on an
// H200 whose every row read 20-45% slower (64x64 0.329 us a k-tile; two calls alike): 64x64x256
// 0.414 us a stage (0.207 per 16 KB), B alone with two boxes a stage 0.328 against 0.279 with
// one, 64x64x512 in 2 stages 0.845; no stage reused 0.284 against 0.302 in 8 stages, test_wait
// spinning 0.281: the handshake is not the cost, the phases are, and the kernels with BK 256
// that this led to gain little (docs/convolution.md, "BK 256, run").
// Build here: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o probe_multicast
// bench/probe_multicast.cu -lcuda; run on the GPU machine.
#include "probe_util.h"

// How the CTAs of a cluster share their operands: a multicast half of A across the N pair, a
// multicast half of B across the M pair.
enum Share { kOwn = 0, kShareA = 1, kShareAB = 3, kClusterOnly = 4 };

// A tile's rows of A (a_rows) and of B (b_rows), 128 bytes of k each; the multicast variants
// take 64 and 64.
struct Args {
  int share, k_tiles, stages, m_tiles, n_tiles, a_rows, b_rows;
  int* C;
  int k_boxes;  // 128-byte k columns a stage (own copies only): boxes of each operand a stage
  int spin;     // the consumers poll with mbarrier.test_wait instead of try_wait
  __host__ __device__ int stage_bytes() const { return (a_rows + b_rows) * 128 * k_boxes; }
};

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
  const int stage_bytes = a.stage_bytes(), a_bytes = a.a_rows * 128 * a.k_boxes;
  const unsigned full = base + a.stages * stage_bytes, empty = full + 8 * a.stages;
  const bool clustered = a.share != kOwn;
  const unsigned rank = clustered ? cluster_rank() : 0;
  const int peers = a.share == kShareAB ? 4 : a.share == kOwn ? 1 : 2;
  // Which tile this CTA computes: blocks in order (k slice, M tile, N tile) with the N pair (and
  // for quads the M pair) of a cluster neighbours in x.
  const int b = blockIdx.x, n_tiles = a.n_tiles;
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
        const int s = it % a.stages, k = (k0 + it) * 128 * a.k_boxes;
        if (it >= a.stages) wait_parity(empty + 8 * s, ((it / a.stages) + 1) & 1);
        const unsigned dst = base + s * stage_bytes, bar = full + 8 * s;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                     "r"(stage_bytes)
                     : "memory");
        if (a.share & kShareA) {  // my half of A, into both CTAs of my N pair
          const int h = rank & 1;
          copy(dst + h * a_bytes / 2, &ma_half, bar, k, m * a.a_rows + h * a.a_rows / 2, pair_n);
        } else if (a.a_rows > 0) {  // a_rows 0: k-tiles of B alone
          for (int kb = 0; kb < a.k_boxes; ++kb)
            copy(dst + kb * a.a_rows * 128, &ma_full, bar, k + 128 * kb, m * a.a_rows, 0);
        }
        if (a.share == kShareAB) {  // my half of B, into both CTAs of my M pair
          const int h = (rank >> 1) & 1;
          copy(dst + a_bytes + h * a.b_rows * 64, &mb_half, bar, k, n * a.b_rows + h * a.b_rows / 2,
               pair_m);
        } else {
          for (int kb = 0; kb < a.k_boxes; ++kb)
            copy(dst + a_bytes + kb * a.b_rows * 128, &mb_full, bar, k + 128 * kb, n * a.b_rows, 0);
        }
      }
    }
  } else {
    int sum = 0;  // the consumers: wait for each stage, read a byte of it, release it everywhere
    for (int it = 0; it < a.k_tiles; ++it) {
      const int s = it % a.stages;
      if (a.spin)
        spin_parity(full + 8 * s, (it / a.stages) & 1);
      else
        wait_parity(full + 8 * s, (it / a.stages) & 1);
      sum += smem[s * stage_bytes + threadIdx.x] + smem[s * stage_bytes + a_bytes + threadIdx.x];
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

// CTAs: m_tiles x n_tiles x slices; A's and B's matrices `rows` x `k` (int8, K-major).
struct Variant {
  const char* name;
  Share share;
  int m_tiles, slices, k_tiles, stages;
  int n_tiles = 8, a_rows = 64, b_rows = 64, rows = 512, k = 4608, k_boxes = 1, spin = 0;
};

int main() {
  const size_t most = size_t(8192) * 8192;  // the largest matrix a variant reads
  void *A, *B, *C;
  CHECK(cudaMalloc(&A, most));
  CHECK(cudaMalloc(&B, most));
  CHECK(cudaMalloc(&C, 256 * 128 * sizeof(int)));
  CHECK(cudaMemset(A, 1, most));
  CHECK(cudaMemset(B, 1, most));
  CHECK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 220 * 1024));
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
      // int8_best at 8192^3 (128x256 tiles, 4 stages of 48 KB, one CTA an SM): at 1,300 TOPS a
      // CTA takes 0.85 us a k-tile; 132 CTAs of 64 k-tiles, the copies alone.
      {"int8_best 128x256, 132 CTAs, 64 k-tiles, 4 stages", kOwn, 33, 1, 64, 4, 4, 128, 256, 8192,
       8192},
      {"256x128, 132 CTAs, 64 k-tiles, 4 stages", kOwn, 22, 1, 64, 4, 6, 256, 128, 8192, 8192},
      {"128x128, 132 CTAs, 64 k-tiles, 6 stages", kOwn, 33, 1, 64, 6, 4, 128, 128, 8192, 8192},
      // The rate a k-tile's size gives, 64 k-tiles a CTA (the launch's cost spread thin).
      {"64x64, 132 CTAs, 64 k-tiles, 8 stages", kOwn, 33, 1, 64, 8, 4, 64, 64, 8192, 8192},
      {"64x128, 132 CTAs, 64 k-tiles, 8 stages", kOwn, 33, 1, 64, 8, 4, 64, 128, 8192, 8192},
      {"128x64, 132 CTAs, 64 k-tiles, 8 stages", kOwn, 33, 1, 64, 8, 4, 128, 64, 8192, 8192},
      {"64x32, 132 CTAs, 64 k-tiles, 8 stages", kOwn, 33, 1, 64, 8, 4, 64, 32, 8192, 8192},
      {"64x64, 112 CTAs, 64 k-tiles, 8 stages", kOwn, 28, 1, 64, 8, 4, 64, 64, 8192, 8192},
      // B alone (a filter-only k loop, as a kernel that reads A once a tile would run): one box
      // a k-tile.
      {"B alone, 64 rows (8 KB), 132 CTAs, 8 stages", kOwn, 33, 1, 64, 8, 4, 0, 64, 8192, 8192},
      {"B alone, 32 rows (4 KB), 132 CTAs, 8 stages", kOwn, 33, 1, 64, 8, 4, 0, 32, 8192, 8192},
      {"B alone, 128 rows (16 KB), 132 CTAs, 8 stages", kOwn, 33, 1, 64, 8, 4, 0, 128, 8192, 8192},
      {"B alone, 64 rows, 132 CTAs, 16 stages", kOwn, 33, 1, 64, 16, 4, 0, 64, 8192, 8192},
      // Two or four 128-byte k columns a stage (BK 256, 512): fewer phases for the same bytes.
      {"64x64, BK 256, 132 CTAs, 32 k-tiles, 4 stages", kOwn, 33, 1, 32, 4, 4, 64, 64, 8192, 8192,
       2},
      {"B alone, 64 rows, BK 256, 132 CTAs, 8 stages", kOwn, 33, 1, 32, 8, 4, 0, 64, 8192, 8192, 2},
      {"64x64, BK 512, 132 CTAs, 16 k-tiles, 2 stages", kOwn, 33, 1, 16, 2, 4, 64, 64, 8192, 8192,
       4},
      // Where the per-stage cost sits: every k-tile in flight at once (a stage each, none
      // reused: no release waited for), and consumers that spin on test_wait.
      {"B alone, 4 KB, 32 k-tiles in 32 stages (no reuse)", kOwn, 33, 1, 32, 32, 4, 0, 32, 8192,
       8192},
      {"B alone, 4 KB, 32 k-tiles in 8 stages", kOwn, 33, 1, 32, 8, 4, 0, 32, 8192, 8192},
      {"B alone, 8 KB, 64 k-tiles, 8 stages, test_wait spin", kOwn, 33, 1, 64, 8, 4, 0, 64, 8192,
       8192, 1, 1},
  };
  for (const Variant& v : variants) {
    const int blocks = v.m_tiles * v.n_tiles * v.slices;
    const Args a{v.share,   v.k_tiles, v.stages, v.m_tiles,
                 v.n_tiles, v.a_rows,  v.b_rows, static_cast<int*>(C),
                 v.k_boxes, v.spin};
    const int a_box = v.a_rows > 0 ? v.a_rows : 64;  // (unused without A)
    const Map ma_full = make_map(A, v.rows, v.k, a_box),
              ma_half = make_map(A, v.rows, v.k, a_box / 2);
    const Map mb_full = make_map(B, v.rows, v.k, v.b_rows),
              mb_half = make_map(B, v.rows, v.k, v.b_rows / 2);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = v.stages * a.stage_bytes() + 1024;
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
    const double bytes = static_cast<double>(blocks) * v.k_tiles * a.stage_bytes();
    std::printf("%-52s %6.2f us (min %6.2f)  %5.2f TB/s into the SMs, %.3f us a k-tile\n", v.name,
                t.median_us, t.min_us, bytes / (t.median_us * 1e-6) / 1e12,
                t.median_us / v.k_tiles);
  }
  return 0;
}
