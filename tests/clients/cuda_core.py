"""cuda.core on ptxjit's libcuda.so.1 (issue 15): NVRTC compiles CUDA C++ with cuda_fp16.h to
PTX (`Program(code, 'c++').compile('ptx')`), a `Device` and a `Stream` run it through `launch`,
and every result must be the bits of an exactly rounded half-precision fma with ReLU.

Run by tests/clients/numba_cuda.sh (its virtualenv has cuda-core, cuda-bindings and NVRTC)."""

import numpy as np
from cuda.core import Buffer, Device, LaunchConfig, Program, ProgramOptions, launch
from cuda.pathfinder import find_nvidia_header_directory

CODE = r"""
#include <cuda_fp16.h>
extern "C" __global__ void hfma2_relu(const __half2 *a, const __half2 *b, const __half2 *c,
                                      __half2 *out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __hfma2_relu(a[i], b[i], c[i]);
}
"""


def exact_fma_relu(a, b, c):
    """fma of halves rounded once to half: the product is exact in f64 and the sum of values of
    such different scales as these inputs have is too, so one rounding to f16 remains; ReLU
    then keeps a NaN as the canonical one and turns negatives into +0."""
    r = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float16)
    r = np.where(np.isnan(r), np.float16(np.nan), r)
    return np.where(r < 0, np.float16(0), r)


def main():
    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "".join(str(x) for x in dev.compute_capability)
    include = find_nvidia_header_directory("cudart")
    options = ProgramOptions(arch=f"sm_{arch}", std="c++17", include_path=[include])
    prog = Program(CODE, "c++", options)
    module = prog.compile("ptx")
    kernel = module.get_kernel("hfma2_relu")

    pairs = 4096
    rng = np.random.default_rng(15)
    a, b, c = (rng.uniform(-4, 4, 2 * pairs).astype(np.float16) for _ in range(3))
    out = np.zeros_like(a)
    bufs = []
    for host in (a, b, c, out):
        buf = dev.allocate(host.nbytes, stream=stream)
        buf.copy_from(Buffer.from_handle(host.ctypes.data, host.nbytes, owner=host), stream=stream)
        bufs.append(buf)
    config = LaunchConfig(grid=(pairs + 255) // 256, block=256)
    launch(stream, config, kernel, *bufs, np.uint32(pairs))
    bufs[3].copy_to(Buffer.from_handle(out.ctypes.data, out.nbytes, owner=out), stream=stream)
    stream.sync()

    want = exact_fma_relu(a, b, c)
    bad = np.flatnonzero(out.view(np.uint16) != want.view(np.uint16))
    assert bad.size == 0, f"{bad.size} of {out.size} halves differ, first at {bad[0]}"
    print(f"cuda.core: {out.size} __hfma2_relu results bit-exact on {dev.name}")


if __name__ == "__main__":
    main()
