// Warp vote and shuffle intrinsics with input-dependent predicates and source lanes, including
// widths below 32 (the shfl c operand then carries a segment mask), a member mask of half a warp
// used only by lanes 0..15, a 64-bit shuffle and __syncwarp(). Each thread writes 16 u32 results.
#define NOUT 16
extern "C" __global__ void warp_vote_shfl(const int* __restrict__ in, unsigned int* __restrict__ out) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int lane = threadIdx.x & 31;
  int x = in[g];
  unsigned int* o = out + g * NOUT;
  o[0] = __ballot_sync(0xffffffffu, x > 0);
  o[1] = __all_sync(0xffffffffu, x > -1000);
  o[2] = __any_sync(0xffffffffu, x == 7);
  o[3] = __uni_sync(0xffffffffu, (x & 1) != 0);
  o[4] = __shfl_sync(0xffffffffu, x, x & 31);               // idx, runtime source lane
  o[5] = __shfl_sync(0xffffffffu, x, (x >> 4) & 15, 8);     // idx, width 8 (src lane wraps mod 8)
  o[6] = __shfl_up_sync(0xffffffffu, x, 3, 16);             // up, width 16
  o[7] = __shfl_down_sync(0xffffffffu, x, 5, 8);            // down, width 8
  o[8] = __shfl_xor_sync(0xffffffffu, x, 5, 8);             // bfly, width 8
  o[9] = __shfl_xor_sync(0xffffffffu, x, 9, 8);             // bfly, lane mask above the width
  o[10] = __shfl_up_sync(0xffffffffu, x, (unsigned)x & 7);  // up, runtime delta, width 32
  long long w = ((long long)x << 32) ^ (long long)(g * 7 + 1);
  long long wd = __shfl_down_sync(0xffffffffu, w, 2, 4);    // 64-bit: two shfl.sync
  o[11] = (unsigned int)wd;
  o[12] = (unsigned int)(wd >> 32);
  unsigned int half = 0xdeadbeefu;
  if (lane < 16) {
    half = __ballot_sync(0x0000ffffu, x < 0);
    half ^= __shfl_sync(0x0000ffffu, x, lane ^ 1) << 16;
  }
  o[13] = half;
  __syncwarp();
  o[14] = __ballot_sync(0xffffffffu, (x & 3) == (int)(lane & 3)) ^ __activemask();
  float f = (float)x * 0.25f;
  float fs = __shfl_xor_sync(0xffffffffu, f, 16);
  o[15] = __float_as_uint(f + fs);
}
