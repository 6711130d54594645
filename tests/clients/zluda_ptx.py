"""ZLUDA's PTX execution tests (ptx/src/test/spirv_run), run on ptxjit's libcuda.so.1 the way
ZLUDA's `test_cuda_assert` runs them on an NVIDIA GPU.

ZLUDA declares each test in spirv_run/mod.rs as `test_ptx!(name, [inputs], [outputs])`
(`test_ptx_with_32!` likewise; `test_ptx_warp!(name, [outputs])` has no input and 64 threads;
`test_ptx!(name)` is only compiled). Its `run_cuda` does: cuInit, cuCtxCreate_v2,
cuModuleLoadData of the file's text, cuModuleGetFunction(name), cuMemAlloc_v2 of the output
(and input), cuMemcpyHtoD_v2 of the input, cuMemsetD8_v2(out, 0), cuLaunchKernel on one block
of (block_dim_x, 1, 1) with 1024 bytes of dynamic shared memory and the arguments (&input,
&output), or (&output, &output) without an input, cuMemcpyDtoH_v2, then `assert_eq!` of the
typed outputs. This file reads the test list and the Rust array literals from mod.rs itself, so
the expected values are ZLUDA's, validated on NVIDIA GPUs; nothing is copied from its tree.

usage: python3 zluda_ptx.py LIBCUDA SPIRV_RUN_DIR [NAME...]
Prints one line per test (PASS, FAIL with the difference, ERROR with the CUresult, LOADS or
LOAD-ERROR for compile-only tests) and a summary; exits 1 if any test did not pass.
"""
import ctypes, json, math, os, re, struct, subprocess, sys

# --- reading mod.rs ---------------------------------------------------------------------

FORMATS = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i8": "b", "i16": "h", "i32": "i",
           "i64": "q", "f16": "e", "f32": "f", "f64": "d"}


def cast(fmt, value, to):
    """`value` stored as format `fmt` and read back as format `to` (rounds floats)."""
    return struct.unpack("<" + to, struct.pack("<" + fmt, value))[0]


def f32(x):
    return cast("f", x, "f")


def pack(ty, values):
    return b"".join(struct.pack("<" + FORMATS[ty], v) for v in values)


def unpack(ty, data):
    size = struct.calcsize(FORMATS[ty])
    return [struct.unpack("<" + FORMATS[ty], data[i:i + size])[0]
            for i in range(0, len(data), size)]


class V:
    """A Rust value: a Python number and its type, None while a literal is still untyped."""

    def __init__(self, value, ty=None):
        self.value, self.ty = value, ty

    def __neg__(self):
        return V(-self.value, self.ty)

    def __truediv__(self, other):
        ty = self.ty or other.ty
        if ty in ("f32", "f16"):  # one rounding of the f64 quotient of f32s is the f32 one
            return V(f32(f32(self.value) / f32(other.value)), ty)
        return V(self.value / other.value, ty)

    def to_bits(self):
        assert self.ty == "f16"
        return V(cast("e", self.value, "H"), "u16")


def f16_from(x):  # from_f32 and from_f64 of the f32 or exact f64 literals the tests use
    return V(cast("e", f32(x.value), "e"), "f16")


NAMESPACE = {
    "V": V,
    "f32_NAN": V(math.nan, "f32"), "f32_INFINITY": V(math.inf, "f32"),
    "f32_NEG_INFINITY": V(-math.inf, "f32"), "PI": V(math.pi, "f32"),
    "f32_from_bits": lambda b: V(cast("I", b.value, "f"), "f32"),
    "f16_NAN": V(math.nan, "f16"), "f16_NEG_INFINITY": V(-math.inf, "f16"),
    "f16_from_f32": f16_from, "f16_from_f64": f16_from,
    "f16_from_bits": lambda b: V(cast("H", b.value, "e"), "f16"),
}
for ty in FORMATS:
    if ty[0] in "ui":
        bits, signed = int(ty[1:]), ty[0] == "i"
        NAMESPACE[f"{ty}_MAX"] = V((1 << (bits - signed)) - 1, ty)
        NAMESPACE[f"{ty}_MIN"] = V(-(1 << (bits - 1)) if signed else 0, ty)

LITERAL = re.compile(
    r"\b(0x[0-9a-fA-F_]+|0b[01_]+|\d[\d_]*\.\d[\d_]*(?:e[+-]?\d+)?|\d[\d_]*\.(?!\w)|\d[\d_]*)"
    r"(u8|u16|u32|u64|i8|i16|i32|i64|f32|f64)?\b")


def literal(m):
    text, suffix = m.group(1).replace("_", ""), m.group(2)
    if text.startswith(("0x", "0b")) or (text.isdigit() and suffix not in ("f32", "f64")):
        return f"V({int(text, 0)}, {suffix!r})"
    return f"V({float(text)!r}, {suffix!r})"


def evaluate(element):
    """One element of a Rust array literal, as the few forms ZLUDA's tests use."""
    e = element.strip()
    e = re.sub(r"\bstd::f32::consts::PI\b", "PI", e)
    e = re.sub(r"\bhalf::f16::", "f16::", e)
    e = re.sub(r"\b(u8|u16|u32|u64|i8|i16|i32|i64)::(max_value|min_value)\(\)",
               lambda m: f"{m.group(1)}::{m.group(2)[:3].upper()}", e)
    e = re.sub(r"\b(f16|f32|u8|u16|u32|u64|i8|i16|i32|i64)::(\w+)", r"\1_\2", e)
    e = LITERAL.sub(literal, e)
    return eval(e, {"__builtins__": {}}, dict(NAMESPACE))


def split_top(text, sep=","):
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def array(text):
    """A Rust array literal: its element type (as rustc infers it) and its values."""
    assert text.startswith("[") and text.endswith("]"), text
    values = [evaluate(e) for e in split_top(text[1:-1])]
    ty = next((v.ty for v in values if v.ty), None)
    if ty is None:
        ty = "i32" if all(isinstance(v.value, int) for v in values) else "f64"
    return ty, [v.value for v in values]


def tests(mod_rs):
    source = re.sub(r"//[^\n]*", "", open(mod_rs).read())
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    found = []
    for m in re.finditer(r"^test_ptx(|_with_32|_warp)!\(", source, re.M):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        args = split_top(source[m.end():i - 1])
        test = {"name": args[0], "block": 1, "input": None, "output": None}
        if m.group(1) == "_warp":
            test["block"], test["output"] = 64, array(args[1])
        elif len(args) == 3:
            test["input"], test["output"] = array(args[1]), array(args[2])
        found.append(test)
    return found


# --- running one test as ZLUDA's run_cuda does --------------------------------------------

def run_one(lib_path, ptx_path, test):
    cu = ctypes.CDLL(lib_path)
    u64 = ctypes.c_uint64

    def check(what, result):
        if result != 0:
            name = ctypes.c_char_p()
            cu.cuGetErrorName(result, ctypes.byref(name))
            raise RuntimeError(f"{what} returned {result} ({(name.value or b'?').decode()})")

    check("cuInit", cu.cuInit(0))
    ctx = ctypes.c_void_p()
    check("cuCtxCreate_v2", cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0))
    module, kernel = ctypes.c_void_p(), ctypes.c_void_p()
    check("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(module),
                                                  open(ptx_path, "rb").read() + b"\0"))
    check("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(kernel), module,
                                                        test["name"].encode()))
    if test["output"] is None:
        return "LOADS", ""
    out_ty, expected = test["output"]
    expected = unpack(out_ty, pack(out_ty, expected))  # as the typed Rust array holds them
    out_bytes = len(pack(out_ty, expected))
    out, inp = u64(), u64()
    check("cuMemAlloc_v2", cu.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(out_bytes)))
    if test["input"] is not None:
        host = pack(*test["input"])
        check("cuMemAlloc_v2", cu.cuMemAlloc_v2(ctypes.byref(inp), ctypes.c_size_t(len(host))))
        check("cuMemcpyHtoD_v2", cu.cuMemcpyHtoD_v2(inp, host, ctypes.c_size_t(len(host))))
        args = (ctypes.c_void_p * 2)(ctypes.addressof(inp), ctypes.addressof(out))
    else:
        args = (ctypes.c_void_p * 2)(ctypes.addressof(out), ctypes.addressof(out))
    check("cuMemsetD8_v2", cu.cuMemsetD8_v2(out, 0, ctypes.c_size_t(out_bytes)))
    check("cuLaunchKernel", cu.cuLaunchKernel(kernel, 1, 1, 1, test["block"], 1, 1, 1024, None,
                                              args, None))
    host = ctypes.create_string_buffer(out_bytes)
    check("cuMemcpyDtoH_v2", cu.cuMemcpyDtoH_v2(host, out, ctypes.c_size_t(out_bytes)))
    result = unpack(out_ty, host.raw)
    # Rust's assert_eq!: NaN never equals, -0.0 == 0.0.
    differ = [i for i, (r, e) in enumerate(zip(result, expected)) if not r == e]
    if not differ:
        return "PASS", ""
    shown = ", ".join(f"[{i}] got {result[i]!r} expected {expected[i]!r}" for i in differ[:4])
    return "FAIL", f"{len(differ)} of {len(expected)} {out_ty} differ: {shown}"


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--one":  # child: one test, result as JSON
        lib_path, ptx_path, test = sys.argv[2], sys.argv[3], json.loads(sys.stdin.read())
        try:
            status, detail = run_one(lib_path, ptx_path, test)
        except RuntimeError as e:
            status = "LOAD-ERROR" if test["output"] is None else "ERROR"
            detail = str(e)
        print(json.dumps([status, detail]))
        return 0
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib_path, spirv_run = os.path.abspath(sys.argv[1]), sys.argv[2]
    chosen = set(sys.argv[3:])
    counts = {}
    for test in tests(os.path.join(spirv_run, "mod.rs")):
        if chosen and test["name"] not in chosen:
            continue
        ptx_path = os.path.join(spirv_run, test["name"] + ".ptx")
        try:
            # PTXJIT_CUDA_DEBUG: ptxjit says why on stderr; its first line goes in the report.
            child = subprocess.run([sys.executable, __file__, "--one", lib_path, ptx_path],
                                   input=json.dumps(test), capture_output=True, text=True,
                                   timeout=120, env={**os.environ, "PTXJIT_CUDA_DEBUG": "1"})
            status, detail = json.loads(child.stdout.strip().splitlines()[-1]) \
                if child.returncode == 0 and child.stdout.strip() else \
                ("CRASH", f"exit {child.returncode}: {child.stderr.strip()[-300:]}")
            why = [l for l in child.stderr.splitlines() if l.startswith("ptxjit libcuda: ")]
            if status not in ("PASS", "LOADS", "CRASH") and why:
                detail += " -- " + why[0][len("ptxjit libcuda: "):]
        except subprocess.TimeoutExpired:
            status, detail = "CRASH", "timed out after 120 s"
        counts[status] = counts.get(status, 0) + 1
        print(f"{status:10} {test['name']}" + (f": {detail}" if detail else ""), flush=True)
    run = sum(counts.get(s, 0) for s in ("PASS", "FAIL", "ERROR", "CRASH"))
    print(f"executed: {counts.get('PASS', 0)} of {run} pass "
          f"({counts.get('FAIL', 0)} wrong, {counts.get('ERROR', 0)} errors, "
          f"{counts.get('CRASH', 0)} crashes); compile-only: {counts.get('LOADS', 0)} of "
          f"{counts.get('LOADS', 0) + counts.get('LOAD-ERROR', 0)} load")
    return 0 if set(counts) <= {"PASS", "LOADS"} else 1


if __name__ == "__main__":
    sys.exit(main())
