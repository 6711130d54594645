// int8 dot products with __dp4a (signed and unsigned bytes) and __dp2a_lo/__dp2a_hi: each
// thread dots one row of packed int8 values with a shared vector.
extern "C" __global__ void dp4a_dot(const int* a, const int* b, int* out, int rows, int words) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int s = 0;
    unsigned u = 0;
    int lo = 0, hi = 0;
    for (int k = 0; k < words; k++) {
        int x = a[r * words + k], y = b[k];
        s = __dp4a(x, y, s);
        u = __dp4a((unsigned)x, (unsigned)y, u);
        lo = __dp2a_lo(x, y, lo);
        hi = __dp2a_hi((unsigned)x, (unsigned)y, (unsigned)hi);
    }
    out[4 * r] = s;
    out[4 * r + 1] = (int)u;
    out[4 * r + 2] = lo;
    out[4 * r + 3] = hi;
}
