#!/usr/bin/env python3
"""half_tables: the half `tanh.approx`/`ex2.approx` tables ptxjit reads, from GPU recordings.

On an NVIDIA GPU these instructions are one SASS instruction a half (MUFU.TANH.F16,
MUFU.TANH.BF16, MUFU.EX2.F16, MUFU.EX2.BF16; an x2 form is two of them), and their results are
not correctly rounded. This script reads the recordings of all 65,536 inputs of every form that
uses each hardware function (`<form>.truth.gz`, as `gpu_truth.py record` writes them), checks
that the scalar form and both lanes of the pair form give the same function, and writes one
table a hardware function into `src/semantics/half_approx/`:

    mufu_tanh_f16.bin  mufu_tanh_bf16.bin  mufu_ex2_f16.bin  mufu_ex2_bf16.bin

Each is 8,192 bytes, one bit an input (input h: byte h >> 3, bit h & 7, least significant
first): set where the hardware's result is the correctly rounded result's bit pattern minus one
(one ulp nearer zero), clear where it is the correctly rounded result. Those are the only two
cases the H200's recordings hold; the script stops if a recording has any other. "Correctly rounded"
is what `semantics::half_approx` computes: the input's exact value through f64 `tanh`/`exp2`,
rounded once to nearest even, NaN → 0x7FFF, and for bf16 `ex2` (only `.ftz` exists) the input
and the result flushed to zero. (numpy's f64 `tanh`/`exp2` and Rust's round to the same half at
every input: `tests/hardware.rs` compares ptxjit's results with the recordings.)

The output depends only on the recordings: the same recordings give the same bytes.

usage: half_tables.py [RECORDINGS_DIR] [--out DIR]
       (defaults: tests/hardware/h200, src/semantics/half_approx, from the repository root)
"""

import argparse
import gzip
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (exponent bits, mantissa bits) of the half formats.
FORMATS = {"f16": (5, 10), "bf16": (8, 7)}
CANONICAL_NAN = 0x7FFF

# Each hardware function: its table's file, its format, the function, whether it flushes
# subnormals, and the PTX forms that run it (a scalar form and its pair form).
TABLES = [
    ("MUFU.TANH.F16", "mufu_tanh_f16.bin", "f16", "tanh", False,
     ["tanh.approx.f16", "tanh.approx.f16x2"]),
    ("MUFU.TANH.BF16", "mufu_tanh_bf16.bin", "bf16", "tanh", False,
     ["tanh.approx.bf16", "tanh.approx.bf16x2"]),
    ("MUFU.EX2.F16", "mufu_ex2_f16.bin", "f16", "ex2", False,
     ["ex2.approx.f16", "ex2.approx.f16x2"]),
    ("MUFU.EX2.BF16", "mufu_ex2_bf16.bin", "bf16", "ex2", True,
     ["ex2.approx.ftz.bf16", "ex2.approx.ftz.bf16x2"]),
]


def load(directory, form):
    """A recording's header, input buffers and output buffer (arrays of its item type)."""
    path = os.path.join(directory, form + ".truth.gz")
    with gzip.open(path) as f:
        raw = f.read()
    end = raw.index(b"\n")
    header = json.loads(raw[:end])
    if header["layout"] != "byte planes" or header.get("error") is not None:
        sys.exit(f"{path}: not a usable recording")
    pos = end + 1
    dtype = {2: np.uint16, 4: np.uint32}

    def take(nbytes, item):
        nonlocal pos
        planes = np.frombuffer(raw[pos:pos + nbytes], dtype=np.uint8).reshape(item, -1)
        pos += nbytes
        return planes.T.copy().view(dtype[item]).ravel()

    inputs = [take(n, header["in_item_bytes"]) for n in header["in_bytes"]]
    output = take(header["out_bytes"], header["out_item_bytes"])
    if pos != len(raw):
        sys.exit(f"{path}: longer than its header says")
    return inputs, output


def as_function(directory, form):
    """The recorded results of `form` as tables of all 65,536 halves, one a lane."""
    inputs, output = load(directory, form)
    a = inputs[0]
    if a.dtype == np.uint16:
        lanes = [(a, output)]
    else:
        lanes = [(a & 0xFFFF, output & 0xFFFF), (a >> 16, output >> 16)]
    tables = []
    for i, (x, y) in enumerate(lanes):
        if sorted(x.tolist()) != list(range(1 << 16)):
            sys.exit(f"{form}: lane {i} does not cover every half once")
        t = np.zeros(1 << 16, dtype=np.uint16)
        t[x.astype(np.int64)] = y.astype(np.uint16)
        tables.append(t)
    return tables


def to_f64(fmt, h):
    """The exact values of the halves `h` (NaN for every NaN pattern)."""
    exp_bits, mant_bits = FORMATS[fmt]
    h = h.astype(np.int64)
    bias = (1 << (exp_bits - 1)) - 1
    sign = np.where(h & 0x8000, -1.0, 1.0)
    exp = (h & 0x7FFF) >> mant_bits
    frac = (h & ((1 << mant_bits) - 1)).astype(np.float64)
    significand = np.where(exp == 0, frac, frac + (1 << mant_bits))
    e = np.where(exp == 0, 1 - bias, exp - bias) - mant_bits
    value = sign * np.ldexp(significand, e.astype(np.int32))
    special = exp == (1 << exp_bits) - 1
    return np.where(special, np.where(frac == 0, sign * np.inf, np.nan), value)


def round_rn(fmt, x):
    """f64 values rounded once to nearest even in `fmt` (as `HalfFormat::round`)."""
    exp_bits, mant_bits = FORMATS[fmt]
    bias = (1 << (exp_bits - 1)) - 1
    emin = 1 - bias
    inf = ((1 << exp_bits) - 1) << mant_bits
    raw = x.view(np.uint64)
    sign = np.where(raw >> np.uint64(63) != 0, 0x8000, 0).astype(np.int64)
    a = raw & np.uint64((1 << 63) - 1)
    e = (a >> np.uint64(52)).astype(np.int64) - 1023
    m = ((a & np.uint64((1 << 52) - 1)) | np.uint64(1 << 52)).astype(np.int64)
    # Past 62 bits every kept bit is gone and the remainder is below half a quantum.
    shift = np.minimum(52 - mant_bits + np.maximum(emin - e, 0), 62)
    kept = m >> shift
    rem = m - (kept << shift)
    half = np.int64(1) << (shift - 1)
    kept += (rem > half) | ((rem == half) & (kept & 1 == 1))
    bits = np.minimum(((np.maximum(e, emin) + bias - 1) << mant_bits) + kept, inf)
    out = np.where(a == 0, sign, sign | bits)
    out = np.where(np.isinf(x), sign | inf, out)
    return np.where(np.isnan(x), CANONICAL_NAN, out).astype(np.uint16)


def flush(fmt, h):
    """`.ftz`: subnormals become zero of the same sign."""
    mant_bits = FORMATS[fmt][1]
    return np.where(h & 0x7FFF < (1 << mant_bits), h & 0x8000, h).astype(np.uint16)


def correctly_rounded(fmt, function, ftz):
    """The correctly rounded result of every half, as `semantics::half_approx` computes it."""
    h = np.arange(1 << 16, dtype=np.uint16)
    if ftz:
        h = flush(fmt, h)
    with np.errstate(all="ignore"):
        x = to_f64(fmt, h)
        r = round_rn(fmt, np.tanh(x) if function == "tanh" else np.exp2(x))
    return flush(fmt, r) if ftz else r


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recordings", nargs="?",
                        default=os.path.join(ROOT, "tests", "hardware", "h200"))
    parser.add_argument("--out", default=os.path.join(ROOT, "src", "semantics", "half_approx"))
    args = parser.parse_args()
    # Every table is checked before any is written, so a bad recording changes nothing.
    out = []
    for name, file, fmt, function, ftz, forms in TABLES:
        lanes = [(form, i, t) for form in forms
                 for i, t in enumerate(as_function(args.recordings, form))]
        hardware = lanes[0][2]
        for form, i, t in lanes[1:]:
            n = int(np.count_nonzero(t != hardware))
            if n:
                sys.exit(f"{name}: {form} lane {i} differs from {forms[0]} on {n} inputs")
        difference = hardware.astype(np.int64) - correctly_rounded(fmt, function, ftz)
        if not np.isin(difference, [0, -1]).all():
            sys.exit(f"{name}: differences {sorted(set(difference.tolist()))} "
                     "do not fit one bit (0 or -1)")
        out.append((file, np.packbits(difference == -1, bitorder="little").tobytes()))
        print(f"{name}: {int(np.count_nonzero(difference))} of 65536 one below correctly "
              f"rounded ({', '.join(forms)}: {len(lanes)} lanes agree)")
    os.makedirs(args.out, exist_ok=True)
    for file, below in out:
        with open(os.path.join(args.out, file), "wb") as f:
            f.write(below)
    print(f"wrote {', '.join(file for file, _ in out)} to {args.out}")


if __name__ == "__main__":
    main()
