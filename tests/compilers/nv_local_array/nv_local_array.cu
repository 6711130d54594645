// Per-thread local array indexed by runtime values: nvcc keeps it in a .local depot.
#include <cuda_fp16.h>
extern "C" __global__ void local_array(const __half* __restrict__ x, const int* __restrict__ idx,
                                       __half* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float tmp[16];
  for (int k = 0; k < 16; k++) tmp[k] = __half2float(x[i * 16 + k]);
  int j = idx[i];
  out[i] = __float2half_rn(tmp[j & 15] * 2.0f + tmp[(j + 3) & 15]);
}
