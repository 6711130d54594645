// Four ways CUDA 13 code copies global memory to shared memory asynchronously (sm_80), each
// summing TILES tiles of `in` with weights 1..TILES into its own quarter of `out`:
// (a) cuda::memcpy_async into a two-stage cuda::pipeline (block scope),
// (b) cooperative_groups::memcpy_async + cooperative_groups::wait,
// (c) a double-buffered __pipeline_memcpy_async / __pipeline_commit / __pipeline_wait_prior loop,
// (d) cuda::memcpy_async completing on a cuda::barrier (arrive_and_wait).
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>

namespace cg = cooperative_groups;

constexpr int TILE = 256;
constexpr int TILES = 8;

__global__ void async_copies(const int* __restrict__ in, int* __restrict__ out)
{
    __shared__ alignas(16) int buf[2][TILE];
    auto block = cg::this_thread_block();
    const int* src = in + blockIdx.x * TILES * TILE;
    const int t = threadIdx.x;  // blockDim.x == TILE / 2
    const int quarter = gridDim.x * TILE;
    int* dst = out + blockIdx.x * TILE + t;
    const auto bytes = cuda::aligned_size_t<16>(TILE * sizeof(int));

    // (a)
    {
        __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
        auto pipe = cuda::make_pipeline(block, &state);
        for (int s = 0; s < 2; ++s) {
            pipe.producer_acquire();
            cuda::memcpy_async(block, buf[s], src + s * TILE, bytes, pipe);
            pipe.producer_commit();
        }
        int lo = 0, hi = 0;
        for (int k = 0; k < TILES; ++k) {
            pipe.consumer_wait();
            lo += buf[k % 2][t] * (k + 1);
            hi += buf[k % 2][t + TILE / 2] * (k + 1);
            pipe.consumer_release();
            if (k + 2 < TILES) {
                pipe.producer_acquire();
                cuda::memcpy_async(block, buf[k % 2], src + (k + 2) * TILE, bytes, pipe);
                pipe.producer_commit();
            }
        }
        dst[0] = lo;
        dst[TILE / 2] = hi;
    }
    block.sync();
    // (b)
    {
        int lo = 0, hi = 0;
        for (int k = 0; k < TILES; ++k) {
            cg::memcpy_async(block, buf[0], src + k * TILE, sizeof(int) * TILE);
            cg::wait(block);
            lo += buf[0][t] * (k + 1);
            hi += buf[0][t + TILE / 2] * (k + 1);
            block.sync();
        }
        dst[quarter] = lo;
        dst[quarter + TILE / 2] = hi;
    }
    // (c)
    {
        int lo = 0, hi = 0;
        __pipeline_memcpy_async(&buf[0][2 * t], src + 2 * t, 8);
        __pipeline_commit();
        for (int k = 0; k < TILES; ++k) {
            if (k + 1 < TILES)
                __pipeline_memcpy_async(&buf[(k + 1) % 2][2 * t], src + (k + 1) * TILE + 2 * t, 8);
            __pipeline_commit();
            __pipeline_wait_prior(1);
            __syncthreads();
            lo += buf[k % 2][t] * (k + 1);
            hi += buf[k % 2][t + TILE / 2] * (k + 1);
            __syncthreads();
        }
        dst[2 * quarter] = lo;
        dst[2 * quarter + TILE / 2] = hi;
    }
    // (d)
    {
        __shared__ cuda::barrier<cuda::thread_scope_block> bar;
        if (block.thread_rank() == 0)
            init(&bar, block.size());
        block.sync();
        int lo = 0, hi = 0;
        for (int k = 0; k < TILES; ++k) {
            cuda::memcpy_async(block, buf[1], src + k * TILE, bytes, bar);
            bar.arrive_and_wait();
            lo += buf[1][t] * (k + 1);
            hi += buf[1][t + TILE / 2] * (k + 1);
            block.sync();
        }
        dst[3 * quarter] = lo;
        dst[3 * quarter + TILE / 2] = hi;
    }
}
