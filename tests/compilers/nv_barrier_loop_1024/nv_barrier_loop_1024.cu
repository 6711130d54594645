// 1024-thread blocks with __syncthreads() inside loops: a shared-memory tree reduction of u32
// (wrapping) and of f32 (rounded, fixed tree order), then a Hillis-Steele inclusive scan of the
// block's 1024 u32 values with double buffering and one __syncthreads() per step. Finally the
// barrier-reduction forms __syncthreads_count / _and / _or on input-dependent predicates.
extern "C" __global__ void __launch_bounds__(1024)
barrier_loop_1024(const unsigned int* __restrict__ in, const float* __restrict__ fin,
                  unsigned int* __restrict__ sums, float* __restrict__ fsums,
                  unsigned int* __restrict__ scan, int* __restrict__ votes) {
  __shared__ unsigned int sh[1024];
  __shared__ float fsh[1024];
  __shared__ unsigned int buf[2][1024];
  int tid = threadIdx.x;
  int g = blockIdx.x * 1024 + tid;
  unsigned int v = in[g];
  sh[tid] = v;
  fsh[tid] = fin[g];
  buf[0][tid] = v;
  __syncthreads();
#pragma unroll 1
  for (int s = 512; s > 0; s >>= 1) {
    if (tid < s) {
      sh[tid] += sh[tid + s];
      fsh[tid] += fsh[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    sums[blockIdx.x] = sh[0];
    fsums[blockIdx.x] = fsh[0];
  }
  int p = 0;
#pragma unroll 1
  for (int off = 1; off < 1024; off <<= 1) {
    unsigned int x = buf[p][tid];
    if (tid >= off) x += buf[p][tid - off];
    buf[p ^ 1][tid] = x;
    p ^= 1;
    __syncthreads();
  }
  scan[g] = buf[p][tid];
  int c = __syncthreads_count((v & 7) == 3);
  int a = __syncthreads_and(v != (unsigned int)blockIdx.x);
  int o = __syncthreads_or(v == 12345u * (unsigned int)blockIdx.x);
  if (tid == 0) {
    votes[blockIdx.x * 3 + 0] = c;
    votes[blockIdx.x * 3 + 1] = a;
    votes[blockIdx.x * 3 + 2] = o;
  }
}
