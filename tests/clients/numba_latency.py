"""What a numba-cuda user waits for (issue 15): the first call of a kernel (NVVM's compile,
the driver's link and load: ptxjit's parse and JIT, then the launch) and each launch after it,
on the device ptxjit's libcuda.so.1 gives and, in the same script, in numba's simulator.

usage: python numba_latency.py [LAUNCHES]   (run it twice: once with LD_LIBRARY_PATH at
ptxjit's libcuda directory, once with NUMBA_ENABLE_CUDASIM=1; it says which it measured)
"""

import os
import sys
import time

import numpy as np
from numba import cuda

launches = int(sys.argv[1]) if len(sys.argv) > 1 else 200
n = 1024
x = np.arange(n, dtype=np.float32)
y = np.ones(n, dtype=np.float32)


@cuda.jit
def axpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(x)
start = time.perf_counter()
axpy[n // 128, 128](np.float32(2.0), dx, dy, dout)
cuda.synchronize()
first = time.perf_counter() - start
assert np.array_equal(dout.copy_to_host(), 2 * x + y)

start = time.perf_counter()
for _ in range(launches):
    axpy[n // 128, 128](np.float32(2.0), dx, dy, dout)
cuda.synchronize()
steady = (time.perf_counter() - start) / launches

device = "simulator" if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" else "ptxjit"
print(
    f"{device}: first call {first * 1e3:.1f} ms, then {steady * 1e6:.1f} us a launch "
    f"({launches} launches of {n // 128} blocks of 128 threads)"
)
