// CPU emulation of the CUDA that schedc emits for mma.sync / WMMA kernels (cp.async, TMA
// boxes + mbarriers, ldmatrix, mma.sync, nvcuda::wmma), for machines without a GPU: one
// std::thread per CUDA thread, warp collectives (ldmatrix, mma.sync) through per-warp
// exchange buffers, TMA boxes copied with the 128-byte swizzle. A developer check of the
// emitted code, not a model of timing or of the memory model; scripts/emulate_mma/emulate.py.
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
struct dim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local dim3 threadIdx;
dim3 blockIdx, gridDim, blockDim;
thread_local int emu_lane, emu_warp;
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#define __launch_bounds__(x)
#define __align__(x)
#define __grid_constant__
#define __shared__
alignas(1024) unsigned char smem[240 * 1024];
inline int min(int a, int b) {
  return a < b ? a : b;
}
inline int max(int a, int b) {
  return a > b ? a : b;
}
inline unsigned max(unsigned a, unsigned b) {
  return a > b ? a : b;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline void __trap() {
  abort();
}
struct __half {
  uint16_t x;
  __half() = default;
  __half(float f) {
    _Float16 h = (_Float16)f;
    memcpy(&x, &h, 2);
  }
  operator float() const {
    _Float16 h;
    memcpy(&h, &x, 2);
    return (float)h;
  }
};
struct __half2 {
  __half a, b;
};
typedef __half half;
struct float4 {
  float x, y, z, w;
};
struct float2 {
  float x, y;
};
inline float4 make_float4(float a, float b, float c, float d) {
  return {a, b, c, d};
}
inline float2 make_float2(float a, float b) {
  return {a, b};
}
inline __half2 __floats2half2_rn(float a, float b) {
  return {__half(a), __half(b)};
}
inline float __half2float(__half h) {
  return float(h);
}
inline __half __float2half(float f) {
  return __half(f);
}
struct __nv_bfloat16 {
  uint16_t x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) {
    unsigned u = __float_as_uint(f);
    u += 0x7fff + ((u >> 16) & 1);
    x = u >> 16;
  }
  operator float() const { return __uint_as_float(unsigned(x) << 16); }
};
struct __nv_bfloat162 {
  __nv_bfloat16 a, b;
};
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return {__nv_bfloat16(a), __nv_bfloat16(b)};
}
inline float __bfloat162float(__nv_bfloat16 h) {
  return float(h);
}
inline __nv_bfloat16 __float2bfloat16(float f) {
  return __nv_bfloat16(f);
}

std::unique_ptr<std::barrier<>> emu_block_bar;
struct EmuWarp {
  std::barrier<> bar{32};
  unsigned addr[32];
  unsigned a[32][4], b[32][4];
};
EmuWarp* emu_warps;
inline void __syncthreads() {
  emu_block_bar->arrive_and_wait();
}
inline void __syncwarp() {}
inline void __syncwarp_emu();
inline unsigned smem_u32(const void* p) {
  return unsigned((const unsigned char*)p - smem);
}
inline void cp_async_16(unsigned dst, const void* src, int bytes) {
  memset(smem + dst, 0, 16);
  if (bytes) memcpy(smem + dst, src, bytes);
}
inline void cp_async_4(unsigned dst, const void* src, int bytes) {
  memset(smem + dst, 0, 4);
  if (bytes) memcpy(smem + dst, src, bytes);
}
inline void cp_async_commit() {}
template <int N>
inline void cp_async_wait() {}
template <int N>
inline void emu_ldmatrix(unsigned (&r)[N], unsigned addr, bool trans) {
  EmuWarp& w = emu_warps[emu_warp];
  const int l = emu_lane;
  w.addr[l] = addr;
  w.bar.arrive_and_wait();
  for (int j = 0; j < N; ++j) {
    uint16_t v[2];
    for (int e = 0; e < 2; ++e) {
      const int row = trans ? 2 * (l % 4) + e : l / 4, col = trans ? l / 4 : 2 * (l % 4) + e;
      const unsigned a = w.addr[8 * j + row];
      if (a % 16 || a + 16 > sizeof(smem)) {
        fprintf(stderr, "bad ldmatrix address %u\n", a);
        abort();
      }
      memcpy(&v[e], smem + a + 2 * col, 2);
    }
    r[j] = unsigned(v[0]) | (unsigned(v[1]) << 16);
  }
  w.bar.arrive_and_wait();
}
#define LDM(n)                                                     \
  inline void ldmatrix_x##n(unsigned(&r)[n], unsigned a) {         \
    emu_ldmatrix<n>(r, a, false);                                  \
  }                                                                \
  inline void ldmatrix_x##n##_trans(unsigned(&r)[n], unsigned a) { \
    emu_ldmatrix<n>(r, a, true);                                   \
  }
LDM(1) LDM(2) LDM(4) inline float lds_a(unsigned addr) {
  float f;
  memcpy(&f, smem + addr, 4);
  return f;
}
inline void lds_b(float (&r)[1], unsigned addr) {
  memcpy(r, smem + addr, 4);
}
inline void lds_b(float (&r)[2], unsigned addr) {
  memcpy(r, smem + addr, 8);
}
inline void lds_b(float (&r)[4], unsigned addr) {
  memcpy(r, smem + addr, 16);
}
// element value of a 32-bit fragment register: half h of a b16 pair, or a tf32 (low 13 bits
// dropped)
inline float emu_val(unsigned reg, int h) {
#if EMU_TYPE == 2
  return __uint_as_float(reg & 0xffffe000u);
#elif EMU_TYPE == 1
  __nv_bfloat16 b;
  b.x = uint16_t(reg >> (16 * h));
  return float(b);
#else
  __half x;
  x.x = uint16_t(reg >> (16 * h));
  return float(x);
#endif
}
// d += a * b for m16n8kK (PTX fragment layouts), K = 16 / 8 (b16) or 8 / 4 (tf32)
template <int RA, int RB, int KK>
inline void emu_mma(float (&d)[4], const unsigned (&a)[RA], const unsigned (&b)[RB]) {
  EmuWarp& w = emu_warps[emu_warp];
  const int l = emu_lane;
  for (int i = 0; i < RA; ++i) w.a[l][i] = a[i];
  for (int i = 0; i < RB; ++i) w.b[l][i] = b[i];
  w.bar.arrive_and_wait();
  const bool tf32 = EMU_TYPE == 2;
  for (int i = 0; i < 4; ++i) {
    const int row = l / 4 + 8 * (i / 2), col = 2 * (l % 4) + i % 2;
    float s = 0;
    for (int k = 0; k < KK; ++k) {
      float av, bv;
      if (tf32) {
        av = emu_val(w.a[(row % 8) * 4 + k % 4][row / 8 + 2 * (k / 4)], 0);
        bv = emu_val(w.b[col * 4 + k % 4][k / 4], 0);
      } else {
        av = emu_val(w.a[(row % 8) * 4 + (k % 8) / 2][row / 8 + 2 * (k / 8)], k % 2);
        bv = emu_val(w.b[col * 4 + (k % 8) / 2][k / 8], k % 2);
      }
      s += av * bv;
    }
    d[i] += s;
  }
  w.bar.arrive_and_wait();
}
inline void mma_16x8x16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  emu_mma<4, 2, 16>(d, a, b);
}
#if EMU_TYPE == 2
inline void mma_16x8x8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  emu_mma<4, 2, 8>(d, a, b);
}
inline void mma_16x8x4(float (&d)[4], const unsigned (&a)[2], const unsigned (&b)[1]) {
  emu_mma<2, 1, 4>(d, a, b);
}
#else
inline void mma_16x8x8(float (&d)[4], const unsigned (&a)[2], const unsigned (&b)[1]) {
  emu_mma<2, 1, 8>(d, a, b);
}
#endif
// ---- TMA + mbarrier emulation ----
#include <condition_variable>
#include <map>
#include <mutex>
struct TmaMap {
  const unsigned char* base;
  long rows, row_len, ld;
  int box_rows, box_cols, elem;
};
struct EmuBar {
  int count = 0, pending = 0;
  long tx = 0;
  unsigned phase = 0;
};
std::mutex emu_bar_mu;
std::condition_variable emu_bar_cv;
std::map<unsigned, EmuBar> emu_bars;
inline void emu_check(EmuBar& b) {
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.count;
    emu_bar_cv.notify_all();
  }
}
inline void mbar_init(unsigned bar, unsigned count) {
  std::lock_guard<std::mutex> l(emu_bar_mu);
  EmuBar& b = emu_bars[bar];
  b = EmuBar{};
  b.count = b.pending = int(count);
}
inline void mbar_init_fence() {}
inline void mbar_expect_tx(unsigned bar, unsigned bytes) {
  std::lock_guard<std::mutex> l(emu_bar_mu);
  EmuBar& b = emu_bars.at(bar);
  b.tx += bytes;
  --b.pending;
  emu_check(b);
}
inline void mbar_arrive(unsigned bar) {
  std::lock_guard<std::mutex> l(emu_bar_mu);
  EmuBar& b = emu_bars.at(bar);
  --b.pending;
  emu_check(b);
}
inline void mbar_wait(unsigned bar, unsigned parity) {
  std::unique_lock<std::mutex> l(emu_bar_mu);
  emu_bar_cv.wait(l, [&] { return (emu_bars.at(bar).phase & 1u) != parity; });
}
inline void tma_load_2d(unsigned dst, const TmaMap& m, unsigned bar, int col, int row) {
  if (m.box_cols * m.elem != 128 || dst % 1024) {
    fprintf(stderr, "bad TMA box/dst\n");
    abort();
  }
  for (int r = 0; r < m.box_rows; ++r)
    for (int c = 0; c < m.box_cols; ++c) {
      unsigned a = dst + unsigned(r * 128 + c * m.elem);
      a ^= ((a >> 7) & 7u) << 4;
      const long gr = row + r, gc = col + c;
      if (gr < m.rows && gc < m.row_len)
        memcpy(smem + a, m.base + (gr * m.ld + gc) * m.elem, m.elem);
      else
        memset(smem + a, 0, m.elem);
    }
  std::lock_guard<std::mutex> l(emu_bar_mu);
  EmuBar& b = emu_bars.at(bar);
  b.tx -= long(m.box_rows) * 128;
  emu_check(b);
}
// ---- nvcuda::wmma emulation: every lane holds the whole fragment ----
#include <type_traits>
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}  // namespace precision
template <class Use, int M, int N, int K, class E, class L = void>
struct fragment {
  static constexpr int rows = std::is_same<Use, matrix_b>::value ? K : M;
  static constexpr int cols = std::is_same<Use, matrix_a>::value ? K : N;
  static constexpr int num_elements = rows * cols;
  float x[num_elements];
};
template <class Use, int M, int N, int K, class E, class L, class P>
inline void load_matrix_sync(fragment<Use, M, N, K, E, L>& f, const P* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, E, L>;
  if (reinterpret_cast<uintptr_t>(p) % 32) {
    fprintf(stderr, "wmma pointer not 32-byte aligned\n");
    abort();
  }
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c)
      f.x[r * F::cols + c] =
          float(p[std::is_same<L, row_major>::value ? r * ldm + c : c * ldm + r]);
}
template <class F>
inline void fill_fragment(F& f, float v) {
  for (float& x : f.x) x = v;
}
inline float __float_to_tf32(float f) {
  return __uint_as_float(__float_as_uint(f) & 0xffffe000u);
}
template <int M, int N, int K, class E, class LA, class LB>
inline void mma_sync(fragment<accumulator, M, N, K, float>& d,
                     const fragment<matrix_a, M, N, K, E, LA>& a,
                     const fragment<matrix_b, M, N, K, E, LB>& b,
                     const fragment<accumulator, M, N, K, float>& c) {
  fragment<accumulator, M, N, K, float> t;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = c.x[i * N + j];
      for (int k = 0; k < K; ++k) s += a.x[i * K + k] * b.x[k * N + j];
      t.x[i * N + j] = s;
    }
  d = t;
}
template <int M, int N, int K>
inline void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f,
                              unsigned ldm, layout_t l) {
  __syncwarp_emu();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) p[l == mem_row_major ? i * ldm + j : j * ldm + i] = f.x[i * N + j];
  __syncwarp_emu();
}
}  // namespace wmma
}  // namespace nvcuda

inline void __syncwarp_emu() {
  emu_warps[emu_warp].bar.arrive_and_wait();
}
