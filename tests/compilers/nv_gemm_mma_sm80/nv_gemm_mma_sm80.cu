// A tiled f16 GEMM as sm_80 kernels write it by hand: 64x64 block tiles double-buffered in
// shared memory with cp.async (__pipeline_memcpy_async, commit, wait_prior), fragments read
// with ldmatrix (x4 for A, x2.trans for a row-major B), products with mma.m16n8k16 into f32.
// C = A (M x K, row-major) * B (K x N, row-major); M, N multiples of 64, K of 32.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

constexpr int BM = 64, BN = 64, BK = 32, PAD = 8;

__device__ inline unsigned smem(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__global__ void gemm(const __half *A, const __half *B, float *C, int M, int N, int K) {
    // Rows padded by 16 bytes so ldmatrix's eight rows fall in different banks.
    __shared__ __align__(128) __half As[2][BM][BK + PAD];
    __shared__ __align__(128) __half Bs[2][BK][BN + PAD];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    float acc[8][4] = {};
    auto load = [&](int stage, int k0) {
        for (int i = tid; i < BM * BK / 8; i += blockDim.x) {
            int r = i / (BK / 8), c = i % (BK / 8) * 8;
            __pipeline_memcpy_async(&As[stage][r][c], &A[(bm + r) * K + k0 + c], 16);
        }
        for (int i = tid; i < BK * BN / 8; i += blockDim.x) {
            int r = i / (BN / 8), c = i % (BN / 8) * 8;
            __pipeline_memcpy_async(&Bs[stage][r][c], &B[(k0 + r) * N + bn + c], 16);
        }
        __pipeline_commit();
    };
    load(0, 0);
    for (int k0 = 0, s = 0; k0 < K; k0 += BK, s ^= 1) {
        if (k0 + BK < K) {
            load(s ^ 1, k0 + BK);
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[4];
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                         : "r"(smem(&As[s][16 * warp + lane % 16][kk + lane / 16 * 8])));
            for (int nt = 0; nt < BN / 8; nt++) {
                unsigned b[2];
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                             : "=r"(b[0]), "=r"(b[1])
                             : "r"(smem(&Bs[s][kk + lane % 16][nt * 8])));
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                             "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                             : "+f"(acc[nt][0]), "+f"(acc[nt][1]), "+f"(acc[nt][2]),
                               "+f"(acc[nt][3])
                             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
            }
        }
        __syncthreads();
    }
    const int g = lane / 4, t = lane % 4;
    for (int nt = 0; nt < BN / 8; nt++)
        for (int i = 0; i < 4; i++) {
            int row = bm + 16 * warp + g + 8 * (i / 2), col = bn + nt * 8 + 2 * t + i % 2;
            C[row * N + col] = acc[nt][i];
        }
}
