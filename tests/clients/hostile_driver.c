/* Hostile driver-API calls (issue 12): each must return an error code and leave memory as it
 * was, never crash or corrupt. Argument: the repository root (unused). Prints "ok" at the end;
 * exits non-zero at the first wrong answer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_driver.h"

#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_PTX 218
#define CUDA_ERROR_LAUNCH_TIMEOUT 702

static unsigned char host[256], got[100], pattern[100];

/* b still holds the pattern. */
static void b_unchanged(CUdeviceptr b, int line) {
  CHECK(cuMemcpyDtoH_v2(got, b, 100), 0);
  if (memcmp(got, pattern, 100) != 0) {
    fprintf(stderr, "line %d: buffer b was overwritten\n", line);
    exit(1);
  }
}

int main(void) {
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr a, b;
  /* Read once, at the first launch. */
  setenv("PTXJIT_LAUNCH_TIMEOUT", "0.3", 1);
  CHECK(cuInit(0), 0);
  CHECK(cuDeviceGet(&dev, 0), 0);
  CHECK(cuCtxCreate_v2(&ctx, 0, dev), 0);
  CHECK(cuMemAlloc_v2(&a, 100), 0);
  CHECK(cuMemAlloc_v2(&b, 100), 0);
  for (int i = 0; i < 100; i++) pattern[i] = (unsigned char)(i * 7 + 1);
  CHECK(cuMemcpyHtoD_v2(b, pattern, 100), 0);

  /* Sizes that wrap the address space: (size_t)-1 and friends. */
  size_t huge[] = {SIZE_MAX, SIZE_MAX - 7, SIZE_MAX / 2 + 1, (size_t)1 << 63, 101};
  for (unsigned i = 0; i < sizeof huge / sizeof huge[0]; i++) {
    size_t n = huge[i];
    CHECK(cuMemcpyDtoH_v2(host, b, n), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemcpyHtoD_v2(b, host, n), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemcpyDtoD_v2(b, b + 8, n), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemcpyDtoD_v2(a, b, n), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemsetD8_v2(b, 0x41, n), CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemsetD32_v2(b, 0x41414141u, n), CUDA_ERROR_INVALID_VALUE);
    if (n / 4 > 25) CHECK(cuMemsetD32_v2(b, 0x41414141u, n / 4), CUDA_ERROR_INVALID_VALUE);
    b_unchanged(b, __LINE__);
  }
  /* An address just past a buffer, and one in the gap between buffers. */
  CHECK(cuMemsetD8_v2(b + 100, 0, 1), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemcpyDtoH_v2(host, a + 99, 2), CUDA_ERROR_INVALID_VALUE);
  b_unchanged(b, __LINE__);
  /* A null host pointer (zero bytes from it are fine). */
  CHECK(cuMemcpyDtoH_v2(NULL, b, 4), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemcpyHtoD_v2(b, NULL, 4), CUDA_ERROR_INVALID_VALUE);
  CHECK(cuMemcpyHtoD_v2(b, NULL, 0), 0);
  b_unchanged(b, __LINE__);

  /* A short module text that ends just before an unmapped page: no read past its NUL. */
  long page = sysconf(_SC_PAGESIZE);
  char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (two == MAP_FAILED || mprotect(two + page, page, PROT_NONE) != 0) { perror("mmap"); return 1; }
  CUmodule mod;
  memcpy(two + page - 3, "ab", 3);
  CHECK(cuModuleLoadData(&mod, two + page - 3), CUDA_ERROR_INVALID_PTX);
  two[page - 1] = 0;
  CHECK(cuModuleLoadData(&mod, two + page - 1), CUDA_ERROR_INVALID_PTX);

  /* Two loads of one text have their own globals; a reload after unloading is initialized. */
  const char *with_data =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".global .u32 counter = 5;\n.const .u32 table[2] = {7, 9};\n"
      ".visible .entry k() { ret; }\n";
  CUmodule m1, m2;
  CUdeviceptr c1, c2, t1;
  size_t size;
  unsigned v = 0, w = 1234;
  CHECK(cuModuleLoadData(&m1, with_data), 0);
  CHECK(cuModuleLoadData(&m2, with_data), 0);
  CHECK(cuModuleGetGlobal_v2(&c1, &size, m1, "counter"), 0);
  CHECK(cuModuleGetGlobal_v2(&c2, &size, m2, "counter"), 0);
  if (c1 == c2) { fprintf(stderr, "two loads share 'counter'\n"); return 1; }
  CHECK(cuMemcpyHtoD_v2(c1, &w, 4), 0);
  CHECK(cuMemcpyDtoH_v2(&v, c2, 4), 0);
  if (v != 5) { fprintf(stderr, "a write to one load's counter reached the other\n"); return 1; }
  CHECK(cuModuleGetGlobal_v2(&t1, &size, m1, "table"), 0);
  CHECK(cuMemcpyHtoD_v2(t1, &w, 4), 0);
  CHECK(cuModuleUnload(m1), 0);
  CHECK(cuModuleUnload(m2), 0);
  CHECK(cuModuleLoadData(&m1, with_data), 0);
  CHECK(cuModuleGetGlobal_v2(&c1, &size, m1, "counter"), 0);
  CHECK(cuModuleGetGlobal_v2(&t1, &size, m1, "table"), 0);
  CHECK(cuMemcpyDtoH_v2(&v, c1, 4), 0);
  if (v != 5) { fprintf(stderr, "a reloaded counter is %u, not its initializer 5\n", v); return 1; }
  CHECK(cuMemcpyDtoH_v2(&v, t1, 4), 0);
  if (v != 7) { fprintf(stderr, "a reloaded .const is %u, not its initializer 7\n", v); return 1; }
  CHECK(cuModuleUnload(m1), 0);

  /* PTXJIT_LAUNCH_TIMEOUT ends an endless kernel; the context stays usable. */
  const char *spin =
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry spin() { LOOP: bra LOOP; }\n"
      ".visible .entry fill(.param .u64 p) { .reg .b64 %rd1; ld.param.u64 %rd1, [p];"
      " st.global.u32 [%rd1], 77; ret; }\n";
  CUmodule ms;
  CUfunction fspin, ffill;
  CHECK(cuModuleLoadData(&ms, spin), 0);
  CHECK(cuModuleGetFunction(&fspin, ms, "spin"), 0);
  CHECK(cuModuleGetFunction(&ffill, ms, "fill"), 0);
  CHECK(cuLaunchKernel(fspin, 4, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_LAUNCH_TIMEOUT);
  void *fill_args[] = {&a};
  CHECK(cuLaunchKernel(ffill, 1, 1, 1, 1, 1, 1, 0, NULL, fill_args, NULL), 0);
  CHECK(cuCtxSynchronize(), 0);
  CHECK(cuMemcpyDtoH_v2(&v, a, 4), 0);
  if (v != 77) { fprintf(stderr, "a launch after a timeout did not run\n"); return 1; }
  printf("ok\n");
  return 0;
}
