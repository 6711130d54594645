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

`corpus` runs the compiler-generated kernels of tests/corpus on the device the same way and
writes what each output buffer held (`corpus/<kernel>/got_<param>.bin`) and a report of where
those differ from the expected files (exact checks; approximate ones are only reported).

usage: gpu_truth.py record OUT_DIR [--only SUBSTRING] [--samples N]
       gpu_truth.py corpus OUT_DIR [--corpus tests/corpus]
       gpu_truth.py list
"""

import argparse
import datetime
import gzip
import hashlib
import json
import os
import platform
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
    pass


def check(result):
    """cuda-bindings returns (CUresult, values...): the values, or DriverError."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise DriverError(name.decode() if isinstance(name, bytes) else str(err))
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

    def launch(self, ptx, entry, grid, block, shared, args):
        """Loads `ptx` with the driver's JIT and launches `entry`. `args` in order: a numpy
        array (a device buffer initialised from it, read back into it after the launch), or
        bytes (a value passed as is). DriverError where the JIT or the launch refuses."""
        log = bytearray(1 << 16)
        opts = [cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, cu.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        try:
            module = check(cu.cuModuleLoadDataEx(ptx.encode() + b"\0", len(opts), opts, [log, len(log)]))
        except DriverError as e:
            text = bytes(log).split(b"\0")[0].decode(errors="replace")
            raise DriverError(f"{e}: {text}") from None
        buffers = []
        try:
            fn = check(cu.cuModuleGetFunction(module, entry.encode()))
            values = []
            for a in args:
                if isinstance(a, np.ndarray):
                    d = check(cu.cuMemAlloc(max(1, a.nbytes)))
                    buffers.append((d, a))
                    check(cu.cuMemcpyHtoD(d, a.ctypes.data, a.nbytes))
                    values.append(np.array([int(d)], dtype=np.uint64))
                else:
                    values.append(np.frombuffer(bytes(a) + b"\0" * 8, dtype=np.uint8).copy())
            # kernelParams: an array of pointers to each argument's value.
            params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
            check(cu.cuLaunchKernel(fn, *grid, *block, shared, 0, params.ctypes.data, 0))
            check(cu.cuCtxSynchronize())
            for d, a in buffers:
                check(cu.cuMemcpyDtoH(a.ctypes.data, d, a.nbytes))
        finally:
            for d, _ in buffers:
                cu.cuMemFree(d)
            cu.cuModuleUnload(module)

    def run(self, form):
        """The form's output bytes, or DriverError (a PTX the JIT refused, a launch error)."""
        out = np.zeros(form.threads * form.out_items, dtype=form.out_dtype)
        ins = [x.copy() for x in form.inputs]
        n = np.uint32(form.threads).tobytes()
        blocks = (form.threads + form.block - 1) // form.block
        self.launch(form.ptx, "k", (blocks, 1, 1), (form.block, 1, 1), 0, ins + [out, n])
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


DTYPES = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64, "i32": np.uint32,
          "u32": np.uint32, "i16": np.uint16, "u16": np.uint16, "i8": np.uint8, "u8": np.uint8,
          "i64": np.uint64, "u64": np.uint64}


# Exponent-all-ones pattern and magnitude mask of each float dtype.
FLOATS = {"f16": (0x7C00, 0x7FFF), "bf16": (0x7F80, 0x7FFF), "f32": (0x7F800000, 0x7FFFFFFF),
          "f64": (0x7FF0000000000000, 0x7FFFFFFFFFFFFFFF)}


def check_allows(param, expected, got):
    """Whether the corpus check of `param` accepts `got` for `expected` (bits): an approximate
    check always (its tolerance needs the exact values: reported, not judged here), any NaN
    for any NaN with `nan: any`, either zero with `zero_sign: any`."""
    check = param.get("check", {})
    if check.get("mode") == "approx":
        return True
    if param["dtype"] not in FLOATS:
        return False
    inf, mag = FLOATS[param["dtype"]]
    if check.get("nan") == "any" and expected & mag > inf and got & mag > inf:
        return True
    return check.get("zero_sign") == "any" and expected & mag == 0 and got & mag == 0


def corpus(args):
    """Runs tests/corpus's kernels; writes their outputs and where they differ from the
    expected files."""
    gpu = Gpu()
    report = {"machine": gpu.facts(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "kernels": {}}
    for name in sorted(os.listdir(args.corpus)):
        folder = os.path.join(args.corpus, name)
        spec_path = os.path.join(folder, "launch.json")
        if not os.path.exists(spec_path):
            continue
        spec = json.load(open(spec_path))
        host = []
        for p in spec["params"]:
            kind = p["kind"]
            if kind in ("input", "inout"):
                data = open(os.path.join(folder, p["file"]), "rb").read()
                host.append(np.frombuffer(data, dtype=np.uint8).copy())
            elif kind == "output":
                host.append(np.zeros(p["count"] * np.dtype(DTYPES[p["dtype"]]).itemsize, dtype=np.uint8))
            elif kind == "scalar":
                host.append(bytes.fromhex(p["bytes_hex"]))
            else:  # null_ptr
                host.append(bytes(8))
        entry = {}
        try:
            ptx = open(os.path.join(folder, spec["ptx"])).read()
            gpu.launch(ptx, spec["entry"], spec["grid"], spec["block"], spec["dynamic_shared_bytes"], host)
        except DriverError as e:
            report["kernels"][name] = {"error": str(e)}
            print(f"{name}: error: {e}", flush=True)
            continue
        os.makedirs(os.path.join(args.out, name), exist_ok=True)
        for p, h in zip(spec["params"], host):
            if "expected" not in p:
                continue
            got = bytes(h)
            open(os.path.join(args.out, name, f"got_{p['name']}.bin"), "wb").write(got)
            expected = open(os.path.join(folder, p["expected"]), "rb").read()
            dt = DTYPES[p["dtype"]]
            g, e = np.frombuffer(got, dtype=dt), np.frombuffer(expected, dtype=dt)
            differ = np.flatnonzero(g != e)
            beyond = [i for i in differ if not check_allows(p, int(e[i]), int(g[i]))]
            entry[p["name"]] = {
                "check": p.get("check"),
                "bitwise_differences": int(differ.size),
                "beyond_check": len(beyond),
                "first": [[int(i), hex(int(e[i])), hex(int(g[i]))] for i in (beyond or list(differ))[:8]],
            }
        report["kernels"][name] = entry
        diffs = sum(v["bitwise_differences"] for v in entry.values())
        beyond = sum(v["beyond_check"] for v in entry.values())
        print(f"{name}: {diffs} output items differ bitwise from the expected files, {beyond} beyond "
              "what their check allows", flush=True)
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
    c = sub.add_parser("corpus", help="run tests/corpus's kernels and report differences from the expected files")
    c.add_argument("out")
    c.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/corpus"))
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
