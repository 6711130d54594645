// y[i] = a * x[i] + y[i] on packed half2 pairs (grid-stride loop).
#include <cuda_fp16.h>

extern "C" __global__ void h2_axpy(int n, __half2 a, const __half2* x, __half2* y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = __hfma2(a, x[i], y[i]);
    }
}
