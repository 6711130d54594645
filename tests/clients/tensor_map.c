/* Tensor maps through the driver API (issue 14): cuTensorMapEncodeTiled builds a 128B-swizzled
 * map of a 32 x 16 u32 tensor; a kernel takes it by value (`.param .align 64 .b8 [128]`, as
 * CUTLASS's __grid_constant__ CUtensorMap), loads a 32 x 4 box with cp.async.bulk.tensor onto an
 * mbarrier, writes its swizzled shared bytes out, and stores the box back 4 rows lower. Then
 * the driver's rules: each broken one is CUDA_ERROR_INVALID_VALUE, a swizzle ptxjit does not
 * run CUDA_ERROR_NOT_SUPPORTED. Prints "ok" at the end; exits non-zero at the first wrong
 * answer. */
#include <string.h>

#include "cuda_driver.h"

#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_SUPPORTED 801
#define U32 2
#define SWIZZLE_128B 3
#define SWIZZLE_128B_ATOM_32B 4

static const char *PTX =
    ".version 8.0\n.target sm_90a\n.address_size 64\n"
    ".visible .entry tma(.param .align 64 .b8 map[128], .param .u64 raw, .param .u32 x,\n"
    "                    .param .u32 y)\n"
    "{\n"
    "  .reg .b32 %r<9>; .reg .b64 %rd<8>; .reg .pred %p<2>;\n"
    "  .shared .align 1024 .b8 box[512];\n"
    "  .shared .align 8 .b64 bar;\n"
    "  mbarrier.init.shared.b64 [bar], 1;\n"
    "  mbarrier.arrive.expect_tx.shared.b64 %rd1, [bar], 512;\n"
    "  ld.param.u32 %r2, [x];\n"
    "  ld.param.u32 %r3, [y];\n"
    "  mov.b64 %rd2, map;\n"
    "  cvta.param.u64 %rd3, %rd2;\n"
    "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\n"
    "      [box], [%rd3, {%r2, %r3}], [bar];\n"
    "WAIT:\n"
    "  mbarrier.try_wait.shared.b64 %p1, [bar], %rd1;\n"
    "  @!%p1 bra WAIT;\n"
    "  ld.param.u64 %rd4, [raw];\n"
    "  mov.u32 %r6, box;\n"
    "  mov.u32 %r4, 0;\n"
    "LOOP:\n"
    "  add.u32 %r7, %r6, %r4;\n"
    "  ld.shared.u32 %r5, [%r7];\n"
    "  cvt.u64.u32 %rd5, %r4;\n"
    "  add.u64 %rd6, %rd4, %rd5;\n"
    "  st.global.u32 [%rd6], %r5;\n"
    "  add.u32 %r4, %r4, 4;\n"
    "  setp.lt.u32 %p1, %r4, 512;\n"
    "  @%p1 bra LOOP;\n"
    "  add.u32 %r8, %r3, 4;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [map, {%r2, %r8}], [box];\n"
    "  cp.async.bulk.commit_group;\n"
    "  cp.async.bulk.wait_group 0;\n"
    "}\n";

int main(void) {
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUdeviceptr tensor, raw;
  CUtensorMap map, bad;
  unsigned host[16][32], box[128], x = 0, y = 2;
  unsigned long long dims[2] = {32, 16}, strides[1] = {128};
  unsigned boxdim[2] = {32, 4}, steps[2] = {1, 1};

  CHECK(cuInit(0), 0);
  CHECK(cuDeviceGet(&dev, 0), 0);
  CHECK(cuCtxCreate_v2(&ctx, 0, dev), 0);
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 32; c++) host[r][c] = r * 100 + c;
  CHECK(cuMemAlloc_v2(&tensor, sizeof host), 0);
  CHECK(cuMemAlloc_v2(&raw, sizeof box), 0);
  CHECK(cuMemcpyHtoD_v2(tensor, host, sizeof host), 0);
  CHECK(cuTensorMapEncodeTiled(&map, U32, 2, (void *)tensor, dims, strides, boxdim, steps, 0,
                               SWIZZLE_128B, 0, 0), 0);
  CHECK(cuModuleLoadData(&mod, PTX), 0);
  CHECK(cuModuleGetFunction(&f, mod, "tma"), 0);
  void *args[] = {&map, &raw, &x, &y};
  CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), 0);
  CHECK(cuMemcpyDtoH_v2(box, raw, sizeof box), 0);
  /* Element (r, c) of the box is byte 4(32r + c) before the swizzle; the 128B swizzle XORs
   * bits 4-6 with bits 7-9. */
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 32; c++) {
      unsigned at = 4 * (32 * r + c);
      at ^= ((at >> 7) & 7) << 4;
      if (box[at / 4] != (r + y) * 100 + c) {
        fprintf(stderr, "box (%d, %d) at byte %u: %u\n", r, c, at, box[at / 4]);
        return 1;
      }
    }
  CHECK(cuMemcpyDtoH_v2(host, tensor, sizeof host), 0);
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 32; c++) {
      unsigned want = (r >= 6 && r < 10 ? r - 4 : r) * 100 + c;
      if (host[r][c] != want) {
        fprintf(stderr, "tensor (%d, %d): %u, expected %u\n", r, c, host[r][c], want);
        return 1;
      }
    }

  /* The driver's rules. */
  unsigned wide[2] = {64, 4};
  unsigned long long ragged[1] = {100};
  CHECK(cuTensorMapEncodeTiled(&bad, U32, 2, (void *)tensor, dims, strides, wide, steps, 0,
                               SWIZZLE_128B, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTensorMapEncodeTiled(&bad, U32, 2, (void *)tensor, dims, ragged, boxdim, steps, 0,
                               0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTensorMapEncodeTiled(&bad, U32, 0, (void *)tensor, dims, strides, boxdim, steps, 0,
                               0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTensorMapEncodeTiled(&bad, U32, 2, (void *)(tensor + 4), dims, strides, boxdim,
                               steps, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTensorMapEncodeTiled(&bad, U32, 2, (void *)tensor, dims, strides, boxdim, steps, 0,
                               0, 0, 1), CUDA_ERROR_INVALID_VALUE); /* NaN fill of integers */
  CHECK(cuTensorMapEncodeTiled((CUtensorMap *)((char *)&bad + 8), U32, 2, (void *)tensor, dims,
                               strides, boxdim, steps, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTensorMapEncodeTiled(&bad, U32, 2, (void *)tensor, dims, strides, boxdim, steps, 0,
                               SWIZZLE_128B_ATOM_32B, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
  CHECK(cuTensorMapReplaceAddress(&map, (void *)(tensor + 8)), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuTensorMapReplaceAddress(&map, (void *)(tensor + 128)), 0);
  CHECK(cuModuleUnload(mod), 0);
  CHECK(cuCtxDestroy_v2(ctx), 0);
  printf("ok\n");
  return 0;
}
