// Global atomics on __half2, __half, float, int and unsigned with order-independent results: every
// f16/f32 addend is 1.0 or 0.5 (small exact sums), atomicMin/atomicInc/atomicDec/atomicExch act on
// values whose final state does not depend on the order (atomicInc/Dec wrap as mod (limit+1)),
// returned old values are only summed, and atomicCAS implements an integer max in a loop.
#include <cuda_fp16.h>
extern "C" __global__ void atomic_f16(const int* __restrict__ in, __half2* h2bins, __half* hbins,
                                      float* fbins, int* imin, unsigned int* incs, int* cmax,
                                      unsigned int* olds) {
  __shared__ float sbins[4];
  int tid = threadIdx.x;
  int g = blockIdx.x * blockDim.x + tid;
  if (tid < 4) sbins[tid] = 0.0f;
  __syncthreads();
  int x = in[g];
  int b8 = x & 7, b16 = (x >> 3) & 15, b4 = (x >> 7) & 3;
  atomicAdd(&h2bins[b8], __halves2half2(__float2half(1.0f), __float2half(0.5f)));
  __half oh = atomicAdd(&hbins[b16], __float2half(0.5f));
  atomicAdd(&olds[0], (unsigned int)(__half2float(oh) * 2.0f));   // sum of 0,1,..,k-1 per bin
  atomicAdd(&fbins[b16], (x & 0x100) ? 1.0f : 0.5f);
  float of = atomicAdd(&fbins[16 + b4], 1.0f);
  atomicAdd(&olds[1], (unsigned int)of);
  atomicAdd(&sbins[b4], 0.5f);                                     // shared f32 atomic
  atomicMin(&imin[b4], x - 5000);
  atomicInc(&incs[b4], 1000000u);                                  // never wraps
  atomicInc(&incs[4 + b4], 9u);                                    // wraps: final = count mod 10
  atomicDec(&incs[8 + b4], 6u);                                    // wraps: (init - count) mod 7
  unsigned int oe = atomicExch(&incs[12 + b4], 77u);               // one thread sees the initial value
  atomicAdd(&olds[2], oe);
  int* p = &cmax[b4];
  int old = *p, assumed;
  do {
    assumed = old;
    if (assumed >= x) break;
    old = atomicCAS(p, assumed, x);
  } while (old != assumed);
  __syncthreads();
  if (tid < 4) atomicAdd(&fbins[20 + tid], sbins[tid]);
}
