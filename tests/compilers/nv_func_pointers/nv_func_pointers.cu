// Device function pointers: a table of operations in a __device__ array (an initializer
// holding function addresses) and a pointer chosen at run time, called indirectly.
typedef float (*binop)(float, float);

__device__ __noinline__ float add_op(float a, float b) { return a + b; }
__device__ __noinline__ float mul_op(float a, float b) { return a * b; }
__device__ __noinline__ float max_op(float a, float b) { return fmaxf(a, b); }
__device__ __noinline__ float sub_op(float a, float b) { return a - b; }

__device__ binop table[4] = {add_op, mul_op, max_op, sub_op};

extern "C" __global__ void apply(const float *a, const float *b, const int *which,
                                 float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    binop f = table[which[i] & 3];
    // A second, data-dependent pointer not from the table.
    binop g = (which[i] & 4) ? sub_op : add_op;
    out[i] = g(f(a[i], b[i]), 1.0f);
}
