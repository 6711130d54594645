/* What the C clients of ptxjit's driver API share: the few driver types and functions they
 * use, declared here (no cuda.h on this machine), and CHECK, which exits at the first call
 * that does not return what it should. */
#ifndef PTXJIT_TESTS_CUDA_DRIVER_H
#define PTXJIT_TESTS_CUDA_DRIVER_H
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

CUresult cuCtxCreate_v2(CUcontext *, unsigned, CUdevice);
CUresult cuCtxDestroy_v2(CUcontext);
CUresult cuCtxGetCurrent(CUcontext *);
CUresult cuCtxSynchronize(void);
CUresult cuDeviceComputeCapability(int *, int *, CUdevice);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuDeviceGetAttribute(int *, int, CUdevice);
CUresult cuDeviceGetCount(int *);
CUresult cuDeviceGetName(char *, int, CUdevice);
CUresult cuDriverGetVersion(int *);
CUresult cuEventCreate(CUevent *, unsigned);
CUresult cuEventDestroy_v2(CUevent);
CUresult cuEventElapsedTime(float *, CUevent, CUevent);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventSynchronize(CUevent);
CUresult cuGetErrorName(CUresult, const char **);
CUresult cuGetProcAddress_v2(const char *, void **, int, unsigned long long, int *);
CUresult cuInit(unsigned);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void **, void **);
typedef enum {
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7
} CUlaunchAttributeID;
typedef union {
  char pad[64];
  struct { unsigned x, y, z; } clusterDim;
} CUlaunchAttributeValue;
typedef struct {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
} CUlaunchConfig;
CUresult cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
CUresult cuMemsetD32_v2(CUdeviceptr, unsigned, size_t);
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *, size_t *, CUmodule, const char *);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleLoadDataEx(CUmodule *, const void *, unsigned, int *, void **);
CUresult cuModuleUnload(CUmodule);
CUresult cuStreamCreate(CUstream *, unsigned);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuStreamSynchronize(CUstream);
typedef struct { _Alignas(64) unsigned long long opaque[16]; } CUtensorMap;
CUresult cuTensorMapEncodeTiled(CUtensorMap *, int, unsigned, void *, const unsigned long long *,
                                const unsigned long long *, const unsigned *, const unsigned *,
                                int, int, int, int);
CUresult cuTensorMapReplaceAddress(CUtensorMap *, void *);

#define CHECK(call, want)                                                              \
  do {                                                                                 \
    CUresult r_ = (call);                                                              \
    if (r_ != (want)) {                                                                \
      const char *n_ = "?";                                                            \
      cuGetErrorName(r_, &n_);                                                         \
      fprintf(stderr, "line %d: %s returned %d (%s), expected %d\n", __LINE__, #call, \
              r_, n_, (int)(want));                                                    \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

#endif
