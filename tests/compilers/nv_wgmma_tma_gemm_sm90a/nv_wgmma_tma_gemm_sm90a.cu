// A Hopper GEMM tile loop as sm_90a kernels write it: TMA loads (the `cuda/ptx` header's
// cp_async_bulk_tensor) of 128B-swizzled 64x64 f16 tiles of A (M x K, row-major) and of B
// given K-major (N x K, row-major), completing on an mbarrier (mbarrier_arrive_expect_tx,
// try_wait_parity); one warpgroup multiplies each pair with four wgmma.mma_async.m64n64k16
// from shared-memory descriptors (inline asm, as CUTLASS issues them: cuda/ptx has no wgmma),
// between wgmma.fence and wgmma.commit_group / wait_group 0. C (f32) = A * B^T.
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;

constexpr int BM = 64, BN = 64, BK = 64;

// A K-major 128B-swizzled tile's descriptor: rows of 128 bytes, 8 rows (1024 bytes) between
// core-matrix groups (SBO), LBO unused (1), swizzle mode 1 (128 bytes).
__device__ inline uint64_t descriptor(const void *tile) {
    uint64_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

__device__ inline void wgmma(float (&d)[32], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
          "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
          "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b));
}

__global__ void __launch_bounds__(128) gemm(const __grid_constant__ CUtensorMap a_map,
                                            const __grid_constant__ CUtensorMap b_map,
                                            float *C, int N, int K) {
    __shared__ __align__(1024) uint16_t As[BM * BK];
    __shared__ __align__(1024) uint16_t Bs[BN * BK];
    __shared__ uint64_t full;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    if (tid == 0) {
        ptx::mbarrier_init(&full, 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();
    float d[32] = {};
    uint32_t phase = 0;
    for (int k0 = 0; k0 < K; k0 += BK, phase ^= 1) {
        if (tid == 0) {
            const int32_t a_at[2] = {k0, bm}, b_at[2] = {k0, bn};
            ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                           &full, sizeof(As) + sizeof(Bs));
            ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, As, &a_map, a_at,
                                      &full);
            ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, Bs, &b_map, b_at,
                                      &full);
        }
        while (!ptx::mbarrier_try_wait_parity(&full, phase)) {
        }
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        // Each K step of 16 halves is 32 bytes further along the swizzled rows.
        for (int kk = 0; kk < BK / 16; kk++)
            wgmma(d, descriptor(As + 16 * kk), descriptor(Bs + 16 * kk));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        __syncthreads();  // every warp is done with the tiles before the next loads
    }
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 32; i++) {
        int row = bm + 16 * warp + g + 8 * (i % 4 / 2), col = bn + 8 * (i / 4) + 2 * t + i % 2;
        C[row * N + col] = d[i];
    }
}
