"""Inputs and exact expected outputs of nv_simd_intrinsics: Python integers, from the
definitions CUDA documents for each intrinsic (crt/device_functions.h). No GPU, no ptxjit.
Run from this folder: python3 expected.py"""
import random, struct

N = 256
random.seed(13)
edge = [0, 1, 0x7F7F7F7F, 0x80808080, 0xFFFFFFFF, 0x7FFF8000, 0x80007FFF, 0x01FF01FF,
        0xFF01FF01, 0x00FF00FF, 0x12345678, 0xFEDCBA98]
a = [edge[i % len(edge)] if i < 144 else random.getrandbits(32) for i in range(N)]
b = [edge[(i // len(edge)) % len(edge)] if i < 144 else random.getrandbits(32) for i in range(N)]

def lanes(x, width, signed):
    out = []
    for k in range(32 // width):
        v = (x >> (k * width)) & ((1 << width) - 1)
        if signed and v >> (width - 1):
            v -= 1 << width
        out.append(v)
    return out

def pack(vals, width):
    return sum((v & ((1 << width) - 1)) << (k * width) for k, v in enumerate(vals))

def per(width, signed, f):
    return lambda x, y: pack([f(p, q) for p, q in zip(lanes(x, width, signed), lanes(y, width, signed))], width)

def sat(lo, hi):
    return lambda v: max(lo, min(hi, v))

def avg_away(p, q):  # ties away from zero
    s = p + q
    return (s + 1) // 2 if s >= 0 else -((-s + 1) // 2)

s16, s8, u8, u16 = sat(-32768, 32767), sat(-128, 127), sat(0, 255), sat(0, 65535)
intrinsics = [
    per(16, False, lambda p, q: p + q),                 # __vadd2
    per(16, True, lambda p, q: s16(p + q)),             # __vaddss2
    per(16, True, lambda p, q: abs(p - q)),             # __vabsdiffs2
    per(16, True, avg_away),                            # __vavgs2
    per(8, False, lambda p, q: (p + q + 1) // 2),       # __vavgu4 (rounded up)
    per(8, False, lambda p, q: abs(p - q)),             # __vabsdiffu4
    per(8, True, lambda p, q: s8(p - q)),               # __vsubss4
    per(8, True, max),                                  # __vmaxs4
    per(16, False, min),                                # __vminu2
    per(8, False, lambda p, q: int(p < q)),             # __vsetltu4
    per(16, True, lambda p, q: 0xFFFF if p > q else 0), # __vcmpgts2
    lambda x, y: sum(abs(p - q) for p, q in zip(lanes(x, 8, True), lanes(y, 8, True))),  # __vsads4
    per(16, False, lambda p, q: (p + q) // 2),          # __vhaddu2 (toward zero)
    per(8, False, lambda p, q: u8(p + q)),              # __vaddus4
    per(16, True, lambda p, q: int(p >= q)),            # __vsetges2
    per(16, False, lambda p, q: u16(p - q)),            # __vsubus2
]
out = [f(x, y) & 0xFFFFFFFF for x, y in zip(a, b) for f in intrinsics]

words = lambda vals: b"".join(struct.pack("<I", v) for v in vals)
open("in_a.bin", "wb").write(words(a))
open("in_b.bin", "wb").write(words(b))
open("expected_out.bin", "wb").write(words(out))
