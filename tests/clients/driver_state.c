/* The driver API's state rules, as CUDA has them (issue 12): nothing but version, error
 * strings and cuGetProcAddress before cuInit; memory, modules and launches need a current
 * context; a function of an unloaded module is an invalid handle. Prints "ok" at the end;
 * exits non-zero at the first wrong answer. */
#include <string.h>

#include "cuda_driver.h"

#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400

int main(void) {
  int version, count;
  const char *name;
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr p;
  CUmodule mod;
  CUfunction f;

  /* Before cuInit. */
  CHECK(cuDriverGetVersion(&version), 0);
  CHECK(cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &name), 0);
  CHECK(cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
  CHECK(cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
  CHECK(cuMemAlloc_v2(&p, 64), CUDA_ERROR_NOT_INITIALIZED);

  /* Initialized, but no context yet. */
  CHECK(cuInit(0), 0);
  CHECK(cuDeviceGet(&dev, 0), 0);
  CHECK(cuMemAlloc_v2(&p, 64), CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuModuleLoadData(&mod, ".version 8.0\n.target sm_90\n.address_size 64\n"), CUDA_ERROR_INVALID_CONTEXT);
  CHECK(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);

  /* A function outlives neither its module's unload nor a context's destruction. */
  CHECK(cuCtxCreate_v2(&ctx, 0, dev), 0);
  CHECK(cuMemAlloc_v2(&p, 64), 0);
  CHECK(cuModuleLoadData(&mod, ".version 8.0\n.target sm_90\n.address_size 64\n"
                               ".visible .entry k() { ret; }\n"), 0);
  CHECK(cuModuleGetFunction(&f, mod, "k"), 0);
  CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), 0);
  CHECK(cuModuleUnload(mod), 0);
  CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
  CHECK(cuMemFree_v2(p), 0);
  CHECK(cuCtxDestroy_v2(ctx), 0);
  CHECK(cuMemAlloc_v2(&p, 64), CUDA_ERROR_INVALID_CONTEXT);
  printf("ok\n");
  return 0;
}
