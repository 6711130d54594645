// CUDA's SIMD-within-a-word intrinsics on packed bytes and halfwords: nvcc emits the video
// instruction vabsdiff4 for __vabsdiffu4 and __vsads4, and prmt/lop3 sequences for the rest.
extern "C" __global__ void simd(const unsigned *a, const unsigned *b, unsigned *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned *o = out + 16 * i;
  o[0] = __vadd2(x, y);
  o[1] = __vaddss2(x, y);
  o[2] = __vabsdiffs2(x, y);
  o[3] = __vavgs2(x, y);
  o[4] = __vavgu4(x, y);
  o[5] = __vabsdiffu4(x, y);
  o[6] = __vsubss4(x, y);
  o[7] = __vmaxs4(x, y);
  o[8] = __vminu2(x, y);
  o[9] = __vsetltu4(x, y);
  o[10] = __vcmpgts2(x, y);
  o[11] = __vsads4(x, y);
  o[12] = __vhaddu2(x, y);
  o[13] = __vaddus4(x, y);
  o[14] = __vsetges2(x, y);
  o[15] = __vsubus2(x, y);
}
