"""Inputs and exact expected outputs of nv_mul128_carry (Python integers, no GPU, no ptxjit).
Run from this folder: python3 expected.py"""
import json, random, struct

M64, M128 = (1 << 64) - 1, (1 << 128) - 1
N = 64
random.seed(128)
edges = [0, 1, 2, M64, 1 << 64, M128, 1 << 127, (1 << 127) - 1, 0xFFFFFFFF, 1 << 32]
xs = [edges[i % len(edges)] if i < 20 else random.getrandbits(128) for i in range(N)]
ys = [edges[(i * 3 + 1) % len(edges)] if i < 20 else random.getrandbits(random.choice([32, 64, 96, 128])) for i in range(N)]

def words(vals):
    return b"".join(struct.pack("<QQ", v & M64, v >> 64) for v in vals)

out = []
for x, y in zip(xs, ys):
    p, s, d, full = (x * y) & M128, (x + y) & M128, (x - y) & M128, x * y
    out += [p & M64, p >> 64, s & M64, s >> 64, d & M64, d >> 64]
    out += [(full >> (64 * k)) & M64 for k in range(4)]

open("in_a.bin", "wb").write(words(xs))
open("in_b.bin", "wb").write(words(ys))
open("expected_out.bin", "wb").write(b"".join(struct.pack("<Q", v) for v in out))
launch = {
    "name": "nv_mul128_carry", "ptx": "kernel.ptx", "entry": "mul128",
    "grid": [1, 1, 1], "block": [N, 1, 1], "dynamic_shared_bytes": 0,
    "params": [
        {"name": "a", "kind": "input", "dtype": "u64", "count": 2 * N, "file": "in_a.bin"},
        {"name": "b", "kind": "input", "dtype": "u64", "count": 2 * N, "file": "in_b.bin"},
        {"name": "out", "kind": "output", "dtype": "u64", "count": 10 * N,
         "expected": "expected_out.bin", "check": {"mode": "exact"}},
        {"name": "n", "kind": "scalar", "dtype": "i32", "value": N, "bytes_hex": struct.pack("<i", N).hex()},
    ],
    "generator": "nvcc 13.5.37 (PyPI nvidia-cuda-nvcc), nvcc -ptx -arch=sm_90 -O3",
    "notes": "x, y: 128-bit values (low word first); out[10i..]: x*y, x+y, x-y mod 2^128 (unsigned __int128: "
             "mul.lo/mul.hi.u64, add.cc.s64/addc.cc.s64, sub.cc.s64/subc.cc.s64), then the 256-bit product "
             "from inline-PTX mad.lo.cc.u32 / madc.hi.cc.u32 / addc.cc.u32 / add.cc.u32 chains on 32-bit limbs. "
             "Expected values: Python integers (expected.py).",
}
json.dump(launch, open("launch.json", "w"), indent=1)
