"""Inputs and expected outputs of nv_mma_s8_tf32 (exact Python arithmetic from the PTX
definitions of mma, cvt.rna.tf32.f32 and s32 wrap/.satfinite; no GPU, no ptxjit). The tf32
sums are exact in f32 (asserted), so D does not depend on the accumulation order.
Run from this folder: python3 expected.py"""
import json, random, struct
from fractions import Fraction

random.seed(13)
M, N, K8, KF = 16, 8, 32, 8

# int8 tile: A row-major 16x32, B column-major (B[n*32 + k]), C row-major 16x8.
A8 = [random.choice([-128, 127, -1, 0, 1]) if i < 40 else random.randint(-128, 127)
      for i in range(M * K8)]
B8 = [random.choice([-128, 127]) if i < 32 else random.randint(-128, 127) for i in range(K8 * N)]
C32 = [random.choice([2**31 - 1 - 5000, -2**31 + 5000, 0]) if i % 3 == 0
       else random.randint(-2**20, 2**20) for i in range(M * N)]

def wrap(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v

D32, D32_sat = [], []
for r in range(M):
    for c in range(N):
        s = C32[r * N + c] + sum(A8[r * K8 + k] * B8[c * K8 + k] for k in range(K8))
        D32.append(wrap(s))
        D32_sat.append(max(-2**31, min(2**31 - 1, s)))

# tf32 tile: values with bits below tf32's precision, some exactly half a tf32 unit.
def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]

def rna_tf32(x):
    """cvt.rna.tf32.f32: to 10 mantissa bits, ties away from zero."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    sign, mag = bits & 0x80000000, bits & 0x7FFFFFFF
    mag = (mag + 0x1000) & ~0x1FFF
    return struct.unpack("<f", struct.pack("<I", sign | mag))[0]

def operand(i):
    whole = random.randint(-40, 40) / 4.0
    if i % 4 == 0:
        # exactly half a tf32 unit above: rna rounds away from zero
        unit = 2.0 ** (max(int(abs(whole)).bit_length() - 1, -2) - 10) if whole else 0.0
        return f32(whole + (unit / 2 if whole > 0 else -unit / 2))
    return f32(whole + random.choice([0.0, 2.0**-14, -2.0**-13]))

Af = [operand(i) for i in range(M * KF)]
Bf = [operand(i + 1) for i in range(KF * N)]  # column-major: Bf[n*8 + k]
Cf = [random.randint(-1000, 1000) / 8.0 for _ in range(M * N)]
Df = []
for r in range(M):
    for c in range(N):
        s = Fraction(Cf[r * N + c]) + sum(Fraction(rna_tf32(Af[r * KF + k])) *
                                          Fraction(rna_tf32(Bf[c * KF + k])) for k in range(KF))
        assert Fraction(f32(float(s))) == s, "the tf32 sums must be exact in f32"
        Df.append(float(s))

pack = lambda fmt, vals: b"".join(struct.pack(fmt, v) for v in vals)
files = {"in_a8.bin": pack("<b", A8), "in_b8.bin": pack("<b", B8), "in_c32.bin": pack("<i", C32),
         "expected_d32.bin": pack("<i", D32), "expected_d32_sat.bin": pack("<i", D32_sat),
         "in_af.bin": pack("<f", Af), "in_bf.bin": pack("<f", Bf), "in_cf.bin": pack("<f", Cf),
         "expected_df.bin": pack("<f", Df)}
for name, data in files.items():
    open(name, "wb").write(data)
inp = lambda name, dtype, count, file: {"name": name, "kind": "input", "dtype": dtype,
                                        "count": count, "file": file}
out = lambda name, dtype, count, file: {"name": name, "kind": "output", "dtype": dtype,
                                        "count": count, "expected": file,
                                        "check": {"mode": "exact"}}
launch = {
    "name": "nv_mma_s8_tf32", "ptx": "kernel.ptx", "entry": "mma_tiles",
    "grid": [1, 1, 1], "block": [64, 1, 1], "dynamic_shared_bytes": 0,
    "params": [
        inp("A8", "i8", M * K8, "in_a8.bin"), inp("B8", "i8", K8 * N, "in_b8.bin"),
        inp("C32", "i32", M * N, "in_c32.bin"),
        out("D32", "i32", M * N, "expected_d32.bin"),
        out("D32_sat", "i32", M * N, "expected_d32_sat.bin"),
        inp("Af", "f32", M * KF, "in_af.bin"), inp("Bf", "f32", KF * N, "in_bf.bin"),
        inp("Cf", "f32", M * N, "in_cf.bin"),
        out("Df", "f32", M * N, "expected_df.bin"),
    ],
    "generator": "nvcc 13.5.37 (PyPI nvidia-cuda-nvcc), nvcc -ptx -arch=sm_90 -O3",
    "notes": "Warp 0: int8 16x8x32 tile, mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 and its "
             ".satfinite form (C near the s32 limits, so the plain form wraps and .satfinite "
             "clamps). Warp 1: tf32 16x8x8 tile, cvt.rna.tf32.f32 then "
             "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (inputs with bits below tf32 "
             "precision and exact ties; sums exact in f32). Fragments as the ISA lays them out. "
             "Expected values: exact Python arithmetic (expected.py).",
}
json.dump(launch, open("launch.json", "w"), indent=1)
