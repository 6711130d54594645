// x[i] = x[i] * s, with the f16 scalar s passed by value.
#include <cuda_fp16.h>

extern "C" __global__ void f16_scale(__half* x, __half s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = __hmul(x[i], s);
    }
}
