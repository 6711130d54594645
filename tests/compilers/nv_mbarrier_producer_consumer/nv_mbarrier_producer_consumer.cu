// A warp-specialized pipeline written with the cuda/ptx header (sm_90): one producer thread
// fills a three-stage ring in shared memory with bulk copies (cp.async.bulk completing bytes
// on the stage's "full" mbarrier, armed by arrive.expect_tx); four consumer warps wait on
// "full" by phase parity, use the stage, and arrive on its "empty" mbarrier, which the
// producer waits on before refilling. The results leave through a bulk shared-to-global copy.
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;

constexpr int STAGES = 3;
constexpr int CHUNK = 128;  // ints per stage; one per consumer thread

__global__ void producer_consumer(const int* __restrict__ in, int* __restrict__ out, int chunks)
{
    __shared__ alignas(16) int ring[STAGES][CHUNK];
    __shared__ alignas(16) int result[CHUNK];
    __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            ptx::mbarrier_init(&full[s], 1);
            ptx::mbarrier_init(&empty[s], CHUNK);
        }
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads();
    const int* src = in + blockIdx.x * chunks * CHUNK;
    if (warp == 0) {
        if (lane == 0) {
            for (int c = 0; c < chunks; ++c) {
                const int s = c % STAGES;
                // The first pass waits on the phase before the first: complete at once.
                const uint32_t parity = ((c / STAGES) & 1) ^ 1;
                while (!ptx::mbarrier_try_wait_parity(&empty[s], parity)) {
                }
                ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
                                               &full[s], CHUNK * sizeof(int));
                ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, ring[s], src + c * CHUNK,
                                   CHUNK * sizeof(int), &full[s]);
            }
        }
    } else {
        const int t = threadIdx.x - 32;
        int acc = 0;
        for (int c = 0; c < chunks; ++c) {
            const int s = c % STAGES;
            while (!ptx::mbarrier_try_wait_parity(&full[s], (c / STAGES) & 1)) {
            }
            acc += ring[s][t] * (c + 1) - (c & 3);
            (void)ptx::mbarrier_arrive(&empty[s]);
        }
        result[t] = acc;
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();
    if (threadIdx.x == 32) {
        ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out + blockIdx.x * CHUNK, result,
                           CHUNK * sizeof(int));
        ptx::cp_async_bulk_commit_group();
        ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
    }
}
