// A struct passed by value: nvcc declares it as .param .align 4 .b8 [12]
// (scale f16 at offset 0, 2 bytes padding, bias f32 at offset 4, n i32 at offset 8).
#include <cuda_fp16.h>
struct P { __half scale; float bias; int n; };
extern "C" __global__ void struct_param(const __half* __restrict__ x, __half* __restrict__ out, P p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) out[i] = __float2half_rn(__half2float(x[i]) * __half2float(p.scale) + p.bias);
}
