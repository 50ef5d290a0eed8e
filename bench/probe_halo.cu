// Probe (bench/NOTES.md, session 44): an int8 convolution (NHWC) whose CTA copies its input
// ONCE, as whole zero-padded images (4-D TMA boxes: the padding is TMA's out-of-bounds fill),
// and reads every tap's A operand as a shifted window of that copy: wgmma's A descriptor starts
// a tap's shift rows further on. Session 42 priced ResNet-50's res5 at batch 8 as bound by the
// bytes each SM takes in (288 KB a CTA, half of them A's im2col rows: each input pixel copied
// nine times); here a CTA takes its filters' bytes and a copy of its images' channels.
//
// The layout (any stride, padding, dilation). Tap (r, s) reads input row
// h = stride * p - pad + r * dil = stride * (p + a_r) + e_r with 0 <= e_r < stride: a phase e_r
// and a shift a_r in the phase's rows; columns alike (b_s, f_s). A phase image (e, f) holds
// phase rows a_min .. a_min + RP - 1 and columns b_min .. b_min + WP - 1 (RP = P + a_max - a_min,
// WP = Q + b_max - b_min), 128 bytes of channels a pixel: one TMA box with element strides
// (stride, stride) from input (stride * a_min + e, stride * b_min + f). Output pixel (p, q) of
// image g is the tile's virtual row v = g * IMG + p * WP + q (IMG = RP * WP), and tap (r, s)
// reads row v + (a_r - a_min) * WP + (b_s - b_min) of its phase's image: every tap is one
// 64-row window shifted. Rows with p >= P or q >= Q are junk (computed, never stored); a valid
// row's reads stay inside its own image, so no zero rows are needed between images. Stride 1 is
// one phase; stride 2 four (3x3, pad 1).
//
// A CTA: G images (an M tile), BN output channels (an N tile), C / S channels (a k slice; the
// S slices of a tile are a cluster). Its phase images are copied once at the start, its filters
// a tap's k-tiles (C / S / 128 panels) a stage through a ring of STAGES (kTaps: every tap's at
// once, no stage reused); a warpgroup a 64-row block runs R * S * 4 * panels wgmma. A consumer
// warp's accumulators are a part of the tile, summed and stored by slice part % S: the others push
// theirs with st.async. Launched with programmatic dependent launch, as schedc's kernels. Validated
// exactly against a direct convolution on the GPU. Timed in CUDA graphs of 20 launches; the im2col
// + cuBLAS pipeline is schedc's (`schedc bench --conv ... --graph 20 --json` in the same call).
// The last rows move the 4-stage kernel toward schedc's `halo` kernel one way at a time (F):
// session 44, H200, two runs alike: as is 4.47-4.48 us; setmaxnreg 4.49 (ptxas ignores it here:
// C7507); all 128 producer threads in the loop 4.49-4.50; a fence a k-tile and a __syncwarp
// 4.47-4.49; the k loop not unrolled 6.87-6.89 (ptxas serializes its wgmma: C7520); all four
// 5.08-5.10 (the fences keep the wgmma unserialized). schedc's kernel of the same tile: 5.84-5.90.
// Session 44 (H200; bench/NOTES.md, docs/convolution.md "The input once a tile (`halo`)"): res5
// 3x3 at batch 8 4.36 us (2.31x of im2col + cuBLAS, against schedc's 1.63x in the same call),
// its 3x3/2 4.98-5.02 (2.02x), batch 1 3.03-3.16 us (2.15-2.25x); four ring stages as fast as
// all taps at once.
// Session 46 (H100): F & 16 copies each stride-2 phase image by a 5-D view of the input with no
// element strides (view5 in input_map): res5/2 b8 5.39 / 5.34 us against 5.43 / 5.35 strided (two
// runs; 4 stages 5.56-5.57 against 5.60), res5/2 b1 3.10-3.11 against 3.11-3.12: the strides are
// not what stride 2 costs. In the first of those runs both res5/2 b1 rows (4 slices) read WRONG
// (1532-1633 of 25088 outputs), exact in the second: this probe's 4-slice sums are suspect.
// Session 47 (H100): F & 128 sums the slices without a cluster, by TMA reduce-add of s32 into y
// (slice 0 zeroes the tile first): exact, res5/2 b8 two images 4 slices 5.50-5.63 us against the
// one-image cluster tile's 5.43-5.46: the zeroes' release and the counter's polls wait behind the
// CTA's copies (bench/NOTES.md session 47). PROBE_ONLY=<text> runs only the variants naming it.
// F & 256 (taps in turns a M tile) was slower on an H200 (5.35 against 5.07 us at res5/2 b8).
// Build here: nvcc -gencode arch=compute_90a,code=sm_90a -O2 -o build-gpu/probe_halo
// bench/probe_halo.cu -lcuda; run on the GPU machine.
#include "probe_util.h"

struct Conv {
  int n, h, w, c, k, stride;  // 3x3, pad 1
  __host__ __device__ int p() const { return (h + 2 - 3) / stride + 1; }
  __host__ __device__ int q() const { return (w + 2 - 3) / stride + 1; }
};

constexpr int kR = 3, kPad = 1, kTaps = kR * kR;

// The phase images and the taps' windows (host-computed, see the top).
struct Geometry {
  int rp, wp, img;             // a phase image's rows, its row pitch, and its rows x pitch
  int phases;                  // phase images a panel
  int phase_h[4], phase_w[4];  // each one's TMA start (input row, column)
  int tap_phase[kTaps], tap_shift[kTaps];
  int max_shift;
  // The same starts in the phase view (F & 16, even H and W): (f * C, b, e, a) of the
  // 5-D map (stride * C, W / stride, stride, H / stride, N)
  int view_c[4], view_w[4], view_e[4], view_h[4];
};

static int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static Geometry geometry(const Conv& cv) {
  Geometry g{};
  int a[kR], e[kR], a_min = 1 << 20, a_max = -(1 << 20);
  for (int r = 0; r < kR; ++r) {
    a[r] = floor_div(r - kPad, cv.stride);
    e[r] = r - kPad - cv.stride * a[r];
    a_min = std::min(a_min, a[r]);
    a_max = std::max(a_max, a[r]);
  }
  g.rp = cv.p() + a_max - a_min;
  g.wp = cv.q() + a_max - a_min;  // square filters: columns as rows
  g.img = g.rp * g.wp;
  int phase_of[4][4];
  for (auto& row : phase_of)
    for (int& x : row) x = -1;
  for (int r = 0; r < kR; ++r)
    for (int s = 0; s < kR; ++s) {
      int& ph = phase_of[e[r]][e[s]];
      if (ph < 0) {
        ph = g.phases++;
        g.phase_h[ph] = cv.stride * a_min + e[r];
        g.phase_w[ph] = cv.stride * a_min + e[s];
        g.view_c[ph] = e[s] * cv.c, g.view_w[ph] = a_min, g.view_e[ph] = e[r], g.view_h[ph] = a_min;
      }
      const int t = r * kR + s;
      g.tap_phase[t] = ph;
      g.tap_shift[t] = (a[r] - a_min) * g.wp + (a[s] - a_min);
      g.max_shift = std::max(g.max_shift, g.tap_shift[t]);
    }
  return g;
}

struct HArgs {
  Conv cv;
  Geometry geo;
  int g;          // images a tile
  int halo_rows;  // rows of a panel's phase images (phases x G x IMG) and the windows' reach
  int* y;         // N x P x Q x K, s32
  int* cnt;       // F & 128: a counter a tile (zero between launches)
  unsigned long long* tl;  // when not null: kStamps %globaltimer stamps a CTA (see stamp())
};

constexpr int kStamps = 8;

// The first consumer thread's clock at the CTA's landmarks: start, halo landed, last filters
// landed, wgmma done, the cluster's start barrier passed, sums received, end; with F & 128
// thread 32's "tile zeroed" (its arrival on zbar) as the eighth.
__device__ __forceinline__ void stamp(const HArgs& a, int i, unsigned tid = 128) {
  if (a.tl == nullptr || threadIdx.x != tid) return;
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  const int cta = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  a.tl[cta * kStamps + i] = t;
}

// A K-major operand of 128-byte rows in the 128-byte swizzle, 8-row groups 1024 bytes apart,
// starting at any row: the swizzle is a function of the shared address itself (the matrix
// base offset stays 0; setting it to (addr >> 7) & 7 gave wrong sums, session 44).
__device__ __forceinline__ unsigned long long desc128(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma64(int (&d)[32], unsigned long long da, unsigned long long db,
                                        int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
        "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),
        "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]),
        "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]),
        "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
      : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wgmma32(int (&d)[16], unsigned long long da, unsigned long long db,
                                        int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]),
        "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]),
        "+r"(d[14]), "+r"(d[15])
      : "l"(da), "l"(db), "r"(scale_d));
}

template <int BN>
__device__ __forceinline__ void wgmma_n(int (&d)[BN / 2], unsigned long long da,
                                        unsigned long long db) {
  if constexpr (BN == 64)
    wgmma64(d, da, db, 1);
  else
    wgmma32(d, da, db, 1);
}

// Four words into shared address `addr` of cluster CTA `cta` (st.async), completing as many bytes
// of a transaction on that CTA's mbarrier at `bar`.
__device__ __forceinline__ void store_remote_v4(unsigned addr, unsigned bar, unsigned cta, int4 v) {
  asm volatile(
      "{\n.reg .b32 ra, rb;\nmapa.shared::cluster.u32 ra, %0, %2;\n"
      "mapa.shared::cluster.u32 rb, %1, %2;\n"
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [ra], {%3, %4, %5, %6}, "
      "[rb];\n}\n" ::"r"(addr),
      "r"(bar), "r"(cta), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
      : "memory");
}

__device__ __forceinline__ void wait_parity_cluster(unsigned bar, unsigned parity) {
  asm volatile(
      "{.reg .pred d; W%=: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 d, [%0], %1; "
      "@!d bra W%=;}" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// WGS consumer warpgroups (64 virtual rows each) and one producer warpgroup; BN output channels
// a tile; SLICES CTAs a tile along k (a cluster). A consumer warp's accumulators are a part of
// the tile; part `i` is summed and stored by slice i % SLICES, the others push theirs to it with
// st.async, in fragment order.
// F: schedc's kernel's ways, one bit each (bench/NOTES.md session 44, the gap): 1 setmaxnreg
// (producer 56, consumers 240), 2 a k loop not unrolled (each tap's window from the parameter's
// tables by a run-time index), 4 the producer's 128 threads all in its loop, each arriving on a
// stage's `full` (129 arrivals), 8 a wgmma.fence at each k-tile and a __syncwarp after the
// release.
// F & 256: each M tile starts its taps at a different one (rot below).
// F & 128: the slices are no cluster; each adds its partial sums into y with one TMA reduce
// (cp.reduce.async.bulk.tensor .add, s32: exact) from a staging copy in shared memory. Slice 0
// zeroes the tile's outputs at the start (producer warps 1-3) and releases the tile's counter;
// each other slice's producer thread 32 acquires it before its consumers' reduce (the last one
// back resets it for the next launch). Every CTA of the grid must be resident at once.
template <int WGS, int PANELS, int BN, int SLICES, int STAGES, int F = 0>
__global__ void __launch_bounds__(128 * (WGS + 1), (F & 32) ? 2 : 1)
    halo_conv(HArgs a, const __grid_constant__ Map mx, const __grid_constant__ Map mw,
              const __grid_constant__ Map my) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
  const unsigned base = (raw + 1023) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);
  const Conv cv = a.cv;
  const Geometry& geo = a.geo;
  const int wp = geo.wp, img = geo.img, out_p = cv.p(), out_q = cv.q();
  constexpr int panels = PANELS, kBox = BN * 128, kPart = BN * 64;  // a warp's sums: 32 x BN/2
  constexpr int kOwned = (4 * WGS + SLICES - 1) / SLICES;           // parts a slice sums, at most
  // F & 64 (timing only): the slices are no cluster and exchange nothing; each stores its own
  // partial sums over the others' (wrong results): what the k loop costs without the split's sums
  constexpr bool kReduce = (F & 128) != 0;
  constexpr bool kCluster = SLICES > 1 && (F & (64 | 128)) == 0;
  const unsigned halo = base, halo_bytes = a.halo_rows * 128;
  const unsigned bbuf = halo + panels * halo_bytes;     // 9 x panels k-tiles of kBox bytes
  const unsigned recv = bbuf + STAGES * panels * kBox;  // [owned part][other slice] kPart bytes
  // mbarriers: the halo's, each stage's full and empty, the owned parts' received sums
  const unsigned bars = recv + kOwned * (SLICES - 1) * kPart, empty = bars + 8 * (1 + STAGES);
  const unsigned recv_bar = bars + 8 * (1 + 2 * STAGES);
  const unsigned zbar = recv_bar + 8 * kOwned;  // F & 128: the tile's outputs zeroed
  // F & 128: the partial sums (s32) staged in BN / 32 column blocks of 128-byte rows, 128-byte
  // swizzle (conflict-free fragment stores), one TMA reduce a block
  const unsigned out_stage = (bars + 32 * 8 + 1023) & ~1023u;
  const unsigned stage_block = (max(64 * WGS, a.g * img) * 128 + 1023) & ~1023u;
  const int slice = blockIdx.x, n_tile = blockIdx.y, m_tile = blockIdx.z;
  const int c0 = slice * panels * 128;
  // F & 256: the M tiles of one N tile and slice take the taps in turns from different ones
  // (tap (t + m_tile) % 9 at step t), so their filter copies do not ask for the same lines at once
  const int rot = (F & 256) ? m_tile % kTaps : 0;
  const auto tap_of = [rot](int t) { return (F & 256) ? (t + rot) % kTaps : t; };
  stamp(a, 0);
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(&mx));
    asm volatile("prefetch.tensormap [%0];" ::"l"(&mw));
    for (int i = 0; i < 2 + 2 * STAGES + kOwned; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bars + 8 * i),
                   "r"(i > STAGES && i <= 2 * STAGES      ? 4 * WGS
                       : (F & 4) && i >= 1 && i <= STAGES ? 129
                                                          : 1));  // empty: a consumer warp each
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  const int box_rows = a.g * img;  // a phase image's box
  __syncthreads();
  if (kCluster) asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  if constexpr ((F & 1) != 0) {
    if (threadIdx.x < 128)
      asm volatile("setmaxnreg.dec.sync.aligned.u32 56;");
    else
      asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
  }
  if (kReduce && threadIdx.x >= 32 && threadIdx.x < 128) {
    int* cnt = a.cnt + m_tile * gridDim.y + n_tile;
    if (slice == 0) {  // zero this tile's outputs, then release the counter
      const int quads = a.g * out_p * out_q * (BN / 4);
      for (int i = threadIdx.x - 32; i < quads; i += 96) {
        const int c4 = i % (BN / 4), px = i / (BN / 4), n = m_tile * a.g + px / (out_p * out_q);
        if (n < cv.n)
          *reinterpret_cast<int4*>(a.y + ((size_t)n * out_p * out_q + px % (out_p * out_q)) * cv.k +
                                   n_tile * BN + 4 * c4) = make_int4(0, 0, 0, 0);
      }
      asm volatile("bar.sync 1, 96;" ::: "memory");
      if (threadIdx.x == 32) {
        __threadfence();
        asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(cnt) : "memory");
      }
    } else if (threadIdx.x == 32) {  // slice 0 has zeroed the tile
      int seen = 0;
      do asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(seen) : "l"(cnt) : "memory");
      while (seen < 1);
      if (atomicAdd(cnt, 1) == SLICES - 1) atomicExch(cnt, 0);  // the last one back
    }
    stamp(a, 7, 32);
    if (threadIdx.x == 32)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(zbar) : "memory");
  }
  if (threadIdx.x < ((F & 4) ? 128 : 1)) {
    const unsigned hb = panels * geo.phases * box_rows * 128;
    if (threadIdx.x == 0)
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bars), "r"(hb)
                   : "memory");
    for (int p = 0; p < panels && threadIdx.x == 0; ++p)
      for (int ph = 0; ph < geo.phases; ++ph)
        if constexpr ((F & 16) != 0)
          asm volatile(
              "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
              "[%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(halo + p * halo_bytes +
                                                              ph * box_rows * 128),
              "l"(&mx), "r"(bars), "r"(geo.view_c[ph] + c0 + p * 128), "r"(geo.view_w[ph]),
              "r"(geo.view_e[ph]), "r"(geo.view_h[ph]), "r"(m_tile * a.g)
              : "memory");
        else
          asm volatile(
              "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
              "[%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(halo + p * halo_bytes +
                                                          ph * box_rows * 128),
              "l"(&mx), "r"(bars), "r"(c0 + p * 128), "r"(geo.phase_w[ph]), "r"(geo.phase_h[ph]),
              "r"(m_tile * a.g)
              : "memory");
    for (int t = 0; t < kTaps; ++t) {  // a tap's filters a stage
      const int st = t % STAGES;
      if (t >= STAGES) wait_parity(empty + 8 * st, (t / STAGES - 1) & 1);
      const unsigned bar = bars + 8 * (1 + st);
      if ((F & 4) && threadIdx.x != 0) {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
        continue;
      }
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                   "r"(panels * kBox)
                   : "memory");
      if (F & 4) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
      for (int p = 0; p < panels; ++p)
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
            "[%0], [%1, {%3, %4}], [%2];" ::"r"(bbuf + (st * panels + p) * kBox),
            "l"(&mw), "r"(bar), "r"(tap_of(t) * cv.c + c0 + p * 128), "r"(n_tile * BN)
            : "memory");
    }
    if (threadIdx.x == 0) asm volatile("griddepcontrol.launch_dependents;");
  }
  const int wg = threadIdx.x / 128 - 1;  // -1: the producer
  if (wg < 0) {
    if (kCluster) asm volatile("barrier.cluster.wait;" ::: "memory");
    return;
  }
  int acc[BN / 2];
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0;
  wait_parity(bars, 0);
  stamp(a, 1);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll((F & 2) ? 1 : kTaps)
  for (int t = 0; t < kTaps; ++t) {
    const int st = t % STAGES;
    wait_parity(bars + 8 * (1 + st), (t / STAGES) & 1);
    if (t == kTaps - 1) stamp(a, 2);
    if (F & 8) asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    const int tap = tap_of(t);
    const unsigned window =
        (a.geo.tap_phase[tap] * box_rows + wg * 64 + a.geo.tap_shift[tap]) * 128;
#pragma unroll
    for (int p = 0; p < panels; ++p) {
      const unsigned a_addr = halo + p * halo_bytes + window;
      const unsigned b_addr = bbuf + (st * panels + p) * kBox;
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma_n<BN>(acc, desc128(a_addr + kk * 32), desc128(b_addr + kk * 32));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    if (STAGES < kTaps) {  // the previous tap's wgmma done: its stage back to the producer
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
      if (t > 0 && t - 1 + STAGES < kTaps && threadIdx.x % 32 == 0)
        asm volatile(
            "mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(empty + 8 * ((t - 1) % STAGES))
            : "memory");
      if (F & 8) __syncwarp();
    }
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  stamp(a, 3);
  const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  const int part = 4 * wg + warp, owner = part % SLICES, owned = part / SLICES;
  if constexpr (kReduce) {  // stage the sums [block][row][32 channels], then TMA reduces into y
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int v = wg * 64 + warp * 16 + lane / 4 + 8 * h;
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int c = 8 * j + 2 * (lane % 4), cc = c % 32;
        const unsigned addr = out_stage + (c / 32) * stage_block + v * 128 +
                              (((cc / 4) ^ (v % 8)) * 16) + (cc % 4) * 4;
        asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(addr), "r"(acc[j * 4 + 2 * h]),
                     "r"(acc[j * 4 + 2 * h + 1])
                     : "memory");
      }
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync 2, %0;" ::"r"(128 * WGS) : "memory");
    stamp(a, 4);
    if (threadIdx.x == 128) {
      wait_parity(zbar, 0);
      stamp(a, 5);
      asm volatile("fence.proxy.async.global;" ::: "memory");
      for (int b = 0; b < BN / 32; ++b)
        asm volatile(
            "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group "
            "[%0, {%1, %2, %3, %4}], [%5];" ::"l"(&my),
            "r"(n_tile * BN + 32 * b), "r"(0), "r"(0), "r"(m_tile * a.g),
            "r"(out_stage + b * stage_block)
            : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
    stamp(a, 6);
    return;
  }
  if (kCluster) {
    asm volatile("barrier.cluster.wait;" ::: "memory");  // every slice's barriers initialized
    stamp(a, 4);
    if (slice != owner) {  // push this warp's sums to the owner, in fragment order
      const unsigned slot = recv + (owned * (SLICES - 1) + slice - (slice > owner)) * kPart;
#pragma unroll
      for (int v = 0; v < BN / 8; ++v)
        store_remote_v4(slot + (v * 32 + lane) * 16, recv_bar + 8 * owned, owner,
                        make_int4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]));
      stamp(a, 5);
      stamp(a, 6);
      return;
    }
    if (lane == 0)
      asm volatile(
          "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(recv_bar + 8 * owned),
          "r"((SLICES - 1) * kPart)
          : "memory");
    wait_parity_cluster(recv_bar + 8 * owned, 0);
    const int4* in =
        reinterpret_cast<const int4*>(smem + (recv - base)) + owned * (SLICES - 1) * (kPart / 16);
#pragma unroll
    for (int q = 0; q < SLICES - 1; ++q)
#pragma unroll
      for (int v = 0; v < BN / 8; ++v) {
        const int4 x = in[q * (kPart / 16) + v * 32 + lane];
        acc[4 * v] += x.x, acc[4 * v + 1] += x.y, acc[4 * v + 2] += x.z, acc[4 * v + 3] += x.w;
      }
  }
  stamp(a, 5);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int v = wg * 64 + warp * 16 + lane / 4 + 8 * h;
    const int g = v / img, p = (v % img) / wp, q = v % wp, n = m_tile * a.g + g;
    if (g < a.g && n < cv.n && p < out_p && q < out_q) {
      int* out = a.y + (((size_t)n * out_p + p) * out_q + q) * cv.k + n_tile * BN + 2 * (lane % 4);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
        *reinterpret_cast<int2*>(out + 8 * j) =
            make_int2(acc[j * 4 + 2 * h], acc[j * 4 + 2 * h + 1]);
    }
  }
  stamp(a, 6);
}

// The reference: one thread an output, a direct convolution.
__global__ void direct_conv(Conv cv, const signed char* x, const signed char* wt, int* y) {
  const int P = cv.p(), Q = cv.q();
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  const size_t total = size_t(cv.n) * P * Q * cv.k;
  if (i >= total) return;
  const int k = i % cv.k, q = (i / cv.k) % Q, p = (i / cv.k / Q) % P, n = i / cv.k / Q / P;
  int s = 0;
  for (int r = 0; r < kR; ++r)
    for (int t = 0; t < kR; ++t) {
      const int h = p * cv.stride + r - kPad, w = q * cv.stride + t - kPad;
      if (h < 0 || h >= cv.h || w < 0 || w >= cv.w) continue;
      const signed char* xp = x + ((size_t(n) * cv.h + h) * cv.w + w) * cv.c;
      const signed char* wq = wt + (size_t(k) * kTaps + r * kR + t) * cv.c;
      for (int c = 0; c < cv.c; ++c) s += int(xp[c]) * int(wq[c]);
    }
  y[i] = s;
}

// The input as a 4-D map (C, W, H, N): boxes of one panel x WP x RP x G pixels taken every
// `stride` columns and rows, 128-byte swizzle, zero outside the tensor (the padding).
// view5 (F & 16; H and W multiples of the stride): the input as the 5-D map (stride * C,
// W / stride, stride, H / stride, N), whose phase (e, f) is one box with no element strides:
// 128 bytes from channel f * C, WP x 1 x RP x G (zeros outside, as above).
static Map input_map(void* x, const Conv& cv, const Geometry& geo, int g, bool view5 = false) {
  if (view5) {
    const cuuint64_t st = cuuint64_t(cv.stride);
    const cuuint64_t dims[5] = {st * cv.c, cuuint64_t(cv.w) / st, st, cuuint64_t(cv.h) / st,
                                cuuint64_t(cv.n)};
    const cuuint64_t strides[4] = {st * cv.c, cuuint64_t(cv.w) * cv.c, st * cv.w * cv.c,
                                   cuuint64_t(cv.h) * cv.w * cv.c};
    const cuuint32_t box[5] = {128, cuuint32_t(geo.wp), 1, cuuint32_t(geo.rp), cuuint32_t(g)};
    const cuuint32_t es[5] = {1, 1, 1, 1, 1};
    return encode_map("input, 5-D view", x, 5, dims, strides, box, es);
  }
  const cuuint64_t dims[4] = {cuuint64_t(cv.c), cuuint64_t(cv.w), cuuint64_t(cv.h),
                              cuuint64_t(cv.n)};
  const cuuint64_t strides[3] = {cuuint64_t(cv.c), cuuint64_t(cv.w) * cv.c,
                                 cuuint64_t(cv.h) * cv.w * cv.c};
  const cuuint32_t st = cuuint32_t(cv.stride);
  const cuuint32_t box[4] = {128, cuuint32_t(geo.wp) * st, cuuint32_t(geo.rp) * st, cuuint32_t(g)};
  const cuuint32_t es[4] = {1, st, st, 1};
  return encode_map("input", x, 4, dims, strides, box, es);
}

struct Variant {
  const char* name;
  Conv cv;
  int g, slices, bn;
  int stages = kTaps;  // a tap's filters a stage; kTaps: every tap's at once, no stage reused
  int f = 0;           // halo_conv's F: schedc's ways
};

template <int WGS, int PANELS, int BN, int SLICES, int STAGES, int F = 0>
static void run(const Variant& v, cudaStream_t stream, const signed char* x, const signed char* wt,
                int* y, const int* ref) {
  const Conv& cv = v.cv;
  const Geometry geo = geometry(cv);
  const int box_rows = v.g * geo.img;
  const int halo_rows =
      std::max(geo.phases * box_rows, (geo.phases - 1) * box_rows + 64 * WGS + geo.max_shift);
  const size_t stage_block = (size_t(std::max(64 * WGS, box_rows)) * 128 + 1023) / 1024 * 1024;
  const size_t smem = 1024 + size_t(PANELS) * halo_rows * 128 + STAGES * PANELS * BN * 128 +
                      size_t((4 * WGS + SLICES - 1) / SLICES) * (SLICES - 1) * BN * 64 + 32 * 8 +
                      ((F & 128) ? 1024 + BN / 32 * stage_block : 0);
  const int m_tiles = (cv.n + v.g - 1) / v.g, n_tiles = cv.k / BN;
  if (smem > 227 * 1024) {
    std::printf("%-50s %zu KB of shared memory: not run\n", v.name, smem / 1024);
    return;
  }
  int* cnt;
  CHECK(cudaMalloc(&cnt, m_tiles * n_tiles * sizeof(int)));
  CHECK(cudaMemset(cnt, 0, m_tiles * n_tiles * sizeof(int)));
  HArgs a{cv, geo, v.g, halo_rows, y, cnt, nullptr};
  const Map mx = input_map(const_cast<signed char*>(x), cv, geo, v.g, (F & 16) != 0);
  const Map mw = make_map(const_cast<signed char*>(wt), cv.k, 1ull * kTaps * cv.c, BN);
  // y (K, Q, P, N) s32 in boxes of 32 channels x WP x RP x G, 128-byte swizzle: a column block of
  // the staged virtual rows; rows past P or Q are outside and not written
  const cuuint64_t ydims[4] = {cuuint64_t(cv.k), cuuint64_t(cv.q()), cuuint64_t(cv.p()),
                               cuuint64_t(cv.n)};
  const cuuint64_t ystrides[3] = {4ull * cv.k, 4ull * cv.q() * cv.k, 4ull * cv.p() * cv.q() * cv.k};
  const cuuint32_t ybox[4] = {32, cuuint32_t(geo.wp), cuuint32_t(geo.rp), cuuint32_t(v.g)};
  const cuuint32_t yes[4] = {1, 1, 1, 1};
  const Map my = encode_map("output", y, 4, ydims, ystrides, ybox, yes,
                            CU_TENSOR_MAP_DATA_TYPE_INT32, CU_TENSOR_MAP_SWIZZLE_128B);
  auto kernel = halo_conv<WGS, PANELS, BN, SLICES, STAGES, F>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)));
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(SLICES, n_tiles, m_tiles);
  cfg.blockDim = dim3(128 * (WGS + 1));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attrs[2];
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim.x = (F & (64 | 128)) ? 1 : SLICES;
  attrs[0].val.clusterDim.y = 1;
  attrs[0].val.clusterDim.z = 1;
  attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attrs;
  cfg.numAttrs = 2;
  int clusters = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
  const size_t outs = size_t(cv.n) * cv.p() * cv.q() * cv.k;
  CHECK(cudaMemset(y, 0x7f, outs * sizeof(int)));
  CHECK(cudaLaunchKernelEx(&cfg, kernel, a, mx, mw, my));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<int> got(outs), want(outs);
  CHECK(cudaMemcpy(got.data(), y, outs * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), ref, outs * sizeof(int), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = outs;
  for (size_t i = 0; i < outs; ++i)
    if (got[i] != want[i]) {
      if (first == outs) first = i;
      ++bad;
    }
  const GraphTime t =
      time_in_graph(stream, 20, [&] { CHECK(cudaLaunchKernelEx(&cfg, kernel, a, mx, mw, my)); });
  const double ops = 2.0 * outs * kTaps * cv.c;
  std::printf("%-50s %3d CTAs (%3d at once) %4zu KB  %6.2f us (min %6.2f) %6.1f TOPS  %s", v.name,
              m_tiles * n_tiles * SLICES, clusters * SLICES, smem / 1024, t.median_us, t.min_us,
              ops / (t.median_us * 1e-6) / 1e12, bad == 0 ? "exact" : "WRONG");
  if (bad)
    std::printf(" (%zu of %zu wrong, first at %zu: %d against %d)", bad, outs, first, got[first],
                want[first]);
  std::printf("\n");
  // One more launch with stamps: each landmark's mean and latest a CTA after the earliest start.
  const int ctas = m_tiles * n_tiles * SLICES;
  unsigned long long* tl;
  CHECK(cudaMalloc(&tl, ctas * kStamps * sizeof(unsigned long long)));
  CHECK(cudaMemset(tl, 0, ctas * kStamps * sizeof(unsigned long long)));
  HArgs b = a;  // (the counters are back to zero after every launch)
  b.tl = tl;
  CHECK(cudaLaunchKernelEx(&cfg, kernel, b, mx, mw, my));
  CHECK(cudaStreamSynchronize(stream));
  std::vector<unsigned long long> h(ctas * kStamps);
  CHECK(cudaMemcpy(h.data(), tl, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(tl));
  CHECK(cudaFree(cnt));
  unsigned long long t0 = ~0ull;
  for (int c = 0; c < ctas; ++c) t0 = std::min(t0, h[c * kStamps]);
  std::printf("    ns after the first start (mean / latest):");
  const char* names[kStamps] = {"start",   "halo",   "filters", "wgmma",
                                "cluster", "summed", "end",     "zeroed"};
  for (int i = 0; i < kStamps; ++i) {
    double mean = 0;
    unsigned long long late = 0;
    int seen = 0;
    for (int c = 0; c < ctas; ++c) {
      if (h[c * kStamps + i] == 0) continue;  // not reached (no cluster)
      mean += double(h[c * kStamps + i] - t0);
      late = std::max(late, h[c * kStamps + i] - t0);
      ++seen;
    }
    if (seen) std::printf(" %s %.0f/%llu", names[i], mean / seen, late);
  }
  std::printf("\n");
}

int main() {
  const Conv b8{8, 7, 7, 512, 512, 1}, b8s2{8, 14, 14, 512, 512, 2}, b1{1, 7, 7, 512, 512, 1},
      b1s2{1, 14, 14, 512, 512, 2};
  const std::vector<Variant> variants = {
      {"res5 b8: 1 image, n64, 2 slices", b8, 1, 2, 64},
      {"res5 b8: the same, 4 stages", b8, 1, 2, 64, 4},
      {"res5 b8: 4 stages, setmaxnreg", b8, 1, 2, 64, 4, 1},
      {"res5 b8: 4 stages, k loop not unrolled", b8, 1, 2, 64, 4, 2},
      {"res5 b8: 4 stages, 128 producer threads", b8, 1, 2, 64, 4, 4},
      {"res5 b8: 4 stages, fence a k-tile, syncwarp", b8, 1, 2, 64, 4, 8},
      {"res5 b8: 4 stages, all four of schedc's ways", b8, 1, 2, 64, 4, 15},
      {"res5/2 b8: 1 image, n64, 2 slices", b8s2, 1, 2, 64},
      {"res5/2 b8: the same, 5-D phase view", b8s2, 1, 2, 64, kTaps, 16},
      {"res5/2 b8: 4 stages", b8s2, 1, 2, 64, 4},
      {"res5/2 b8: 4 stages, 5-D phase view", b8s2, 1, 2, 64, 4, 16},
      {"res5/2 b8: 2 images, n64, 4 slices, 2 stages", b8s2, 2, 4, 64, 2},
      {"res5/2 b8: 2 images, n64, 4 slices, 4 stages", b8s2, 2, 4, 64, 4},
      {"res5/2 b8: 2 images, n64, 4 slices, 2 stages, 2 CTAs an SM", b8s2, 2, 4, 64, 2, 32},
      {"res5/2 b8: 3 images, n64, 4 slices, 4 stages", b8s2, 3, 4, 64, 4},
      {"res5/2 b8: 3 images, n64, 4 slices, 6 stages", b8s2, 3, 4, 64, 6},
      {"res5/2 b8: 1 image, n64, 2 slices, no sums (timing only)", b8s2, 1, 2, 64, kTaps, 64},
      {"res5/2 b8: 2 images, n64, 4 slices, 4 stages, no sums (timing only)", b8s2, 2, 4, 64, 4,
       64},
      {"res5/2 b8: 2 images, n64, 4 slices, 6 stages, no sums (timing only)", b8s2, 2, 4, 64, 6,
       64},
      {"res5/2 b8: 1 image, n64, 2 slices, TMA-reduce sums", b8s2, 1, 2, 64, kTaps, 128},
      {"res5/2 b8: 1 image, 4 stages, TMA-reduce sums", b8s2, 1, 2, 64, 4, 128},
      {"res5/2 b8: 2 images, 4 slices, 4 stages, TMA-reduce sums", b8s2, 2, 4, 64, 4, 128},
      {"res5/2 b8: 2 images, 4 slices, 6 stages, TMA-reduce sums", b8s2, 2, 4, 64, 6, 128},
      {"res5 b8: 1 image, 4 stages, TMA-reduce sums", b8, 1, 2, 64, 4, 128},
      {"res5 b8: 2 images, 4 slices, 4 stages, TMA-reduce sums", b8, 2, 4, 64, 4, 128},
      {"res5/2 b1: 1 image, n32, 4 slices, TMA-reduce sums", b1s2, 1, 4, 32, kTaps, 128},
      {"res5/2 b8: 1 image, 2 slices, taps rotated", b8s2, 1, 2, 64, kTaps, 256},
      {"res5/2 b8: 1 image, 2 slices, 4 stages, taps rotated", b8s2, 1, 2, 64, 4, 256},
      {"res5 b8: 1 image, 2 slices, taps rotated", b8, 1, 2, 64, kTaps, 256},
      {"res5 b8: 1 image, 2 slices, 4 stages, taps rotated", b8, 1, 2, 64, 4, 256},
      {"res5 b1: 1 image, n32, 4 slices", b1, 1, 4, 32},
      {"res5/2 b1: 1 image, n32, 4 slices", b1s2, 1, 4, 32},
      {"res5/2 b1: the same, 5-D phase view", b1s2, 1, 4, 32, kTaps, 16},
  };

  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const char* only = std::getenv("PROBE_ONLY");  // run only the variants naming this
  for (const Variant& v : variants) {
    if (only != nullptr && std::strstr(v.name, only) == nullptr) continue;
    const Conv& cv = v.cv;
    const size_t xs = size_t(cv.n) * cv.h * cv.w * cv.c, ws = size_t(cv.k) * kTaps * cv.c,
                 outs = size_t(cv.n) * cv.p() * cv.q() * cv.k;
    std::vector<signed char> hx(xs), hw(ws);
    unsigned seed = 12345;
    for (auto& e : hx) e = static_cast<signed char>((seed = seed * 1103515245u + 12345u) >> 24);
    for (auto& e : hw) e = static_cast<signed char>((seed = seed * 1103515245u + 12345u) >> 24);
    signed char *x, *wt;
    int *y, *ref;
    CHECK(cudaMalloc(&x, xs));
    CHECK(cudaMalloc(&wt, ws));
    CHECK(cudaMalloc(&y, outs * sizeof(int)));
    CHECK(cudaMalloc(&ref, outs * sizeof(int)));
    CHECK(cudaMemcpy(x, hx.data(), xs, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(wt, hw.data(), ws, cudaMemcpyHostToDevice));
    direct_conv<<<(outs + 255) / 256, 256, 0, stream>>>(cv, x, wt, ref);
    CHECK(cudaStreamSynchronize(stream));
    const Geometry geo = geometry(cv);
    const int rows = (v.g - 1) * geo.img + (cv.p() - 1) * geo.wp + cv.q();
    const int wgs = (rows + 63) / 64, panels = cv.c / v.slices / 128;
    bool ran = false;
    // The combinations built: (warpgroups, panels, BN, slices).
#define HALO_TRY(W, P, N, S, T, FL)                                                     \
  if (!ran && wgs == W && panels == P && v.bn == N && v.slices == S && v.stages == T && \
      v.f == FL) {                                                                      \
    run<W, P, N, S, T, FL>(v, stream, x, wt, y, ref);                                   \
    ran = true;                                                                         \
  }
    HALO_TRY(1, 2, 64, 2, 9, 0)
    HALO_TRY(1, 2, 64, 2, 4, 0)
    HALO_TRY(1, 2, 64, 2, 4, 1)
    HALO_TRY(1, 2, 64, 2, 4, 2)
    HALO_TRY(1, 2, 64, 2, 4, 4)
    HALO_TRY(1, 2, 64, 2, 4, 8)
    HALO_TRY(1, 2, 64, 2, 4, 15)
    HALO_TRY(1, 2, 64, 2, 9, 16)
    HALO_TRY(1, 2, 64, 2, 4, 16)
    HALO_TRY(1, 1, 32, 4, 9, 16)
    HALO_TRY(2, 1, 64, 4, 2, 0)
    HALO_TRY(2, 1, 64, 4, 4, 0)
    HALO_TRY(2, 1, 64, 4, 2, 32)
    HALO_TRY(3, 1, 64, 4, 4, 0)
    HALO_TRY(3, 1, 64, 4, 6, 0)
    HALO_TRY(1, 2, 64, 2, 9, 64)
    HALO_TRY(2, 1, 64, 4, 4, 64)
    HALO_TRY(2, 1, 64, 4, 6, 64)
    HALO_TRY(1, 2, 64, 2, 3, 0)
    HALO_TRY(1, 2, 64, 2, 2, 0)
    HALO_TRY(1, 2, 32, 2, 9, 0)
    HALO_TRY(1, 1, 64, 4, 9, 0)
    HALO_TRY(1, 1, 32, 4, 9, 0)
    HALO_TRY(1, 1, 32, 4, 4, 0)
    HALO_TRY(2, 1, 32, 4, 9, 0)
    HALO_TRY(1, 2, 64, 2, 9, 128)
    HALO_TRY(1, 2, 64, 2, 9, 256)
    HALO_TRY(1, 2, 64, 2, 4, 256)
    HALO_TRY(1, 2, 64, 2, 4, 128)
    HALO_TRY(2, 1, 64, 4, 4, 128)
    HALO_TRY(2, 1, 64, 4, 6, 128)
    HALO_TRY(3, 1, 64, 4, 4, 128)
    HALO_TRY(1, 1, 32, 4, 9, 128)
#undef HALO_TRY
    if (!ran) std::printf("%s: %d warpgroups, %d panels: not built\n", v.name, wgs, panels);
    CHECK(cudaFree(x));
    CHECK(cudaFree(wt));
    CHECK(cudaFree(y));
    CHECK(cudaFree(ref));
  }
  return 0;
}
