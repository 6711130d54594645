#!/usr/bin/env python3
"""Write the input and expected-output files of the bundled examples.

Raw little-endian IEEE binary16 bits, no header. Needs numpy.
Expected values use numpy float16 arithmetic and are cross-checked against
exact rational arithmetic rounded once to f16 (round to nearest, ties to even).
Usage: python3 examples/make_data.py
"""
from fractions import Fraction
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
f16 = np.float16


def exact(v):
    return Fraction(float(v))


def round_f16(q):
    """Exact rational -> nearest f16 (ties to even), as np.float16."""
    r = f16(float(q))  # candidate; fix up by checking neighbours exactly
    best = None
    for c in (np.nextafter(r, f16(-np.inf)), r, np.nextafter(r, f16(np.inf))):
        if not np.isfinite(c):
            continue
        d = abs(exact(c) - q)
        bits = int(np.array(c, dtype=f16).view(np.uint16))
        key = (d, bits & 1)
        if best is None or key < best[0]:
            best = (key, c)
    return best[1]


def write(path, arr):
    arr = np.asarray(arr, dtype=f16)
    arr.astype("<f2").tofile(HERE / path)
    return arr


def show(arr):
    return "[" + ", ".join(repr(float(v)) for v in arr) + "]"


def hexbits(arr):
    return " ".join(f"{b:04x}" for b in np.asarray(arr, dtype=f16).view(np.uint16))


# ---- f16_scale: x[i] = x[i] * s, s = 0.5 -----------------------------------
x = write("f16_scale/x.bin", [1.0, 2.0, -0.5, 3.25, 0.0, -7.0,
                              2.0 ** -24, 3 * 2.0 ** -24])
s = f16(0.5)
exp = x * s
assert all(e == round_f16(exact(a) * exact(s)) for a, e in zip(x, exp))
write("f16_scale/expected_x.bin", exp)
print("f16_scale x       ", show(x), "\n  bits", hexbits(x))
print("f16_scale expected", show(exp), "\n  bits", hexbits(exp))

# ---- f16_elementwise: out = a*b + (a-b), each op rounded to f16 -------------
a = write("f16_elementwise/a.bin", [1.0, 2.0, -0.5, 3.25, 0.1, 100.0, -3.0, 1000.0])
b = write("f16_elementwise/b.bin", [2.0, 2.0, 4.0, -1.5, 0.3, 0.01, -3.0, 60.0])
exp = (a * b) + (a - b)
for ai, bi, e in zip(a, b, exp):
    p = round_f16(exact(ai) * exact(bi))
    d = round_f16(exact(ai) - exact(bi))
    ref = round_f16(exact(p) + exact(d))
    assert e == ref, (ai, bi, e, ref)
write("f16_elementwise/expected_out.bin", exp)
print("f16_elementwise a ", show(a), "\n  bits", hexbits(a))
print("f16_elementwise b ", show(b), "\n  bits", hexbits(b))
print("f16_elementwise exp", show(exp), "\n  bits", hexbits(exp))

# ---- h2_axpy: y = fma(a, x, y) on half2, a = (0.5 low lane, 3.0 high lane) --
av = np.array([0.5, 3.0], dtype=f16)
abits = int(av.view(np.uint32)[0])
assert abits == 0x42003800
x = write("h2_axpy/x.bin", [1.0, 2.0, -0.5, 3.25, 0.1, 0.1, -3.0, 0.25,
                            4.0, -1.0, 1.5, 0.0, 1024.0, 7.0, -2.5, 0.75])
y = write("h2_axpy/y.bin", [1.0, 1.0, 1.0, 1.0, 0.5, -0.25, 1.5, 0.5,
                            -2.0, 2.0, 0.25, 3.0, 1.0, -4.0, 1.25, 0.125])
lane = np.tile(av, len(x) // 2)
exp = (lane.astype(np.float64) * x.astype(np.float64) + y.astype(np.float64)).astype(f16)
assert all(e == round_f16(exact(l) * exact(xi) + exact(yi)) for l, xi, yi, e in zip(lane, x, y, exp))
# element 5 (high lane) tells a fused multiply-add from mul-then-add
assert exp[5] != (lane[5] * x[5]) + y[5]
write("h2_axpy/expected_y.bin", exp)
print(f"h2_axpy a bits 0x{abits:08x}")
print("h2_axpy x  ", show(x), "\n  bits", hexbits(x))
print("h2_axpy y  ", show(y), "\n  bits", hexbits(y))
print("h2_axpy exp", show(exp), "\n  bits", hexbits(exp))
