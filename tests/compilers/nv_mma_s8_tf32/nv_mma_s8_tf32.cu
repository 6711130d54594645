// Two GEMM tiles on the tensor-core instructions, one warp each (warp 0, warp 1): an int8 16x8x32 tile
// (mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, plus its .satfinite form) and a tf32
// 16x8x8 tile (mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32), fragments loaded from
// row-major A (M x K), column-major B (K x N) and row-major C as the PTX ISA lays them out.
#include <cstdint>

__device__ int8_t at8(const int8_t* m, int row, int col, int ld) { return m[row * ld + col]; }

__device__ uint32_t pack4(int8_t a, int8_t b, int8_t c, int8_t d) {
    return (uint32_t)(uint8_t)a | (uint32_t)(uint8_t)b << 8 | (uint32_t)(uint8_t)c << 16 |
           (uint32_t)(uint8_t)d << 24;
}

// A: 16 x 32 row-major; B: 32 x 8 stored column-major (B[n * 32 + k]); C, D: 16 x 8 row-major.
__device__ void mma_s8(const int8_t* A, const int8_t* B, const int* C, int* D, int* D_sat) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r & 1), col = t * 4 + 16 * (r >> 1);
        a[r] = pack4(at8(A, row, col, 32), at8(A, row, col + 1, 32), at8(A, row, col + 2, 32),
                     at8(A, row, col + 3, 32));
    }
    for (int r = 0; r < 2; r++) {
        int k = t * 4 + 16 * r;
        b[r] = pack4(B[g * 32 + k], B[g * 32 + k + 1], B[g * 32 + k + 2], B[g * 32 + k + 3]);
    }
    int c[4], d[4], s[4];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),
          "r"(c[1]), "r"(c[2]), "r"(c[3]));
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, "
        "{%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),
          "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; i++) {
        int at = (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
        D[at] = d[i];
        D_sat[at] = s[i];
    }
}

// A: 16 x 8 row-major floats; B: 8 x 8 column-major; C, D: 16 x 8 row-major. The inputs go
// through cvt.rna.tf32.f32 first, as CUTLASS does.
__device__ void mma_tf32(const float* A, const float* B, const float* C, float* D) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    for (int r = 0; r < 4; r++) {
        float x = A[(g + 8 * (r & 1)) * 8 + t + 4 * (r >> 1)];
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a[r]) : "f"(x));
    }
    for (int r = 0; r < 2; r++) {
        float x = B[g * 8 + t + 4 * r];
        asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(b[r]) : "f"(x));
    }
    float c[4], d[4];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%10,%11,%12,%13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
          "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

extern "C" __global__ void mma_tiles(const int8_t* A8, const int8_t* B8, const int* C32, int* D32,
                                     int* D32_sat, const float* Af, const float* Bf,
                                     const float* Cf, float* Df) {
    if (threadIdx.x < 32)
        mma_s8(A8, B8, C32, D32, D32_sat);
    else
        mma_tf32(Af, Bf, Cf, Df);
}
