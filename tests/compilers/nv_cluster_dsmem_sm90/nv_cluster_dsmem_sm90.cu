// Distributed shared memory in a thread block cluster (sm_90), with cooperative groups: each
// cluster of four blocks builds one 256-bin histogram whose bins are spread over its blocks'
// shared memory (64 each, as in the CUDA guide's distributed-shared-memory histogram); every
// thread adds to the bin's owner block with an atomic through cluster.map_shared_rank. After
// cluster.sync() each block writes its slice, and reads its right neighbour's slice (a ring
// through distributed shared memory) before the last cluster.sync() lets the blocks exit.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int BINS = 256;

__global__ void cluster_histogram(const int* __restrict__ in, int per_cluster,
                                  unsigned* __restrict__ hist, unsigned* __restrict__ ring)
{
    __shared__ unsigned bins[64];
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank();
    const unsigned blocks = cluster.num_blocks();
    const unsigned slice = BINS / blocks;
    const unsigned cluster_id = blockIdx.x / cluster.dim_blocks().x;
    for (unsigned i = threadIdx.x; i < slice; i += blockDim.x) bins[i] = 0;
    // Every block's bins are zero before any block adds to them.
    cluster.sync();
    const int* src = in + cluster_id * per_cluster;
    for (int i = rank * blockDim.x + threadIdx.x; i < per_cluster; i += blockDim.x * blocks) {
        const unsigned v = src[i] & (BINS - 1);
        unsigned* owner = cluster.map_shared_rank(bins, v / slice);
        atomicAdd(owner + v % slice, 1u);
    }
    cluster.sync();
    const unsigned* right = cluster.map_shared_rank(bins, (rank + 1) % blocks);
    for (unsigned i = threadIdx.x; i < slice; i += blockDim.x) {
        const unsigned at = cluster_id * BINS + rank * slice + i;
        hist[at] = bins[i];
        ring[at] = right[i] * 1000 + bins[i];
    }
    // No block's shared memory may go away while a neighbour still reads it.
    cluster.sync();
}
