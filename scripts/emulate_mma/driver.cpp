// Runs one entry of an emitted kernel on the CPU (shim.h) over a whole grid and compares C
// with a reference GEMM on small-integer inputs (exact in f16, bf16 and tf32).
// argv: M N K lda ldb ldc a_col b_col threads BM BN
#include "shim.h"
#include KERNEL_INC
int main(int argc, char** argv) {
  const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
  const int lda = atoi(argv[4]), ldb = atoi(argv[5]), ldc = atoi(argv[6]);
  const int a_col = atoi(argv[7]), b_col = atoi(argv[8]), threads = atoi(argv[9]);
  const int bm = atoi(argv[10]), bn = atoi(argv[11]);
  const long a_size = long(lda) * (a_col ? K : M), b_size = long(ldb) * (b_col ? N : K);
  std::vector<T> A(a_size + 64), B(b_size + 64), C(long(ldc) * M + 64, T(-777.f));
  std::vector<float> Af(a_size), Bf(b_size);
  srand(5);
  for (long i = 0; i < a_size; ++i) {
    Af[i] = float(rand() % 5 - 2);
    A[i] = T(Af[i]);
  }
  for (long i = 0; i < b_size; ++i) {
    Bf[i] = float(rand() % 5 - 2);
    B[i] = T(Bf[i]);
  }
  gridDim = {unsigned((N + bn - 1) / bn), unsigned((M + bm - 1) / bm), 1};
#ifdef EMU_GRID1D
  gridDim = {gridDim.x * gridDim.y, 1, 1};  // `swizzle block`: one dimension, grouped raster
#endif
  blockDim = {unsigned(threads), 1, 1};
  emu_warps = new EmuWarp[threads / 32];
  for (unsigned by = 0; by < gridDim.y; ++by)
    for (unsigned bx = 0; bx < gridDim.x; ++bx) {
      blockIdx = {bx, by, 0};
      memset(smem, 0xff, sizeof(smem));  // poison: NaN-ish halves
      emu_block_bar = std::make_unique<std::barrier<>>(threads);
      emu_bars.clear();
      std::vector<std::thread> ts;
      for (int t = 0; t < threads; ++t)
        ts.emplace_back([&, t] {
          threadIdx = {unsigned(t), 0, 0};
          emu_lane = t % 32, emu_warp = t / 32;
#ifdef EMU_TMA
          const int e = sizeof(T);
          TmaMap ma{(const unsigned char*)A.data(),
                    a_col ? K : M,
                    a_col ? M : K,
                    lda,
                    A_BOX_R,
                    A_BOX_C,
                    e};
          TmaMap mb{(const unsigned char*)B.data(),
                    b_col ? N : K,
                    b_col ? K : N,
                    ldb,
                    B_BOX_R,
                    B_BOX_C,
                    e};
          ENTRY(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, 1.0f, 0.0f, nullptr, ma, mb);
#else
          ENTRY(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, 1.0f, 0.0f, nullptr);
#endif
        });
      for (auto& th : ts) th.join();
    }
  long bad = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      float s = 0;
      for (int k = 0; k < K; ++k)
        s += Af[a_col ? long(k) * lda + m : long(m) * lda + k] *
             Bf[b_col ? long(n) * ldb + k : long(k) * ldb + n];
      const float got = float(C[long(m) * ldc + n]);
      if (got != s) {
        if (bad < 5) fprintf(stderr, "C(%d,%d) = %g, want %g\n", m, n, got, s);
        ++bad;
      }
    }
  printf("%s\n", bad ? "MISMATCH" : "ok");
  return bad ? 1 : 0;
}
