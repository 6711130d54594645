// Each thread iterates acc = fma(acc, x, y) on packed bf16 pairs, k (runtime) times.
#include <cuda_bf16.h>
extern "C" __global__ void bf16x2_fma_loop(const __nv_bfloat162* __restrict__ x,
                                           const __nv_bfloat162* __restrict__ y,
                                           const __nv_bfloat162* __restrict__ init,
                                           __nv_bfloat162* __restrict__ out, int n2, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  __nv_bfloat162 acc = init[i], xv = x[i], yv = y[i];
  for (int t = 0; t < k; t++) acc = __hfma2(acc, xv, yv);
  out[i] = acc;
}
