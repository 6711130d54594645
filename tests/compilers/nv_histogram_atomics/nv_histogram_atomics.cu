// 64-bin histogram of bytes (grid-stride loop, 4 inputs per thread): per-block shared bins zeroed
// by threads, __syncthreads(), shared atomicAdd, __syncthreads(), then one global atomicAdd per bin.
// Also: a shared ticket counter whose returned old values are summed (order-independent total),
// global atomicMax/atomicMin of a unique key, atomicXor, atomicAnd, atomicOr into a 256-bit "seen"
// mask, and a 64-bit atomicAdd.
extern "C" __global__ void histogram_atomics(const unsigned char* __restrict__ data,
                                             unsigned int* hist, unsigned int* seen,
                                             unsigned int* stats, unsigned long long* total64, int n) {
  __shared__ unsigned int local[64];
  __shared__ unsigned int ticket;
  int tid = threadIdx.x;
  if (tid < 64) local[tid] = 0;
  if (tid == 0) ticket = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x) {
    unsigned int v = data[i];
    atomicAdd(&local[v & 63], 1u);
    unsigned int key = (v << 16) | (unsigned int)i;
    atomicMax(&stats[0], key);
    atomicMin(&stats[1], key);
    atomicXor(&stats[2], key * 2654435761u);
    atomicAnd(&stats[3], ~(1u << (v % 29u)));
    atomicOr(&seen[v >> 5], 1u << (v & 31));
    atomicAdd(total64, (unsigned long long)v << 28);
    unsigned int old = atomicAdd(&ticket, 1u);
    atomicAdd(&stats[4], old);
  }
  __syncthreads();
  if (tid < 64) atomicAdd(&hist[tid], local[tid]);
}
