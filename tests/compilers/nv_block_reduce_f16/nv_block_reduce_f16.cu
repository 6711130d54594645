// Block reduction of f16 inputs (converted to f32): warp-level tree with __shfl_down_sync, per-warp
// partials in static shared memory, __syncthreads(), then warp 0 reduces the partials with shuffles
// again and thread 0 writes one f32 per block. Threads past n contribute 0.0f.
#include <cuda_fp16.h>
extern "C" __global__ void block_reduce_f16(const __half* __restrict__ x, float* __restrict__ out,
                                            float* __restrict__ partials, int n) {
  __shared__ float warp_sums[32];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  float v = (i < n) ? __half2float(x[i]) : 0.0f;
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
  int lane = tid & 31, wid = tid >> 5;
  if (lane == 0) warp_sums[wid] = v;
  __syncthreads();
  int nw = (blockDim.x + 31) >> 5;
  if (tid < nw) partials[blockIdx.x * nw + tid] = warp_sums[tid];
  if (wid == 0) {
    v = (lane < nw) ? warp_sums[lane] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    if (lane == 0) out[blockIdx.x] = v;
  }
}
