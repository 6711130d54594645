#!/usr/bin/env python3
"""gpu-truth: record the bits an NVIDIA GPU gives for PTX instruction forms (issue 17).

Each form (forms.py) is a small kernel and fixed inputs. This script hands the kernel's PTX
text to the CUDA driver (`cuModuleLoadData`: the driver's own JIT compiles exactly that PTX),
runs it, and writes one recording a form: `<form>.truth.gz`, gzip of one JSON line (the form,
its PTX, the launch, the buffers' sizes) and then the three input buffers and the output
buffer, each as byte planes (all items' first bytes, then all second bytes...: the inputs of
a form that covers every half compress a hundredfold so). `MANIFEST.json` names the GPU, compute capability,
driver, CUDA and ptxas versions, the date and the command. `tests/hardware.rs` runs ptxjit on
each recording's PTX and inputs and requires the same output bits.

Needs only numpy and cuda-bindings (`pip install cuda-bindings numpy`). With ptxjit's
libcuda.so.1 on LD_LIBRARY_PATH the same script records ptxjit's own bits, which is how it is
tested without a GPU (tests/clients/gpu_truth.sh).

`corpus` runs the compiler-generated kernels of tests/corpus (or tests/compilers, same format)
on the device the same way, each in a process of its own, and writes what each output buffer
held (`OUT_DIR/<kernel>/got_<param>.bin`) and `corpus_report.json`: where those differ from the
expected files, and what their checks allow (exact ones bit for bit, approximate ones within
their tolerance). PTX newer than the driver takes is loaded once more with its `.version`
lowered to the driver's newest (the report says so).

usage: gpu_truth.py record OUT_DIR [--only SUBSTRING] [--samples N]
       gpu_truth.py corpus OUT_DIR [--corpus tests/corpus] [--only KERNEL] [--timeout 60]
       gpu_truth.py list
"""

import argparse
import ctypes
import datetime
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import forms as forms_mod  # noqa: E402

try:
    from cuda.bindings import driver as cu
except ImportError:  # cuda-python before 12.6
    from cuda import cuda as cu


class DriverError(Exception):
    """A call the driver refused; `code` is its CUresult."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


def check(result):
    """cuda-bindings returns (CUresult, values...): the values, or DriverError."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise DriverError(name.decode() if isinstance(name, bytes) else str(err), err)
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


class Gpu:
    """The driver's device 0 in its primary context."""

    def __init__(self):
        check(cu.cuInit(0))
        self.dev = check(cu.cuDeviceGet(0))
        self.ctx = check(cu.cuDevicePrimaryCtxRetain(self.dev))
        check(cu.cuCtxSetCurrent(self.ctx))

    def facts(self):
        attr = cu.CUdevice_attribute
        major = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self.dev))
        minor = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self.dev))
        name = check(cu.cuDeviceGetName(256, self.dev))
        version = check(cu.cuDriverGetVersion())
        return {
            "gpu": name.split(b"\0")[0].decode(),
            "compute_capability": f"{major}.{minor}",
            "driver_api_version": f"{version // 1000}.{version % 1000 // 10}",
            "nvidia_smi": command_output(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]),
            # The driver's JIT compiles the PTX; a toolkit ptxas, if present, for reference.
            "ptxas": command_output(["ptxas", "--version"]),
            "cuda_bindings": package_version("cuda-bindings") or package_version("cuda-python"),
            "numpy": np.__version__,
            "host": platform.platform(),
        }

    def launch(self, ptx, entry, grid, block, shared, buffers, args, cluster=None):
        """Loads `ptx` with the driver's JIT and launches `entry`. `buffers`: numpy arrays, each
        copied to a device buffer and back into the array after the launch; `args(addresses)`:
        the arguments' bytes in order, given those buffers' device addresses. With `cluster`
        (x, y, z), the blocks run in clusters of that shape. DriverError where the JIT or the
        launch refuses."""
        log = bytearray(1 << 16)
        opts = [cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        try:
            module = check(cu.cuModuleLoadDataEx(ptx.encode() + b"\0", len(opts), opts, [log, len(log)]))
        except DriverError as e:
            text = bytes(log).split(b"\0")[0].decode(errors="replace")
            raise DriverError(f"{e}: {text}", e.code) from None
        device = []
        try:
            fn = check(cu.cuModuleGetFunction(module, entry.encode()))
            if shared > 48 * 1024:  # past the default limit a kernel must opt in
                attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                check(cu.cuFuncSetAttribute(fn, attr, shared))
            for a in buffers:
                device.append(check(cu.cuMemAlloc(max(1, a.nbytes))))
                check(cu.cuMemcpyHtoD(device[-1], a.ctypes.data, a.nbytes))
            values = [np.frombuffer(bytes(v) + b"\0" * 8, dtype=np.uint8).copy()
                      for v in args([int(d) for d in device])]
            # kernelParams: an array of pointers to each argument's value.
            params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
            if cluster is None:
                check(cu.cuLaunchKernel(fn, *grid, *block, shared, 0, params.ctypes.data, 0))
            else:
                config = cu.CUlaunchConfig()
                config.gridDimX, config.gridDimY, config.gridDimZ = grid
                config.blockDimX, config.blockDimY, config.blockDimZ = block
                config.sharedMemBytes = shared
                attr = cu.CUlaunchAttribute()
                attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                dim = attr.value.clusterDim
                dim.x, dim.y, dim.z = cluster
                config.attrs, config.numAttrs = [attr], 1
                check(cu.cuLaunchKernelEx(config, fn, params.ctypes.data, 0))
            check(cu.cuCtxSynchronize())
            for d, a in zip(device, buffers):
                check(cu.cuMemcpyDtoH(a.ctypes.data, d, a.nbytes))
        finally:
            for d in device:
                cu.cuMemFree(d)
            cu.cuModuleUnload(module)

    def run(self, form):
        """The form's output bytes, or DriverError (a PTX the JIT refused, a launch error)."""
        out = np.zeros(form.threads * form.out_items, dtype=form.out_dtype)
        buffers = [x.copy() for x in form.inputs] + [out]
        n = np.uint32(form.threads).tobytes()
        blocks = (form.threads + form.block - 1) // form.block
        self.launch(form.ptx, "k", (blocks, 1, 1), (form.block, 1, 1), 0, buffers,
                    lambda addresses: [np.uint64(a).tobytes() for a in addresses] + [n])
        return out.tobytes()


def command_output(argv):
    if not shutil.which(argv[0]):
        return None
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def package_version(name):
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def file_name(form_name):
    return form_name.replace("/", "_") + ".truth.gz"


def planes(data, item_bytes):
    """Little-endian items as byte planes: every item's byte 0, then every byte 1, ..."""
    return np.frombuffer(data, dtype=np.uint8).reshape(-1, item_bytes).T.tobytes()


def write_recording(path, form, output, error):
    header = {
        "form": form.name,
        "ptx": form.ptx,
        "kernel": "k",
        "threads": form.threads,
        "block": form.block,
        "in_bytes": [x.nbytes for x in form.inputs],
        "in_item_bytes": form.in_dtype.itemsize,
        "out_bytes": len(output) if output is not None else 0,
        "out_item_bytes": form.out_dtype.itemsize,
        "layout": "byte planes",
        "error": error,
    }
    with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as f:
        f.write(json.dumps(header, sort_keys=True).encode() + b"\n")
        for x in form.inputs:
            f.write(planes(x.tobytes(), form.in_dtype.itemsize))
        if output is not None:
            f.write(planes(output, form.out_dtype.itemsize))


def record(args):
    os.makedirs(args.out, exist_ok=True)
    gpu = Gpu()
    chosen = [f for f in forms_mod.all_forms(args.samples) if args.only in f.name]
    manifest = {
        "machine": gpu.facts(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "libcuda": os.environ.get("LD_LIBRARY_PATH"),
        "recordings": [],
    }
    failed = 0
    for form in chosen:
        try:
            output, error = gpu.run(form), None
        except DriverError as e:
            output, error = None, str(e)
            failed += 1
        name = file_name(form.name)
        write_recording(os.path.join(args.out, name), form, output, error)
        digest = hashlib.sha256(open(os.path.join(args.out, name), "rb").read()).hexdigest()
        manifest["recordings"].append({"form": form.name, "file": name, "sha256": digest, "error": error})
        print(f"{form.name}: {'error: ' + error if error else 'ok'}", flush=True)
    with open(os.path.join(args.out, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(chosen) - failed} of {len(chosen)} forms recorded in {args.out}; {failed} refused by the driver")


class SpecError(Exception):
    """A launch.json this script cannot run (an unknown param kind or dtype)."""


# How exact checks read each dtype's items: as their bits.
DTYPES = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64, "i32": np.uint32,
          "u32": np.uint32, "i16": np.uint16, "u16": np.uint16, "i8": np.uint8, "u8": np.uint8,
          "i64": np.uint64, "u64": np.uint64}


# Exponent-all-ones pattern and magnitude mask of each float dtype.
FLOATS = {"f16": (0x7C00, 0x7FFF), "bf16": (0x7F80, 0x7FFF), "f32": (0x7F800000, 0x7FFFFFFF),
          "f64": (0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF)}

# Explicit mantissa bits and least normal exponent of the float dtypes below f64 (ulp()).
ULP_SHAPES = {"f16": (10, -14), "bf16": (7, -126), "f32": (23, -126)}

# cuTensorMapEncodeTiled's element types by launch.json's dtype names.
TENSOR_TYPES = {"u8": "UINT8", "u16": "UINT16", "u32": "UINT32", "i32": "INT32", "u64": "UINT64",
                "i64": "INT64", "f16": "FLOAT16", "f32": "FLOAT32", "f64": "FLOAT64", "bf16": "BFLOAT16"}


def item_type(dtype):
    if dtype not in DTYPES:
        raise SpecError(f"unknown dtype {dtype!r}")
    return np.dtype(DTYPES[dtype])


def check_allows(param, expected, got):
    """Whether the exact check of `param` accepts `got` for `expected` (bits): any NaN for any
    NaN with `nan: any`, either zero with `zero_sign: any`."""
    check = param.get("check", {})
    if param["dtype"] not in FLOATS:
        return False
    inf, mag = FLOATS[param["dtype"]]
    if check.get("nan") == "any" and expected & mag > inf and got & mag > inf:
        return True
    return check.get("zero_sign") == "any" and expected & mag == 0 and got & mag == 0


def values(bits, dtype):
    """Items given as their bits (DTYPES), as float64."""
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    floats = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
    # Integers: "i32" is numpy's int32, "u8" its uint8.
    return bits.view(floats.get(dtype) or dtype.replace("i", "int").replace("u", "uint")).astype(np.float64)


def ulp(dtype, x):
    """The spacing of `dtype` values near each of `x` (finite), as tests/corpus.rs has it."""
    mant, emin = ULP_SHAPES.get(dtype, (52, -1022))
    e = np.frexp(x)[1] - 1  # floor(log2 |x|), exactly
    return np.ldexp(1.0, np.where(x == 0, emin, np.maximum(e, emin)) - mant)


def compare(folder, param, got):
    """The report of output `param` that holds `got` (bytes) against its expected file."""
    dtype, check = param["dtype"], param.get("check", {})
    g = np.frombuffer(got, dtype=item_type(dtype))
    e = np.fromfile(os.path.join(folder, param["expected"]), dtype=item_type(dtype))
    differ = np.flatnonzero(g != e)
    entry = {"check": param.get("check"), "bitwise_differences": int(differ.size)}
    if check.get("mode") == "approx":
        # |got - exact| <= atol + rtol |exact| + ulps ulp(exact), NaN for NaN, inf for the same inf.
        exact = (np.fromfile(os.path.join(folder, param["expected_f64"]), dtype=np.float64)
                 if "expected_f64" in param else values(e, dtype))
        gv = values(g, dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            error = np.abs(gv - exact)
            tolerance = (check.get("atol", 0.0) + check.get("rtol", 0.0) * np.abs(exact)
                         + check.get("ulps", 0.0) * ulp(dtype, exact))
            ok = np.where(np.isnan(exact), np.isnan(gv),
                          np.where(np.isinf(exact), gv == exact, error <= tolerance))
        beyond = np.flatnonzero(~ok)
        # Over the items where both are finite (the others are judged by NaN and inf alone).
        entry["max_abs_error"] = float(np.max(error[np.isfinite(gv) & np.isfinite(exact)], initial=0.0))
        entry["within_tolerance"] = not beyond.size
    else:
        beyond = [i for i in differ if not check_allows(param, int(e[i]), int(g[i]))]
    entry["beyond_check"] = len(beyond)
    shown = beyond if len(beyond) else differ
    entry["first"] = [[int(i), hex(int(e[i])), hex(int(g[i]))] for i in shown[:8]]
    if check.get("mode") == "approx":  # and the exact value each is held to (JSON has no NaN)
        for item in entry["first"]:
            x = float(exact[item[0]])
            item.append(x if np.isfinite(x) else str(x))
    return entry


def tensor_map(param, address):
    """The 128 bytes of the `tensormap` param over the buffer at `address`, built as
    tests/common/case.rs builds it: tiled, `dims` and `box` innermost first, `strides` (bytes,
    dimensions 1..) packed where not given, every element (traversal strides 1), not
    interleaved, no L2 promotion, zeros out of bounds."""
    dtype, swizzle, dims = param["dtype"], param.get("swizzle", "NONE"), param["dims"]
    if dtype not in TENSOR_TYPES:
        raise SpecError(f"{param['name']}: no tensor map element type {dtype!r}")
    if swizzle not in ("NONE", "32B", "64B", "128B"):
        raise SpecError(f"{param['name']}: unknown swizzle {swizzle!r}")
    strides = [item_type(dtype).itemsize * int(np.prod(dims[:i])) for i in range(1, len(dims))]
    strides[: len(param.get("strides", []))] = param.get("strides", [])
    # Called through ctypes: cuda-bindings' CUtensorMap lies where Python's allocator puts it
    # (16-byte aligned), and the driver wants the map 64-byte aligned.
    space = np.zeros(128 + 64, dtype=np.uint8)
    at = -space.ctypes.data % 64
    encode = ctypes.CDLL("libcuda.so.1").cuTensorMapEncodeTiled
    encode.restype = ctypes.c_int
    u64s, u32s = (lambda xs: (ctypes.c_uint64 * len(xs))(*xs)), (lambda xs: (ctypes.c_uint32 * len(xs))(*xs))
    check(cu.CUresult(encode(
        ctypes.c_void_p(space.ctypes.data + at),
        ctypes.c_int(getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + TENSOR_TYPES[dtype])),
        ctypes.c_uint32(len(dims)), ctypes.c_void_p(address), u64s(dims), u64s(strides),
        u32s(param["box"]), u32s([1] * len(dims)),
        ctypes.c_int(cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE),
        ctypes.c_int(getattr(cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + swizzle)),
        ctypes.c_int(cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE),
        ctypes.c_int(cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))))
    return space[at:at + 128].tobytes()


VERSION = re.compile(r"^([ \t]*\.version[ \t]+)(\d+\.\d+)", re.M)


def run_kernel(gpu, folder, out, entry):
    """Runs the kernel of `folder` as its launch.json says, writes its outputs into `out` and
    their reports into `entry`. Where the driver refuses the PTX's `.version`, runs it once
    more with that lowered to the driver's newest (entry["ptx_version"] says so)."""
    spec = json.load(open(os.path.join(folder, "launch.json")))
    params = spec["params"]
    buffers = {}  # each buffer param's host array, by name
    for p in params:
        if p["kind"] in ("input", "inout"):
            buffers[p["name"]] = np.fromfile(os.path.join(folder, p["file"]), dtype=np.uint8)
        elif p["kind"] == "output":
            buffers[p["name"]] = np.zeros(p["count"] * item_type(p["dtype"]).itemsize, dtype=np.uint8)
        elif p["kind"] not in ("scalar", "null_ptr", "tensormap"):
            raise SpecError(f"{p['name']}: unknown param kind {p['kind']!r}")

    def args(addresses):
        address = dict(zip(buffers, addresses))
        passed = []
        for p in params:
            if p["kind"] == "scalar":
                passed.append(bytes.fromhex(p["bytes_hex"]))
            elif p["kind"] == "null_ptr":
                passed.append(bytes(8))
            elif p["kind"] == "tensormap":
                passed.append(tensor_map(p, address[p["buffer"]]))
            elif p.get("argument", True):  # (false: the buffer only backs a tensor map)
                passed.append(np.uint64(address[p["name"]]).tobytes())
        return passed

    def launch(ptx):
        gpu.launch(ptx, spec["entry"], spec["grid"], spec["block"], spec.get("dynamic_shared_bytes", 0),
                   list(buffers.values()), args, spec.get("cluster"))

    ptx = open(os.path.join(folder, spec["ptx"])).read()
    try:
        launch(ptx)
    except DriverError as e:
        refused = e.code == cu.CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION or "Unsupported .version" in str(e)
        if not refused or not VERSION.search(ptx):
            raise
        # ptxas's log names the newest it takes ("Unsupported .version 9.5; current version is '9.0'").
        newest = re.search(r"current version is '(\d+\.\d+)'", str(e))
        newest = newest.group(1) if newest else "9.0"
        entry["ptx_version"] = {"file": VERSION.search(ptx).group(2), "loaded_as": newest}
        launch(VERSION.sub(lambda m: m.group(1) + newest, ptx, count=1))
    for p in params:
        if "expected" in p:
            got = buffers[p["name"]].tobytes()
            open(os.path.join(out, f"got_{p['name']}.bin"), "wb").write(got)
            entry[p["name"]] = compare(folder, p, got)


PART = "part.json"


def corpus_part(args):
    """Runs kernel `args.only` in this process (the parent's --part): its outputs and report
    entry (PART) go to OUT_DIR/<kernel>."""
    out = os.path.join(args.out, args.only)
    os.makedirs(out, exist_ok=True)
    entry = {}
    try:
        run_kernel(Gpu(), os.path.join(args.corpus, args.only), out, entry)
    except (DriverError, SpecError) as e:
        entry["error"] = str(e)
    with open(os.path.join(out, PART), "w") as f:
        json.dump(entry, f, indent=1, sort_keys=True)


def run_part(args, name):
    """The report entry of kernel `name`, run by this script in a process of its own: a kernel
    that faults leaves its CUDA context unusable, and one that hangs is ended after
    `args.timeout` seconds."""
    out = os.path.join(args.out, name)
    shutil.rmtree(out, ignore_errors=True)  # no outputs or entry left from an earlier run
    argv = [sys.executable, os.path.abspath(__file__), "corpus", args.out, "--corpus", args.corpus,
            "--only", name, "--part"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"ended after {args.timeout} s"}
    try:
        with open(os.path.join(out, PART)) as f:
            entry = json.load(f)
    except (OSError, ValueError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": f"exit status {done.returncode}: {' | '.join(tail)}"}
    os.remove(os.path.join(out, PART))
    return entry


def summary(name, entry):
    """One line: the kernel's error, or its outputs' differences."""
    if "error" in entry:
        return f"{name}: error: {' '.join(entry['error'].split())}"
    outputs = [v for v in entry.values() if "bitwise_differences" in v]
    diffs = sum(v["bitwise_differences"] for v in outputs)
    beyond = sum(v["beyond_check"] for v in outputs)
    line = (f"{name}: {diffs} output items differ bitwise from the expected files, {beyond} beyond "
            "what their check allows")
    if "ptx_version" in entry:
        line += " (PTX .version {file} loaded as {loaded_as})".format(**entry["ptx_version"])
    return line


def corpus(args):
    """Runs the kernels of the corpus folder, each in a process of its own; writes their
    outputs and where they differ from the expected files."""
    if args.part:
        return corpus_part(args)
    names = [args.only] if args.only else sorted(
        n for n in os.listdir(args.corpus) if os.path.exists(os.path.join(args.corpus, n, "launch.json")))
    report = {"machine": Gpu().facts(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "corpus": os.path.normpath(args.corpus),
              "kernels": {}}
    for name in names:
        report["kernels"][name] = run_part(args, name)
        print(summary(name, report["kernels"][name]), flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "corpus_report.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="run every form on the driver's device 0 and write the recordings")
    r.add_argument("out")
    r.add_argument("--only", default="", help="only forms whose name contains this")
    r.add_argument("--samples", type=int, default=8192, help="operand sets of a binary or ternary form")
    c = sub.add_parser("corpus", help="run a corpus folder's kernels, report differences from the expected files")
    c.add_argument("out")
    c.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/corpus"))
    c.add_argument("--only", help="only this kernel (folder)")
    c.add_argument("--timeout", type=int, default=60, help="seconds a kernel may take")
    c.add_argument("--part", action="store_true", help=argparse.SUPPRESS)  # run_part's process
    sub.add_parser("list", help="print the forms")
    args = p.parse_args()
    if args.cmd == "list":
        for f in forms_mod.all_forms():
            print(f"{f.name}\t{f.threads} threads")
    elif args.cmd == "corpus":
        corpus(args)
    else:
        record(args)


if __name__ == "__main__":
    main()
