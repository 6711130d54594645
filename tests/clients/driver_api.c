/* Drives ptxjit's CUDA driver API end to end, as a C client would, on the bundled h2_axpy
 * example (nvcc-emitted f16x2 axpy), loaded as PTX text and as a fatbin that carries it
 * (tests/fixtures/h2_axpy.fatbin, made by CUDA 13.5's `fatbinary --create=h2_axpy.fatbin
 * --compress-all --image3=kind=ptx,sm=80,file=examples/h2_axpy/h2_axpy.ptx`: the PTX
 * Zstandard-compressed): argument: the repository root. Prints "ok" at the end; exits
 * non-zero at the first wrong answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"

static char *slurp(const char *root, const char *rel, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n + 1);
  if (fread(buf, 1, n, f) != (size_t)n) { perror(path); exit(1); }
  buf[n] = 0;
  fclose(f);
  if (len) *len = n;
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: driver_api ROOT\n"); return 2; }
  const char *root = argv[1];
  int version = 0, count = 0, major = 0, minor = 0, warp = 0;
  char name[64];
  CUdevice dev;
  CUcontext ctx, current;
  CHECK(cuInit(0), 0);
  CHECK(cuDriverGetVersion(&version), 0);
  CHECK(cuDeviceGetCount(&count), 0);
  CHECK(cuDeviceGet(&dev, 0), 0);
  CHECK(cuDeviceGet(&dev, 1), 101); /* CUDA_ERROR_INVALID_DEVICE */
  CHECK(cuDeviceGetName(name, sizeof name, dev), 0);
  CHECK(cuDeviceComputeCapability(&major, &minor, dev), 0);
  CHECK(cuDeviceGetAttribute(&warp, 10, dev), 0); /* WARP_SIZE */
  if (count != 1 || major != 8 || minor != 6 || warp != 32 || version < 12000) {
    fprintf(stderr, "device: count %d, cc %d.%d, warp %d, version %d\n", count, major, minor, warp, version);
    return 1;
  }
  CHECK(cuCtxCreate_v2(&ctx, 0, dev), 0);
  CHECK(cuCtxGetCurrent(&current), 0);
  if (current != ctx) { fprintf(stderr, "current context\n"); return 1; }

  /* The bundled example: y = a*x + y on 16 f16 values (8 f16x2 elements). */
  char *ptx = slurp(root, "examples/h2_axpy/h2_axpy.ptx", NULL);
  size_t xn, yn, en;
  char *x = slurp(root, "examples/h2_axpy/x.bin", &xn);
  char *y = slurp(root, "examples/h2_axpy/y.bin", &yn);
  char *expected = slurp(root, "examples/h2_axpy/expected_y.bin", &en);
  CUmodule mod;
  CUfunction f;
  CHECK(cuModuleLoadData(&mod, ptx), 0);
  CHECK(cuModuleGetFunction(&f, mod, "h2_axpy"), 0);
  CHECK(cuModuleGetFunction(&f, mod, "nope"), 500); /* CUDA_ERROR_NOT_FOUND */
  CHECK(cuModuleUnload(mod), 0);
  /* The launch below runs the kernel the fatbin gives. */
  char *fatbin = slurp(root, "tests/fixtures/h2_axpy.fatbin", NULL);
  CHECK(cuModuleLoadData(&mod, fatbin), 0);
  CHECK(cuModuleGetFunction(&f, mod, "h2_axpy"), 0);
  CUdeviceptr dx, dy;
  CHECK(cuMemAlloc_v2(&dx, xn), 0);
  CHECK(cuMemAlloc_v2(&dy, yn), 0);
  CHECK(cuMemcpyHtoD_v2(dx, x, xn), 0);
  CHECK(cuMemcpyHtoD_v2(dy, y, yn), 0);
  unsigned n = (unsigned)(xn / 4);
  unsigned a = 0x42003800u; /* (0.5, 3.0) as f16x2 */
  void *params[] = {&n, &a, &dx, &dy};
  CUevent start, end;
  CUstream stream;
  CHECK(cuStreamCreate(&stream, 0), 0);
  CHECK(cuEventCreate(&start, 0), 0);
  CHECK(cuEventCreate(&end, 0), 0);
  CHECK(cuEventRecord(start, stream), 0);
  CHECK(cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, stream, params, NULL), 0);
  CHECK(cuEventRecord(end, stream), 0);
  CHECK(cuEventSynchronize(end), 0);
  CHECK(cuStreamSynchronize(stream), 0);
  float ms = -1;
  CHECK(cuEventElapsedTime(&ms, start, end), 0);
  if (ms < 0) { fprintf(stderr, "elapsed %f ms\n", ms); return 1; }
  char *got = malloc(yn);
  CHECK(cuMemcpyDtoH_v2(got, dy, yn), 0);
  if (en != yn || memcmp(got, expected, yn) != 0) { fprintf(stderr, "axpy output differs\n"); return 1; }

  /* The same launch with one packed argument buffer (CU_LAUNCH_PARAM_BUFFER_POINTER). */
  CHECK(cuMemcpyHtoD_v2(dy, y, yn), 0);
  struct { unsigned n, a; CUdeviceptr x, y; } packed = {n, a, dx, dy};
  size_t size = sizeof packed;
  void *extra[] = {(void *)1, &packed, (void *)2, &size, (void *)0};
  CHECK(cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, NULL, extra), 0);
  CHECK(cuCtxSynchronize(), 0);
  CHECK(cuMemcpyDtoH_v2(got, dy, yn), 0);
  if (memcmp(got, expected, yn) != 0) { fprintf(stderr, "packed-argument output differs\n"); return 1; }

  /* Past the end but inside the allocation's 64 KiB granule a kernel does not fault, as on a
     GPU (its page is mapped); past the granule the launch fails and the process lives on. */
  CUdeviceptr slack = dy + yn, wild = dy + 65536;
  void *in_slack[] = {&n, &a, &dx, &slack}, *bad[] = {&n, &a, &dx, &wild};
  CHECK(cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, in_slack, NULL), 0);
  CHECK(cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, bad, NULL), 700); /* ILLEGAL_ADDRESS */
  CHECK(cuMemcpyDtoH_v2(got, dy + 8, yn), 1); /* copy past the end: INVALID_VALUE */
  /* With exact bounds the last requested byte is the limit, as compute-sanitizer reports. */
  setenv("PTXJIT_CUDA_EXACT_BOUNDS", "1", 1);
  CUdeviceptr exact;
  CHECK(cuMemAlloc_v2(&exact, yn), 0);
  slack = exact + yn;
  CHECK(cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, in_slack, NULL), 700);
  CHECK(cuMemFree_v2(exact), 0);
  unsetenv("PTXJIT_CUDA_EXACT_BOUNDS");
  CHECK(cuMemsetD32_v2(dy, 0, yn / 4), 0);

  /* Bad PTX: INVALID_PTX, with the diagnostic in the error log buffer. */
  char log[1024] = "";
  int options[] = {5, 6}; /* CU_JIT_ERROR_LOG_BUFFER, _SIZE_BYTES */
  void *values[] = {log, (void *)(size_t)sizeof log};
  CUmodule broken;
  CHECK(cuModuleLoadDataEx(&broken, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { frob.b32 %r1; }\n",
                           2, options, values), 218);
  if (!strstr(log, "error")) { fprintf(stderr, "error log: '%s'\n", log); return 1; }
  /* A failed device-side assert (nvcc's call of __assertfail): CUDA_ERROR_ASSERT. */
  CUmodule asserting;
  CHECK(cuModuleLoadData(&asserting,
                         ".version 8.0\n.target sm_90\n.address_size 64\n"
                         ".extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, .param .b64 c);\n"
                         ".visible .entry k()\n{\n.param .b64 a;\n.param .b32 b;\nst.param.b64 [a], 0;\nst.param.b32 [b], 0;\n"
                         "call.uni __assertfail, (a, a, b, a, a);\nret;\n}\n"), 0);
  CUfunction asserts;
  CHECK(cuModuleGetFunction(&asserts, asserting, "k"), 0);
  CHECK(cuLaunchKernel(asserts, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), 710);
  CHECK(cuModuleUnload(asserting), 0);
  /* A cluster launch (cuLaunchKernelEx's cluster dimension): each block stores
     16 x %cluster_nctarank + %cluster_ctarank. */
  CUmodule clustered;
  CHECK(cuModuleLoadData(&clustered,
                         ".version 8.0\n.target sm_90\n.address_size 64\n"
                         ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n"
                         "ld.param.u64 %rd1, [out];\nmov.u32 %r1, %ctaid.x;\nmul.wide.u32 %rd2, %r1, 4;\n"
                         "add.s64 %rd1, %rd1, %rd2;\nmov.u32 %r2, %cluster_nctarank;\n"
                         "mov.u32 %r3, %cluster_ctarank;\nmad.lo.u32 %r2, %r2, 16, %r3;\n"
                         "st.global.u32 [%rd1], %r2;\nret;\n}\n"), 0);
  CUfunction cluster_kernel;
  CHECK(cuModuleGetFunction(&cluster_kernel, clustered, "k"), 0);
  CUlaunchAttribute attr = {0};
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig lc = {0};
  lc.gridDimX = 4; lc.gridDimY = 1; lc.gridDimZ = 1;
  lc.blockDimX = 1; lc.blockDimY = 1; lc.blockDimZ = 1;
  lc.attrs = &attr;
  lc.numAttrs = 1;
  void *cluster_params[] = {&dy};
  CHECK(cuLaunchKernelEx(&lc, cluster_kernel, cluster_params, NULL), 0);
  unsigned ranks[4];
  CHECK(cuMemcpyDtoH_v2(ranks, dy, sizeof ranks), 0);
  if (ranks[0] != 32 || ranks[1] != 33 || ranks[2] != 32 || ranks[3] != 33) {
    fprintf(stderr, "cluster ranks %u %u %u %u\n", ranks[0], ranks[1], ranks[2], ranks[3]);
    return 1;
  }
  lc.gridDimX = 3; /* not a whole number of clusters */
  CHECK(cuLaunchKernelEx(&lc, cluster_kernel, cluster_params, NULL), 912);
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT; /* not supported */
  CHECK(cuLaunchKernelEx(&lc, cluster_kernel, cluster_params, NULL), 801);
  CHECK(cuModuleUnload(clustered), 0);
  CHECK(cuMemsetD32_v2(dy, 0, yn / 4), 0);

  /* A cubin is not for this device. */
  CHECK(cuModuleLoadData(&broken, "\x7f" "ELF\x02\x01\x01"), 209);

  /* Lookup by name, as the CUDA runtime does. */
  void *fn = NULL;
  int status = -1;
  CHECK(cuGetProcAddress_v2("cuMemAlloc", &fn, 12000, 0, &status), 0);
  if (fn != (void *)cuMemAlloc_v2 || status != 0) { fprintf(stderr, "cuGetProcAddress\n"); return 1; }

  CHECK(cuEventDestroy_v2(start), 0);
  CHECK(cuEventDestroy_v2(end), 0);
  CHECK(cuStreamDestroy_v2(stream), 0);
  CHECK(cuMemFree_v2(dx), 0);
  CHECK(cuMemFree_v2(dy), 0);
  CHECK(cuMemFree_v2(dy), 1); /* twice: INVALID_VALUE */
  CHECK(cuModuleUnload(mod), 0);
  CHECK(cuCtxDestroy_v2(ctx), 0);
  printf("ok\n");
  return 0;
}
