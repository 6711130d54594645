// out[i] = a[i]*b[i] + (a[i]-b[i]), every operation rounded to f16.
#include <cuda_fp16.h>

extern "C" __global__ void f16_elementwise(const __half* a, const __half* b, __half* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __hadd(__hmul(a[i], b[i]), __hsub(a[i], b[i]));
    }
}
