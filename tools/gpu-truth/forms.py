"""The instruction forms gpu-truth records, each a kernel and its inputs.

A form is one PTX instruction (or one `mma`, one `atom`) run on many inputs, one input set a
thread. Every form's kernel has the same parameters: three input buffers, one output buffer,
and the thread count; a thread reads its operands at its index and writes its result there.
The inputs are fixed (a seeded generator), so a recording says which inputs it had and a later
run, on a GPU or on ptxjit, uses the same ones.

Register widths: 16-bit halves in `.b16`, pairs (`x2`) and f32 in `.b32`.
"""

import hashlib

import numpy as np

PTX_HEADER = ".version 8.7\n.target sm_90\n.address_size 64\n"

# Half formats: bits of 1.0, the smallest normal, infinity; and the NaN payloads to probe
# (0x7FFF canonical, 0x7FF7 the OOB-NaN of `.oob`, quiet and signalling others, both signs).
F16 = dict(one=0x3C00, min_normal=0x0400, inf=0x7C00, nans=[0x7E00, 0x7C01, 0x7FFF, 0x7FF7, 0xFE00, 0xFFF7, 0x7D55])
BF16 = dict(one=0x3F80, min_normal=0x0080, inf=0x7F80, nans=[0x7FC0, 0x7F81, 0x7FFF, 0x7FF7, 0xFFC0, 0xFFF7, 0x7FA5])


def half_specials(f):
    """Special values of a half format, both signs: zeros, subnormals, the normal range's
    ends, values around one, infinities and NaNs."""
    one, mn, inf = f["one"], f["min_normal"], f["inf"]
    mags = [0, 1, 2, mn - 1, mn, mn + 1, one - 1, one, one + 1, one + 0x100, inf - 1, inf]
    vals = [m | s for m in mags for s in (0, 0x8000)]
    return np.array(vals + f["nans"], dtype=np.uint16)


def f32_specials():
    """f32 specials: zeros, subnormals, normal range ends, around one, infinities, NaNs."""
    mags = [0, 1, 0x007FFFFF, 0x00800000, 0x3F7FFFFF, 0x3F800000, 0x3F800001,
            0x40490FDB, 0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF]
    vals = [m | s for m in mags for s in (0, 0x80000000)]
    return np.array(vals, dtype=np.uint32)


def rng(name):
    """A generator seeded by the form's name: the same inputs on every machine."""
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
    return np.random.default_rng(seed)


def pairs_of(values, other, n):
    """`n` operand pairs: every special with every special, then random ones."""
    a, b = np.meshgrid(values, values, indexing="ij")
    a, b = a.ravel(), b.ravel()
    extra = max(0, n - a.size)
    return np.concatenate([a, other(extra)]), np.concatenate([b, other(extra)])


class Form:
    """One recorded form: its name (the PTX instruction), kernel text (`kernel(body)`, or
    `ptx` itself), inputs (three arrays of `in_dtype`, unused ones zero), the thread count
    (one a first input, unless given), and the output: `out_items` of `out_dtype` a thread."""

    def __init__(self, name, body, in_dtype, out_dtype, inputs, threads=None, ptx=None, out_items=1):
        self.name = name
        self.in_dtype = np.dtype(in_dtype)
        self.out_dtype = np.dtype(out_dtype)
        self.inputs = [np.ascontiguousarray(x, dtype=self.in_dtype) for x in inputs]
        while len(self.inputs) < 3:
            self.inputs.append(np.zeros_like(self.inputs[0]))
        self.threads = threads if threads is not None else self.inputs[0].size
        self.block = 128
        self.out_items = out_items
        self.ptx = ptx or kernel(body, self.in_dtype.itemsize, self.out_dtype.itemsize)


def kernel(body, in_size, out_size):
    """The common kernel: thread i loads %a, %b, %c (`in_size` bytes each) at index i, runs
    `body` (which writes %d), stores %d (`out_size` bytes) at index i."""
    reg = {2: "b16", 4: "b32", 8: "b64"}
    ld = {2: "u16", 4: "u32", 8: "u64"}
    return (
        PTX_HEADER
        + ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 n)\n{\n"
        + f".reg .{reg[in_size]} %a, %b, %c;\n.reg .{reg[out_size]} %d;\n"
        + ".reg .b32 %i, %n, %t0, %t1;\n.reg .b64 %o, %q, %x<4>;\n.reg .pred %p;\n.reg .f32 %f<4>;\n"
        + ".reg .b16 %h<4>;\n.reg .f64 %fd<2>;\n"
        + "ld.param.u32 %n, [n];\nmov.u32 %t0, %ctaid.x;\nmov.u32 %t1, %ntid.x;\nmov.u32 %i, %tid.x;\n"
        + "mad.lo.u32 %i, %t0, %t1, %i;\nsetp.ge.u32 %p, %i, %n;\n@%p bra DONE;\n"
        + f"mul.wide.u32 %o, %i, {in_size};\n"
        + "".join(
            f"ld.param.u64 %x{k}, [p{x}];\ncvta.to.global.u64 %x{k}, %x{k};\nadd.s64 %x{k}, %x{k}, %o;\n"
            f"ld.global.{ld[in_size]} %{x}, [%x{k}];\n"
            for k, x in enumerate("abc")
        )
        + body
        + f"\nmul.wide.u32 %q, %i, {out_size};\nld.param.u64 %x3, [pd];\ncvta.to.global.u64 %x3, %x3;\n"
        + f"add.s64 %x3, %x3, %q;\nst.global.{ld[out_size]} [%x3], %d;\nDONE:\nret;\n}}\n"
    )


def every_half():
    """All 65,536 bit patterns of a half, one a thread."""
    return np.arange(65536, dtype=np.uint16)


def every_half_in_both_lanes():
    """65,536 pairs with every half in the low lane once and in the high lane once."""
    lo = np.arange(65536, dtype=np.uint32)
    hi = (lo + 0x8000) & 0xFFFF
    return lo | (hi << 16)


def random_halves(name):
    r = rng(name)
    return lambda n: r.integers(0, 65536, n, dtype=np.uint32).astype(np.uint16)


def pack(lo, hi):
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)


def half_unary_forms():
    forms = []
    ops = [("neg", ["", ".ftz"], ["f16"]), ("abs", ["", ".ftz"], ["f16"]), ("neg", [""], ["bf16"]),
           ("abs", [""], ["bf16"]), ("tanh.approx", [""], ["f16", "bf16"]),
           ("ex2.approx", [""], ["f16"]), ("ex2.approx", [".ftz"], ["bf16"])]
    for op, mods, types in ops:
        for mod in mods:
            for ty in types:
                forms.append(Form(f"{op}{mod}.{ty}", f"{op}{mod}.{ty} %d, %a;", np.uint16, np.uint16,
                                  [every_half()]))
                forms.append(Form(f"{op}{mod}.{ty}x2", f"{op}{mod}.{ty}x2 %d, %a;", np.uint32, np.uint32,
                                  [every_half_in_both_lanes()]))
    # Conversions from halves: to f32 (bits), to integers (each rounding).
    forms.append(Form("cvt.f32.f16", "cvt.f32.f16 %f0, %a;\nmov.b32 %d, %f0;", np.uint16, np.uint32, [every_half()]))
    forms.append(Form("cvt.f32.bf16", "cvt.f32.bf16 %f0, %a;\nmov.b32 %d, %f0;", np.uint16, np.uint32, [every_half()]))
    for ty in ["f16", "bf16"]:
        forms.append(Form(f"cvt.f64.{ty}", f"cvt.f64.{ty} %fd0, %a;\nmov.b64 %d, %fd0;", np.uint16, np.uint64,
                          [every_half()]))
    for rnd in ["rni", "rzi", "rmi", "rpi"]:
        forms.append(Form(f"cvt.{rnd}.s32.f16", f"cvt.{rnd}.s32.f16 %d, %a;", np.uint16, np.uint32, [every_half()]))
    forms.append(Form("cvt.rzi.u16.f16", "cvt.rzi.u16.f16 %h0, %a;\ncvt.u32.u16 %d, %h0;", np.uint16, np.uint32,
                      [every_half()]))
    return forms


def half_binary_forms(samples):
    forms = []
    fmts = {"f16": F16, "bf16": BF16}

    def add(name, nsrc, ty):
        base = "bf16" if ty.startswith("bf16") else "f16"
        spec = half_specials(fmts[base])
        other = random_halves(name)
        a, b = pairs_of(spec, other, samples)
        if nsrc == 2:
            c = np.zeros_like(a)
        else:
            # c: the specials again, in another order, with the special pairs; then random.
            c = np.resize(np.roll(spec, 3), spec.size * spec.size)
            c = np.concatenate([c, other(a.size - c.size)])
        operands = "%a, %b" if nsrc == 2 else "%a, %b, %c"
        if ty.endswith("x2"):
            n = a.size // 2
            ins = [pack(x[:n], x[n : 2 * n]) for x in (a, b, c)]
            forms.append(Form(name, f"{name} %d, {operands};", np.uint32, np.uint32, ins))
        else:
            forms.append(Form(name, f"{name} %d, {operands};", np.uint16, np.uint16, [a, b, c]))

    for ty in ["f16", "f16x2"]:
        for op in ["add", "sub", "mul"]:
            for mods in ["", ".ftz", ".sat", ".ftz.sat"]:
                add(f"{op}.rn{mods}.{ty}", 2, ty)
        for mods in ["", ".ftz", ".sat", ".ftz.sat", ".relu", ".ftz.relu", ".oob", ".oob.relu"]:
            add(f"fma.rn{mods}.{ty}", 3, ty)
        for mods in ["", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs", ".NaN.xorsign.abs"]:
            for op in ["min", "max"]:
                add(f"{op}{mods}.{ty}", 2, ty)
    for ty in ["bf16", "bf16x2"]:
        for op in ["add", "sub", "mul"]:
            add(f"{op}.rn.{ty}", 2, ty)
        for mods in ["", ".relu", ".oob", ".oob.relu"]:
            add(f"fma.rn{mods}.{ty}", 3, ty)
        for mods in ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"]:
            for op in ["min", "max"]:
                add(f"{op}{mods}.{ty}", 2, ty)
    return forms


def f32_dense(name, samples):
    """f32 inputs: the specials, every exponent with many mantissas (both signs), random."""
    r = rng(name)
    exps = np.arange(256, dtype=np.uint32)
    mants = r.integers(0, 1 << 23, (256, 24), dtype=np.uint32)
    mants[:, 0] = 0
    mants[:, 1] = (1 << 23) - 1
    dense = ((exps[:, None] << 23) | mants).ravel()
    dense = np.concatenate([dense, dense | 0x80000000])
    rand = r.integers(0, 1 << 32, max(0, samples - dense.size), dtype=np.uint64).astype(np.uint32)
    return np.concatenate([f32_specials(), dense, rand])


def f32_forms(samples):
    forms = []
    for op in ["ex2.approx", "lg2.approx", "sin.approx", "cos.approx", "rsqrt.approx", "rcp.approx", "sqrt.approx"]:
        for mod in ["", ".ftz"]:
            name = f"{op}{mod}.f32"
            body = f"mov.b32 %f0, %a;\n{name} %f1, %f0;\nmov.b32 %d, %f1;"
            forms.append(Form(name, body, np.uint32, np.uint32, [f32_dense(name, samples)]))
    name = "tanh.approx.f32"
    forms.append(Form(name, f"mov.b32 %f0, %a;\n{name} %f1, %f0;\nmov.b32 %d, %f1;", np.uint32, np.uint32,
                      [f32_dense(name, samples)]))
    for name in ["div.full.f32", "div.full.ftz.f32", "div.approx.f32"]:
        r = rng(name)
        a, b = pairs_of(f32_specials(), lambda n: r.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),
                        samples)
        body = f"mov.b32 %f0, %a;\nmov.b32 %f1, %b;\n{name} %f2, %f0, %f1;\nmov.b32 %d, %f2;"
        forms.append(Form(name, body, np.uint32, np.uint32, [a, b]))
    # Conversions to halves from f32 (NaN payloads, rounding, saturation), one a thread.
    for name in ["cvt.rn.f16.f32", "cvt.rz.f16.f32", "cvt.rn.relu.f16.f32", "cvt.rn.bf16.f32",
                 "cvt.rz.bf16.f32", "cvt.rn.satfinite.bf16.f32"]:
        body = f"mov.b32 %f0, %a;\n{name} %h0, %f0;\ncvt.u32.u16 %d, %h0;"
        forms.append(Form(name, body, np.uint32, np.uint32, [f32_dense(name, samples)]))
    # atom.add.f32: each thread adds b to its own word holding a; the word afterwards.
    name = "atom.global.add.f32"
    r = rng(name)
    a, b = pairs_of(f32_specials(), lambda n: r.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32), samples)
    body = ("mov.b32 %f1, %b;\natom.global.add.f32 %f2, [%x0], %f1;\n"
            "ld.global.u32 %d, [%x0];")
    forms.append(Form(name, body, np.uint32, np.uint32, [a, b]))
    return forms


def half_bits(r, n, fmt):
    """`n` halves (f16 or bf16) with random signs and mantissas, exponents in one of two bands
    far apart, so that sums of products cancel and mix scales."""
    bias, mbits = (15, 10) if fmt == "f16" else (127, 7)
    e = np.where(r.random(n) < 0.5, r.integers(bias - 6, bias + 6, n), r.integers(bias - 14, bias - 8, n))
    return ((r.integers(0, 2, n) << 15) | (e << mbits) | r.integers(0, 1 << mbits, n)).astype(np.uint32)


def tf32_bits(r, n):
    """f32 words in the same two bands, low 13 bits random too (`tf32` operands are f32
    registers: what the unit does with the bits below tf32's mantissa shows)."""
    e = np.where(r.random(n) < 0.5, r.integers(121, 133, n), r.integers(113, 119, n))
    return ((r.integers(0, 2, n) << 31) | (e << 23) | r.integers(0, 1 << 23, n)).astype(np.uint32)


def fp8_bits(r, n, fmt):
    """fp8 bytes with random signs and mantissas, exponents spread over the format's range."""
    ebits, mbits = (4, 3) if fmt == "e4m3" else (5, 2)
    e = r.integers(1, (1 << ebits) - 1, n)
    return ((r.integers(0, 2, n) << 7) | (e << mbits) | r.integers(0, 1 << mbits, n)).astype(np.uint32)


# Specials for the operands of `mma`: zeros of both signs, subnormals, the largest and smallest
# normals, infinities and NaNs (f16, bf16), and for its f32 accumulator.
MMA_SPECIALS = {
    "f16": [0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x5BFF, 0x1000],
    "bf16": [0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x5F80, 0x2000,
             0x0F80, 0x7000],
}
C_SPECIALS = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
              0xFF800000, 0x7FC00000, 0x7F800001, 0x1F800000, 0x33800000]


def mma_forms(warps):
    """`mma.sync` on random operands whose exponents spread widely, so that the order and
    precision of the accumulation show, and (`.specials` forms) on operands where specials
    (zeros, subnormals, the extremes, infinities, NaNs) are mixed in. Each thread reads its own
    fragment registers (eight 32-bit words at 8 × index: the A registers, then the B
    registers, from the first buffer; C from the third buffer) and writes its results: the
    fragment layout does not matter here."""
    forms = []
    # (shape, D/C type, A/B type, A registers, B registers, C/D registers)
    shapes = [("m16n8k16", "f32", "f16", 4, 2, 4), ("m16n8k16", "f32", "bf16", 4, 2, 4),
              ("m16n8k16", "f16", "f16", 4, 2, 2), ("m16n8k8", "f32", "f16", 2, 1, 4),
              ("m16n8k8", "f32", "bf16", 2, 1, 4), ("m16n8k8", "f32", "tf32", 4, 2, 4),
              ("m16n8k4", "f32", "tf32", 2, 1, 4), ("m16n8k32", "f32", "e4m3", 4, 2, 4),
              ("m16n8k32", "f32", "e5m2", 4, 2, 4), ("m16n8k16", "f32", "e4m3", 2, 1, 4)]
    variants = [(s, False) for s in shapes] + [(s, True) for s in shapes if s[2] in ("f16", "bf16")
                                                 and s[0] == "m16n8k16"]
    for (shape, cd, ab, na, nb, ncd), specials in variants:
        name = f"mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd}" + (".specials" if specials else "")
        r = rng(name)
        threads = warps * 32
        words = threads * (na + nb)
        if ab in ("f16", "bf16"):
            h = half_bits(r, 2 * words, ab)
            if specials:
                pick = r.random(2 * words) < 0.03
                h[pick] = r.choice(np.array(MMA_SPECIALS[ab], dtype=np.uint32), pick.sum())
            w = h[0::2] | (h[1::2] << 16)
        elif ab == "tf32":
            w = tf32_bits(r, words)
        else:
            b = fp8_bits(r, 4 * words, ab)
            w = b[0::4] | (b[1::4] << 8) | (b[2::4] << 16) | (b[3::4] << 24)
        ins_a = np.zeros((threads, 8), dtype=np.uint32)
        ins_a[:, : na + nb] = w.reshape(threads, na + nb)
        c = np.zeros((threads, 8), dtype=np.uint32)
        if cd == "f32":
            c[:, :4] = r.standard_normal((threads, 4)).astype(np.float32).view(np.uint32)
            if specials:
                pick = r.random((threads, 4)) < 0.1
                c[:, :4][pick] = r.choice(np.array(C_SPECIALS, dtype=np.uint32), pick.sum())
            ctype, creg = "f32", "f32"
        else:
            c[:, :2] = r.integers(0x3000, 0x4000, (threads, 2)) | (r.integers(0x3000, 0x4000, (threads, 2)) << 16)
            ctype, creg = "b32", "b32"
        regs = f".reg .{creg} %cd<{ncd}>, %dd<{ncd}>;"
        group = lambda p, n: "{" + ", ".join(f"%{p}{j}" for j in range(n)) + "}"  # noqa: E731
        ptx = (
            PTX_HEADER
            + ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 n)\n{\n"
            + ".reg .b32 %i, %t0, %t1, %a<4>, %b<2>;\n.reg .b64 %o, %x<4>;\n" + regs + "\n"
            + "mov.u32 %t0, %ctaid.x;\nmov.u32 %t1, %ntid.x;\nmov.u32 %i, %tid.x;\nmad.lo.u32 %i, %t0, %t1, %i;\n"
            + "mul.wide.u32 %o, %i, 32;\n"
            + "".join(f"ld.param.u64 %x{k}, [p{x}];\ncvta.to.global.u64 %x{k}, %x{k};\nadd.s64 %x{k}, %x{k}, %o;\n"
                      for k, x in [(0, "a"), (2, "c"), (3, "d")])
            + "".join(f"ld.global.b32 %a{j}, [%x0+{4 * j}];\n" for j in range(na))
            + "".join(f"ld.global.b32 %b{j}, [%x0+{4 * (na + j)}];\n" for j in range(nb))
            + "".join(f"ld.global.{ctype} %cd{j}, [%x2+{4 * j}];\n" for j in range(ncd))
            + f"mma.sync.aligned.{shape}.row.col.{cd}.{ab}.{ab}.{cd} {group('dd', ncd)}, {group('a', na)}, "
            + f"{group('b', nb)}, {group('cd', ncd)};\n"
            + "".join(f"st.global.{ctype} [%x3+{4 * j}], %dd{j};\n" for j in range(ncd)) + "ret;\n}\n"
        )
        ins = [ins_a.ravel(), np.zeros(threads * 8, dtype=np.uint32), c.ravel()]
        forms.append(Form(name, None, np.uint32, np.uint32, ins, threads=threads, ptx=ptx, out_items=8))
    return forms


def oob_forms():
    """Which operands and bit patterns `fma.oob` takes for the OOB-NaN: every half in one
    operand, the others 1.0 (f16, bf16, each operand)."""
    forms = []
    for ty, one in [("f16", F16["one"]), ("bf16", BF16["one"])]:
        for k, operand in enumerate("abc"):
            ins = [np.full(65536, one, dtype=np.uint16) for _ in range(3)]
            ins[k] = every_half()
            name = f"fma.rn.oob.{ty}"
            forms.append(Form(f"{name}.every-{operand}", f"{name} %d, %a, %b, %c;", np.uint16, np.uint16, ins))
    return forms


def ftz_rounding_probes(samples):
    """Results just below the smallest normal that round up to it (to nearest): division,
    reciprocal and narrowing from f64, with and without `.ftz`."""
    forms = []
    for name in ["div.rn.ftz.f32", "div.rn.f32", "rcp.rn.ftz.f32", "cvt.rn.ftz.f32.f64", "cvt.rn.f32.f64",
                 "cvt.rz.ftz.f32.f64", "cvt.rp.ftz.f32.f64"]:
        r = rng(name + ".probe")
        n = samples
        sign = np.where(r.random(n) < 0.5, 1.0, -1.0)
        # Quotients spread over the last two units below 2^-126 and the first above.
        q = sign * np.ldexp(1.0 - r.random(n) * 2.0**-22, -126)
        if name.startswith("cvt"):
            x = q.view(np.uint64)
            lo, hi = (x & 0xFFFFFFFF).astype(np.uint32), (x >> 32).astype(np.uint32)
            body = f"mov.b64 %q, {{%a, %b}};\nmov.b64 %fd0, %q;\n{name} %f3, %fd0;\nmov.b32 %d, %f3;"
            forms.append(Form(name + ".probe", body, np.uint32, np.uint32, [lo, hi]))
            continue
        b = np.ldexp(1.0 + r.integers(0, 1 << 23, n) * 2.0**-23, r.integers(-20, 20, n)).astype(np.float32)
        if name.startswith("rcp"):
            a, b = (1.0 / q).astype(np.float32), np.zeros(n, dtype=np.float32)
            body = f"mov.b32 %f0, %a;\n{name} %f3, %f0;\nmov.b32 %d, %f3;"
        else:
            a = (q * b.astype(np.float64)).astype(np.float32)
            body = f"mov.b32 %f0, %a;\nmov.b32 %f1, %b;\n{name} %f3, %f0, %f1;\nmov.b32 %d, %f3;"
        forms.append(Form(name + ".probe", body, np.uint32, np.uint32, [a.view(np.uint32), b.view(np.uint32)]))
    return forms


def wgmma_forms(groups):
    """`wgmma.mma_async` m64n8k16 (f16 and bf16 into f32, sm_90a) on operands like
    `mma_forms`'s: A in registers, B (16 × 8) in shared memory through a descriptor (no
    swizzle; core matrices 128 bytes apart along K, 256 along N), D accumulating C. Each
    warpgroup (a block of 128 threads) has its own B: 64 words a block in the second buffer,
    which its first 64 threads copy. The first buffer has each thread's A registers then its
    C; the output, its four D."""
    forms = []
    for ab in ["f16", "bf16"]:
        name = f"wgmma.mma_async.sync.aligned.m64n8k16.f32.{ab}.{ab}"
        r = rng(name)
        threads = groups * 128
        ha = half_bits(r, threads * 8, ab)
        regs = np.zeros((threads, 8), dtype=np.uint32)
        regs[:, :4] = (ha[0::2] | (ha[1::2] << 16)).reshape(threads, 4)
        regs[:, 4:] = r.standard_normal((threads, 4)).astype(np.float32).view(np.uint32)
        hb = half_bits(r, groups * 128, ab)
        b = (hb[0::2] | (hb[1::2] << 16)).astype(np.uint32)
        desc = (128 >> 4) << 16 | (256 >> 4) << 32
        ptx = (
            ".version 8.7\n.target sm_90a\n.address_size 64\n"
            + ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 n)\n{\n"
            + ".shared .align 1024 .b8 smem[256];\n"
            + ".reg .b32 %r<8>, %a<4>, %d<4>;\n.reg .b64 %rd<12>;\n.reg .pred %p<2>;\n"
            + "mov.u32 %r0, %tid.x;\nmov.u32 %r1, %ctaid.x;\n"
            + "setp.ge.u32 %p0, %r0, 64;\n@%p0 bra COPIED;\n"
            + "ld.param.u64 %rd0, [pb];\ncvta.to.global.u64 %rd0, %rd0;\n"
            + "mad.lo.u32 %r2, %r1, 64, %r0;\nmul.wide.u32 %rd1, %r2, 4;\nadd.s64 %rd1, %rd0, %rd1;\n"
            + "ld.global.u32 %r3, [%rd1];\nmov.u32 %r4, smem;\nshl.b32 %r5, %r0, 2;\nadd.u32 %r4, %r4, %r5;\n"
            + "st.shared.u32 [%r4], %r3;\n"
            + "COPIED:\nfence.proxy.async.shared::cta;\nbar.sync 0;\n"
            + "mad.lo.u32 %r6, %r1, 128, %r0;\nld.param.u64 %rd2, [pa];\ncvta.to.global.u64 %rd2, %rd2;\n"
            + "mul.wide.u32 %rd3, %r6, 32;\nadd.s64 %rd2, %rd2, %rd3;\n"
            + "".join(f"ld.global.b32 %a{j}, [%rd2+{4 * j}];\n" for j in range(4))
            + "".join(f"ld.global.b32 %d{j}, [%rd2+{16 + 4 * j}];\n" for j in range(4))
            + "mov.u32 %r7, smem;\nshr.u32 %r7, %r7, 4;\ncvt.u64.u32 %rd4, %r7;\n"
            + f"add.s64 %rd4, %rd4, {desc};\nsetp.ne.u32 %p1, %r0, 4096;\n"
            + "wgmma.fence.sync.aligned;\n"
            + f"wgmma.mma_async.sync.aligned.m64n8k16.f32.{ab}.{ab} {{%d0, %d1, %d2, %d3}}, {{%a0, %a1, %a2, %a3}}, "
            + "%rd4, %p1, 1, 1, 0;\n"
            + "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
            + "ld.param.u64 %rd5, [pd];\ncvta.to.global.u64 %rd5, %rd5;\nmul.wide.u32 %rd6, %r6, 16;\n"
            + "add.s64 %rd5, %rd5, %rd6;\n"
            + "".join(f"st.global.b32 [%rd5+{4 * j}], %d{j};\n" for j in range(4))
            + "ret;\n}\n"
        )
        ins = [regs.ravel(), b, np.zeros(1, dtype=np.uint32)]
        forms.append(Form(name, None, np.uint32, np.uint32, ins, threads=threads, ptx=ptx, out_items=4))
    return forms


def f32_ftz_forms(samples):
    """f32 arithmetic whose results fall around the smallest normal (2^-126), where `.ftz`
    decides whether a result that rounds up to it is flushed; the same without `.ftz`
    (subnormal results) and with the other roundings."""
    forms = []
    for name, nsrc in [("mul.rn.ftz.f32", 2), ("mul.rz.ftz.f32", 2), ("mul.rm.ftz.f32", 2), ("mul.rp.ftz.f32", 2),
                       ("mul.ftz.f32", 2), ("mul.rn.f32", 2), ("div.rn.ftz.f32", 2), ("add.rn.ftz.f32", 2),
                       ("fma.rn.ftz.f32", 3), ("fma.rz.ftz.f32", 3), ("fma.rn.ftz.sat.f32", 3), ("fma.rn.f32", 3)]:
        r = rng(name)
        n = samples
        sign = np.where(r.random(n) < 0.5, 1.0, -1.0)
        a = sign * np.ldexp(1.0 + r.integers(0, 1 << 23, n) * 2.0**-23, r.integers(-70, -56, n))
        a = a.astype(np.float32).astype(np.float64)
        # Targets within 64 f32 units of the last place of ±2^-126, either side.
        target = np.ldexp(1.0 + r.integers(-64, 64, n) * 2.0**-24, -126) * np.where(r.random(n) < 0.5, 1, -1)
        b = (a / target) if name.startswith("div") else (target / a)
        b = b.astype(np.float32).astype(np.float64)
        c = np.zeros(n)
        if nsrc == 3:
            # b scaled so the product is near 2^-125 or 2^-126, and c pulls it back to the
            # boundary; or c a subnormal (flushed by `.ftz` as an input).
            b = np.where(r.random(n) < 0.5, b, (b * 1.5).astype(np.float32).astype(np.float64))
            near = -0.5 * a * b + np.ldexp(r.integers(-64, 64, n).astype(np.float64), -150)
            c = np.where(r.random(n) < 0.5, near, r.integers(-(1 << 23), 1 << 23, n) * 2.0**-149)
        if name.startswith("add"):
            # Sums of values near the smallest normal (exact: `.ftz` flushes subnormal sums).
            a = sign * np.ldexp(1.0 + r.integers(0, 1 << 23, n) * 2.0**-23, r.integers(-126, -123, n))
            b = -sign * np.ldexp(1.0 + r.integers(0, 1 << 23, n) * 2.0**-23, r.integers(-126, -123, n))
        words = [x.astype(np.float32).view(np.uint32) for x in (a, b, c)]
        ops = "%f0, %f1" if nsrc == 2 else "%f0, %f1, %f2"
        body = f"mov.b32 %f0, %a;\nmov.b32 %f1, %b;\nmov.b32 %f2, %c;\n{name} %f3, {ops};\nmov.b32 %d, %f3;"
        forms.append(Form(name, body, np.uint32, np.uint32, words))
    return forms


def fp8_forms():
    """Conversions to and from fp8 (sm_89+): every f16 pattern and every fp8 pair in, and f32
    pairs on the specials and every exponent."""
    forms = []
    for fmt in ["e4m3", "e5m2"]:
        name = f"cvt.rn.f16x2.{fmt}x2"
        forms.append(Form(name, f"cvt.u16.u32 %h0, %a;\n{name} %d, %h0;", np.uint32, np.uint32,
                          [np.arange(65536, dtype=np.uint32)]))
        for relu in ["", ".relu"]:
            name = f"cvt.rn.satfinite{relu}.{fmt}x2.f16x2"
            forms.append(Form(name, f"{name} %h0, %a;\ncvt.u32.u16 %d, %h0;", np.uint32, np.uint32,
                              [every_half_in_both_lanes()]))
            name = f"cvt.rn.satfinite{relu}.{fmt}x2.f32"
            x = f32_dense(name, 8192)
            y = np.roll(x, 7)
            forms.append(Form(name, f"mov.b32 %f0, %a;\nmov.b32 %f1, %b;\n{name} %h0, %f0, %f1;\ncvt.u32.u16 %d, %h0;",
                              np.uint32, np.uint32, [x, y]))
    return forms


def all_forms(samples=8192, warps=64):
    return (half_unary_forms() + half_binary_forms(samples) + f32_forms(samples) + mma_forms(warps)
            + f32_ftz_forms(samples) + fp8_forms() + oob_forms() + ftz_rounding_probes(samples)
            + wgmma_forms(warps // 4))
