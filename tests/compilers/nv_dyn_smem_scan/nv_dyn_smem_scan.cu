// Dynamic shared memory (extern __shared__, size given at launch): each block of blockDim.x floats
// is reversed through shared memory, then an in-place Hillis-Steele inclusive scan (two
// __syncthreads() per step: read, barrier, write, barrier) runs over the reversed values.
extern "C" __global__ void dyn_smem_scan(const float* __restrict__ in, float* __restrict__ rev,
                                         float* __restrict__ scan) {
  extern __shared__ float buf[];
  int tid = threadIdx.x, nt = blockDim.x;
  int i = blockIdx.x * nt + tid;
  buf[tid] = in[i];
  __syncthreads();
  float r = buf[nt - 1 - tid];
  __syncthreads();
  buf[tid] = r;
  rev[i] = r;
  __syncthreads();
  for (int off = 1; off < nt; off <<= 1) {
    float t = (tid >= off) ? buf[tid - off] : 0.0f;
    __syncthreads();
    if (tid >= off) buf[tid] += t;
    __syncthreads();
  }
  scan[i] = buf[tid];
}
