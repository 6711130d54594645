"""Inputs and exact expected outputs of nv_warp_redux_elect (Python integers, from the CUDA
definitions of the __reduce_*_sync and __match_*_sync intrinsics and PTX elect.sync).
Run from this folder: python3 expected.py"""
import json, random, struct

BLOCKS, THREADS = 2, 64
N = BLOCKS * THREADS
random.seed(32)
x = []
for w in range(N // 32):
    if w == 0:  # small non-negative values: x >> 30 is 0 in every lane (match.all holds)
        x += [random.randint(0, 40) for _ in range(32)]
    elif w == 1:  # few distinct values, some negative
        x += [random.choice([-7, 3, 3, 12, -2**31, 2**31 - 1]) for _ in range(32)]
    else:
        x += [random.randint(-2**31, 2**31 - 1) for _ in range(32)]

U = lambda v: v & 0xFFFFFFFF
out = []
for w in range(N // 32):
    xs = x[32 * w: 32 * w + 32]
    us = [U(v) for v in xs]
    and_ = or_ = xor_ = 0
    and_ = 0xFFFFFFFF
    for u in us:
        and_ &= u; or_ |= u; xor_ ^= u
    shifted = [v >> 30 for v in xs]
    equal = all(s == shifted[0] for s in shifted)
    upper = sum(us[16:]) & 0xFFFFFFFF
    for lane in range(32):
        same = sum(1 << l for l in range(32) if xs[l] & 3 == xs[lane] & 3)
        o = [U(sum(xs)), U(min(xs)), U(max(xs)), min(us), max(us), and_, or_, xor_, same,
             (0xFFFFFFFF ^ 1) if equal else 0,
             1000 + lane if lane == 0 else 0,
             (upper ^ (0x80000000 if lane == 16 else 0)) if lane >= 16 else 0xDEADBEEF]
        out += o

open("in_in.bin", "wb").write(b"".join(struct.pack("<i", v) for v in x))
open("expected_out.bin", "wb").write(b"".join(struct.pack("<I", v) for v in out))
launch = {
    "name": "nv_warp_redux_elect", "ptx": "kernel.ptx", "entry": "warp_redux_elect",
    "grid": [BLOCKS, 1, 1], "block": [THREADS, 1, 1], "dynamic_shared_bytes": 0,
    "params": [
        {"name": "in", "kind": "input", "dtype": "i32", "count": N, "file": "in_in.bin"},
        {"name": "out", "kind": "output", "dtype": "u32", "count": 12 * N,
         "expected": "expected_out.bin", "check": {"mode": "exact"}},
    ],
    "generator": "nvcc 13.5.37 (PyPI nvidia-cuda-nvcc, with nvidia-cuda-cccl for cuda/ptx), nvcc -ptx -arch=sm_90 -O3",
    "notes": "4 warps; x = in[g], out[12g + k]: k0..2 redux.sync.{add,min,max}.s32, k3..4 redux.sync.{min,max}.u32, "
             "k5..7 redux.sync.{and,or,xor}.b32 (full warp); k8 match.any.sync.b32(x & 3); k9 match.all.sync.b32(x >> 30) "
             "xor its predicate; k10 1000 + lane in the lane elect.sync(0xffffffff) chooses (lane 0), else 0; k11 lanes 16..31: "
             "redux.sync.add over membermask 0xffff0000 xor 0x80000000 in the elected lane (16); lanes 0..15: 0xdeadbeef. "
             "elect.sync comes from inline PTX with a sink destination (`elect.sync _|P_OUT, mask`). "
             "Expected values: Python integers (expected.py).",
}
json.dump(launch, open("launch.json", "w"), indent=1)
