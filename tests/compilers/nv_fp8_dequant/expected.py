"""Inputs and expected outputs of nv_fp8_dequant, from the PTX ISA's definitions of e4m3,
e5m2, f16 and f32 (exact Python arithmetic; no GPU, no ptxjit). Run from this folder:
python3 expected.py"""
import json, math, random, struct

N, PER_ROW = 96, 8
random.seed(8)
edges = [0x00, 0x01, 0x07, 0x08, 0x7E, 0x7F, 0x80, 0xFE, 0xFF, 0x7C, 0x7B, 0x38]
q = []
for i in range(N):
    if i < len(edges):
        q.append(edges[i] | edges[(i + 3) % len(edges)] << 8 | edges[(i + 5) % len(edges)] << 16
                 | edges[(i + 7) % len(edges)] << 24)
    else:
        q.append(random.getrandbits(32))
scales = [struct.unpack("<H", struct.pack("<e", s))[0]
          for s in [0.5, 1.0, 3.0, 0.0078125, 65504.0, -2.5, 1.5, 1000.0, 0.1, -0.001, 7.0, 448.0]]

def e4m3(b):
    s = -1.0 if b & 0x80 else 1.0
    if b & 0x7F == 0x7F:
        return math.nan
    e, m = (b >> 3) & 0xF, b & 7
    return s * (m * 2.0**-9 if e == 0 else (8 + m) * 2.0**(e - 10))

def e5m2(b):
    s = -1.0 if b & 0x80 else 1.0
    e, m = (b >> 2) & 0x1F, b & 3
    if e == 31:
        return math.nan if m else s * math.inf
    return s * (m * 2.0**-16 if e == 0 else (4 + m) * 2.0**(e - 17))

def f16_bits(x):
    """x rounded to f16 (to nearest even); NaN is the canonical 0x7FFF."""
    if math.isnan(x):
        return 0x7FFF
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00

def f16_value(h):
    return struct.unpack("<e", struct.pack("<H", h))[0]

def f32(x):
    return x if math.isnan(x) else struct.unpack("<f", struct.pack("<f", x))[0]

def to_e4m3(x):
    """cvt.rn.satfinite.e4m3x2: nearest (ties to even), clamped to 448; NaN gives 0x7F."""
    if math.isnan(x):
        return 0x7F
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    values = [e4m3(c) for c in range(0x7F)]
    below = max(c for c in range(0x7F) if values[c] <= a)
    if below == 0x7E or values[below] == a:
        return sign | below
    lo, hi = values[below], values[below + 1]
    up = a - lo > hi - a or (a - lo == hi - a and below & 1)
    return sign | (below + up)

out, out_e5m2, requant = [], [], []
for i, w in enumerate(q):
    s = f16_value(scales[i // PER_ROW])
    for k in range(2):
        pair = (w >> (16 * k)) & 0xFFFF
        lo, hi = pair & 0xFF, pair >> 8
        v = [f16_bits(e4m3(b) * s) for b in (lo, hi)]
        out += v
        out_e5m2 += [f16_bits(e5m2(b)) for b in (lo, hi)]
        fx = f32(f16_value(v[0]) * 1.5) if v[0] != 0x7FFF else math.nan
        fy = f16_value(v[1]) if v[1] != 0x7FFF else math.nan
        requant.append(to_e4m3(fy) << 8 | to_e4m3(fx))

pack = lambda fmt, vals: b"".join(struct.pack(fmt, v) for v in vals)
open("in_q.bin", "wb").write(pack("<I", q))
open("in_scale.bin", "wb").write(pack("<H", scales))
open("expected_out.bin", "wb").write(pack("<H", out))
open("expected_out_e5m2.bin", "wb").write(pack("<H", out_e5m2))
open("expected_requant.bin", "wb").write(pack("<H", requant))
scalar = lambda name, v: {"name": name, "kind": "scalar", "dtype": "i32", "value": v,
                          "bytes_hex": struct.pack("<i", v).hex()}
output = lambda name, dtype, count, file: {"name": name, "kind": "output", "dtype": dtype,
                                           "count": count, "expected": file,
                                           "check": {"mode": "exact"}}
launch = {
    "name": "nv_fp8_dequant", "ptx": "kernel.ptx", "entry": "fp8_dequant",
    "grid": [2, 1, 1], "block": [64, 1, 1], "dynamic_shared_bytes": 0,
    "params": [
        {"name": "q", "kind": "input", "dtype": "u32", "count": N, "file": "in_q.bin"},
        {"name": "scale", "kind": "input", "dtype": "f16", "count": len(scales),
         "file": "in_scale.bin"},
        output("out", "f16", 4 * N, "expected_out.bin"),
        output("out_e5m2", "f16", 4 * N, "expected_out_e5m2.bin"),
        output("requant", "u16", 2 * N, "expected_requant.bin"),
        scalar("n", N), scalar("per_row", PER_ROW),
    ],
    "generator": "nvcc 13.5.37 (PyPI nvidia-cuda-nvcc), nvcc -ptx -arch=sm_90 -O3",
    "notes": "Each thread widens one word of four e4m3 values (cvt.rn.f16x2.e4m3x2), scales "
             "them by its row's f16 scale (mul.f16x2), widens the same bits as e5m2 "
             "(cvt.rn.f16x2.e5m2x2), and quantizes (x * 1.5, y) back to e4m3 "
             "(cvt.rn.satfinite.e4m3x2.f32). NaN codes included. Expected values: exact "
             "Python arithmetic (expected.py).",
}
json.dump(launch, open("launch.json", "w"), indent=1)
