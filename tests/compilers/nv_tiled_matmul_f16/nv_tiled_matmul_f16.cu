// Shared-memory tiled matmul C = A (MxK) * B (KxN), __half in and out, float accumulation
// (acc += a*b contracted to fma.rn.f32, one per k in k order, starting from 0.0f). Tile 16x16,
// two __syncthreads() per tile iteration. Cacc receives the f32 accumulator as well.
#include <cuda_fp16.h>
#define T 16
extern "C" __global__ void tiled_matmul_f16(const __half* __restrict__ A, const __half* __restrict__ B,
                                            __half* __restrict__ C, float* __restrict__ Cacc,
                                            int M, int N, int K) {
  __shared__ __half As[T][T];
  __shared__ __half Bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += T) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : __float2half(0.0f);
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : __float2half(0.0f);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc += __half2float(As[ty][k]) * __half2float(Bs[k][tx]);
    __syncthreads();
  }
  if (row < M && col < N) {
    C[row * N + col] = __float2half_rn(acc);
    Cacc[row * N + col] = acc;
  }
}
