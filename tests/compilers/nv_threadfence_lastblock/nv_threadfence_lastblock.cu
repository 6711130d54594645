// "Last block" pattern: each block tree-reduces its 256 u32 inputs in shared memory (barrier in a
// loop), thread 0 stores the block's partial, __threadfence(), then takes a ticket with
// atomicInc(count, gridDim.x - 1) (so count wraps back to 0). The block that draws the last ticket
// sums all partials (volatile loads, block order) and writes the total. Also atomicAdd_block /
// atomicAdd_system (scoped atomics) and __threadfence_block / __threadfence_system.
extern "C" __global__ void threadfence_lastblock(const unsigned int* __restrict__ in,
                                                 unsigned int* partial, unsigned int* count,
                                                 unsigned int* result) {
  __shared__ unsigned int s[256];
  __shared__ bool amLast;
  int tid = threadIdx.x;
  unsigned int v = in[blockIdx.x * blockDim.x + tid];
  s[tid] = v;
  __syncthreads();
#pragma unroll 1
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (tid < k) s[tid] += s[tid + k];
    __syncthreads();
  }
  if (tid == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned int t = atomicInc(count, gridDim.x - 1);
    amLast = (t == gridDim.x - 1);
  }
  __syncthreads();
  if (amLast && tid == 0) {
    unsigned int tot = 0;
    for (unsigned int b = 0; b < gridDim.x; ++b) tot += ((volatile unsigned int*)partial)[b];
    result[0] = tot;
    atomicAdd(&result[1], 1u);                   // exactly one block gets here
  }
  atomicAdd_block(&result[2 + (v & 3)], v >> 24);
  __threadfence_block();
  atomicAdd_system(&result[6], 1u);
  __threadfence_system();
}
