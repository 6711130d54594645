// 2D grid of 2D blocks; out[y*W+x] = fma(a, b, c) on f16 with bounds check. The row of the
// linear index is recomputed with a runtime division/modulo by W to pick a per-row bias.
#include <cuda_fp16.h>
extern "C" __global__ void grid2d(const __half* __restrict__ a, const __half* __restrict__ b,
                                  const __half* __restrict__ c, const __half* __restrict__ rowbias,
                                  __half* __restrict__ out, int* __restrict__ rowcol, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H) return;
  int i = y * W + x;
  int row = i / W;          // runtime division
  int col = i % W;          // runtime remainder (nvcc folds it into div + mul + sub)
  __half r = __hfma(a[i], b[i], c[i]);
  out[i] = __hadd(r, rowbias[row]);
  rowcol[i] = row * 100000 + col * 100 + (x + 3 * y) % H;   // runtime remainder by H
}
