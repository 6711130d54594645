"""Inputs and exact expected outputs of nv_dp4a_dot (Python integers, from the CUDA
definitions of __dp4a, __dp2a_lo and __dp2a_hi). Run from this folder: python3 expected.py"""
import json, random, struct

ROWS, WORDS = 50, 24
random.seed(4)
edge = [v - (1 << 32) if v >> 31 else v
        for v in [0, 0x7F7F7F7F, 0x80808080, 0xFFFFFFFF, 0x01FF01FF, 0x80017FFF]]
a = [edge[i % len(edge)] if i < 12 else random.randint(-2**31, 2**31 - 1) for i in range(ROWS * WORDS)]
b = [random.randint(-2**31, 2**31 - 1) for _ in range(WORDS)]

def parts(x, width, signed):
    x &= 0xFFFFFFFF
    out = []
    for k in range(32 // width):
        v = (x >> (k * width)) & ((1 << width) - 1)
        if signed and v >> (width - 1):
            v -= 1 << width
        out.append(v)
    return out

def wrap(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v

out = []
for r in range(ROWS):
    s = u = lo = hi = 0
    for k in range(WORDS):
        x, y = a[r * WORDS + k], b[k]
        s = wrap(s + sum(p * q for p, q in zip(parts(x, 8, True), parts(y, 8, True))))
        u = wrap(u + sum(p * q for p, q in zip(parts(x, 8, False), parts(y, 8, False))))
        xh, yb = parts(x, 16, True), parts(y, 8, True)
        lo = wrap(lo + xh[0] * yb[0] + xh[1] * yb[1])
        xh, yb = parts(x, 16, False), parts(y, 8, False)
        hi = wrap(hi + xh[0] * yb[2] + xh[1] * yb[3])
    out += [s, u, lo, hi]

pack = lambda vals: b"".join(struct.pack("<i", v) for v in vals)
open("in_a.bin", "wb").write(pack(a))
open("in_b.bin", "wb").write(pack(b))
open("expected_out.bin", "wb").write(pack(out))
scalar = lambda name, v: {"name": name, "kind": "scalar", "dtype": "i32", "value": v,
                          "bytes_hex": struct.pack("<i", v).hex()}
launch = {
    "name": "nv_dp4a_dot", "ptx": "kernel.ptx", "entry": "dp4a_dot",
    "grid": [1, 1, 1], "block": [64, 1, 1], "dynamic_shared_bytes": 0,
    "params": [
        {"name": "a", "kind": "input", "dtype": "i32", "count": ROWS * WORDS, "file": "in_a.bin"},
        {"name": "b", "kind": "input", "dtype": "i32", "count": WORDS, "file": "in_b.bin"},
        {"name": "out", "kind": "output", "dtype": "i32", "count": 4 * ROWS,
         "expected": "expected_out.bin", "check": {"mode": "exact"}},
        scalar("rows", ROWS), scalar("words", WORDS),
    ],
    "generator": "nvcc 13.5.37 (PyPI nvidia-cuda-nvcc), nvcc -ptx -arch=sm_90 -O3",
    "notes": "Row r of a (24 packed int8x4 words) dotted with b: out[4r..] = __dp4a signed "
             "(dp4a.s32.s32), __dp4a unsigned (dp4a.u32.u32), __dp2a_lo signed (dp2a.lo.s32.s32), "
             "__dp2a_hi unsigned (dp2a.hi.u32.u32), accumulated over the row (unrolled by 4). "
             "Expected values: Python integers (expected.py).",
}
json.dump(launch, open("launch.json", "w"), indent=1)
