// Probe (bench/NOTES.md, session 2): how mma.sync tf32 reads f32 bits, and how cuBLAS TF32 rounds.
// Build here: nvcc -arch=sm_90 -O2 -o probe bench/probe_tf32_rounding.cu -lcublas; run on the GPU
// machine.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
__global__ void mma_probe(const unsigned* a_bits, float* out) {
  // one m16n8k8: A row 0 = [a, 0...], B col 0 = [1, 0, ...]; D[0][0] = tf32(a) * 1
  const int lane = threadIdx.x, g = lane / 4, tq = lane % 4;
  unsigned a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  if (g == 0 && tq == 0) a[0] = a_bits[blockIdx.x];     // (row 0, k 0)
  if (g == 0 && tq == 0) b[0] = __float_as_uint(1.0f);  // (k 0, col 0)
  float d[4] = {0, 0, 0, 0};
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  if (lane == 0) out[blockIdx.x] = d[0];
}
int main() {
  const unsigned one = 0x3f800000u;
  const unsigned cases[] = {one | 0x0800u /*1+2^-12*/,
                            one | 0x1000u /*1+2^-11 tie*/,
                            one | 0x1800u /*1+2^-11+2^-12*/,
                            one | 0x3000u /*1+2^-10+2^-11 tie, odd*/,
                            one | 0x1fffu,
                            0x7f800000u /*inf*/,
                            0x7fffffffu,
                            0x7f800001u};
  const int n = sizeof cases / sizeof cases[0];
  unsigned* da;
  float* dout;
  cudaMalloc(&da, sizeof cases);
  cudaMalloc(&dout, n * 4);
  cudaMemcpy(da, cases, sizeof cases, cudaMemcpyHostToDevice);
  mma_probe<<<n, 32>>>(da, dout);
  float out[16];
  cudaMemcpy(out, dout, n * 4, cudaMemcpyDeviceToHost);
  printf("mma.sync tf32, raw f32 bits in:\n");
  for (int i = 0; i < n; ++i) {
    unsigned o;
    memcpy(&o, &out[i], 4);
    printf("  in %08x -> %08x (%.9g)\n", cases[i], o, out[i]);
  }
  // cuBLAS TF32: C(1x1) = A(1xK) * B(Kx1), K = 1, with the same inputs one at a time
  cublasHandle_t h;
  cublasCreate(&h);
  float *dA, *dB, *dC;
  cudaMalloc(&dA, 4 * 64);
  cudaMalloc(&dB, 4 * 64);
  cudaMalloc(&dC, 4 * 64);
  printf("cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32, 64x64x64 with A[0][0] = in, B = identity:\n");
  for (int i = 0; i < n; ++i) {
    float A[64 * 64] = {0}, B[64 * 64] = {0};
    memcpy(&A[0], &cases[i], 4);
    for (int j = 0; j < 64; ++j) B[j * 64 + j] = 1.0f;
    for (int j = 1; j < 64; ++j) A[j * 64 + j] = 1.0f;
    static float hA[4096], hB[4096];
    memcpy(hA, A, sizeof A);
    memcpy(hB, B, sizeof B);
    float* pA;
    float* pB;
    cudaMalloc(&pA, sizeof A);
    cudaMalloc(&pB, sizeof B);
    cudaMalloc(&dC, sizeof A);
    cudaMemcpy(pA, hA, sizeof A, cudaMemcpyHostToDevice);
    cudaMemcpy(pB, hB, sizeof B, cudaMemcpyHostToDevice);
    const float alpha = 1, beta = 0;
    cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &alpha, pA,
                                     CUDA_R_32F, 64, pB, CUDA_R_32F, 64, &beta, dC, CUDA_R_32F, 64,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    float c0;
    cudaMemcpy(&c0, dC, 4, cudaMemcpyDeviceToHost);
    unsigned o;
    memcpy(&o, &c0, 4);
    printf("  in %08x -> %08x (%.9g) status %d\n", cases[i], o, c0, (int)st);
  }
  return 0;
}
