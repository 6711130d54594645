// A kernel calling a __noinline__ __device__ function: nvcc emits a .func with .param
// arguments/return and a call.uni from the .entry.
#include <cuda_fp16.h>
extern "C" __device__ __noinline__ __half scaled_mul(__half a, __half b, float s) {
  return __float2half_rn(__half2float(__hmul(a, b)) * s);
}
extern "C" __global__ void func_call(const __half* __restrict__ a, const __half* __restrict__ b,
                                     const float* __restrict__ s, __half* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scaled_mul(a[i], b[i], s[i]);
}
