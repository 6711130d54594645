"""Calls ptxjit's `ptx_run` through ctypes exactly as tinygrad's mock GPU does
(test/mockgpu/helpers.py binds it; cuda/cuda.py and nv/nvgpu.py call it): the PTX as a
NUL-terminated bytes object, a `(c_void_p * n)(*values)` array whose entries are the argument
values themselves (host addresses and integers), block dimensions before grid dimensions,
shared bytes last. Standard library only.

usage: python3 ptx_run_ctypes.py PATH/TO/libptxjit_capi.so
Prints one line per case and 'N passed, N failed' last; exits non-zero on a failure.
"""
import ctypes, os, subprocess, sys

# out[b*T + t] = inp[b*T + (T-1-t)] + k: each block reverses its T values through dynamic
# shared memory. T = ntid.x*ntid.y, so swapped block and grid dimensions give other results.
REVERSE_ADD = b"""
.version 7.5
.target sm_35
.address_size 64
.extern .shared .align 4 .b8 smem[];
.visible .entry reverse_add(.param .u64 out, .param .u64 inp, .param .s32 k)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  ld.param.s32 %r1, [k];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %tid.y;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %ntid.y;
  mad.lo.u32 %r6, %r3, %r4, %r2;
  mul.lo.u32 %r7, %r4, %r5;
  mov.u32 %r8, %ctaid.x;
  mad.lo.u32 %r9, %r8, %r7, %r6;
  mul.wide.u32 %rd3, %r9, 4;
  add.u64 %rd4, %rd2, %rd3;
  ld.global.u32 %r10, [%rd4];
  mov.u32 %r11, smem;
  shl.b32 %r12, %r6, 2;
  add.u32 %r13, %r11, %r12;
  st.shared.u32 [%r13], %r10;
  bar.sync 0;
  sub.u32 %r14, %r7, 1;
  sub.u32 %r15, %r14, %r6;
  shl.b32 %r16, %r15, 2;
  add.u32 %r17, %r11, %r16;
  ld.shared.u32 %r18, [%r17];
  add.s32 %r19, %r18, %r1;
  add.u64 %rd5, %rd1, %rd3;
  st.global.u32 [%rd5], %r19;
  ret;
}
"""

def bind(path):
    lib = ctypes.CDLL(path)
    fn = lib.ptx_run
    fn.restype = None
    fn.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)] + [ctypes.c_int] * 7
    return fn

def launch(ptx_run, source, values, block, grid, shared):
    # tinygrad: ctypes.cast(value, c_void_p) for each value, then (c_void_p*n)(*cargs).
    cargs = [ctypes.cast(v, ctypes.c_void_p) for v in values]
    ptx_run(source, len(cargs), (ctypes.c_void_p * len(cargs))(*cargs), *block, *grid, shared)

def case_values_are_the_arguments_block_before_grid_shared_last(ptx_run):
    block, grid = (8, 4, 1), (3, 1, 1)
    T, n = 32, 96
    inp = (ctypes.c_int32 * n)(*[i * 7 - 50 for i in range(n)])
    # The mock allocates buffers as memoryviews of bytearrays and passes their addresses.
    out_mem = memoryview(bytearray(4 * n))
    out_addr = ctypes.addressof(ctypes.c_char.from_buffer(out_mem))
    k = -5
    for _ in range(2):  # the second launch reuses the compiled module
        launch(ptx_run, REVERSE_ADD, [out_addr, ctypes.addressof(inp), k], block, grid, 4 * T)
    out = list(out_mem.cast("i"))
    want = [inp[b * T + (T - 1 - t)] + k for b in range(3) for t in range(T)]
    assert out == want, f"got {out[:8]}..., want {want[:8]}..."

def case_ptx_text_from_a_bytearray_like_the_mock(ptx_run):
    # cuModuleLoadData keeps the image as memoryview(bytearray(image)); cuLaunchKernel passes
    # ctypes.cast(address, c_char_p). A bytearray keeps a NUL after its bytes.
    image = memoryview(bytearray(REVERSE_ADD))
    source = ctypes.cast(ctypes.addressof(ctypes.c_char.from_buffer(image)), ctypes.c_char_p)
    inp = (ctypes.c_int32 * 4)(1, 2, 3, 4)
    out = (ctypes.c_int32 * 4)()
    launch(ptx_run, source, [ctypes.addressof(out), ctypes.addressof(inp), 10], (4, 1, 1), (1, 1, 1), 16)
    assert list(out) == [14, 13, 12, 11], list(out)

def case_an_error_aborts_with_one_line_naming_kernel_location_and_reason(ptx_run):
    bad = REVERSE_ADD.replace(b"bar.sync 0;", b"bogus.op.u32 %r1, %r2;")
    child = (
        "import ctypes, sys; sys.path.insert(0, %r); import ptx_run_ctypes as t; "
        "f = t.bind(%r); t.launch(f, %r, [0, 0, 1], (4, 1, 1), (1, 1, 1), 16)"
    ) % (os.path.dirname(os.path.abspath(__file__)), LIB, bad)
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert r.returncode == -6, f"exit {r.returncode}, stderr {r.stderr!r}"
    lines = [l for l in r.stderr.splitlines() if l.startswith("ptx_run:")]
    assert len(lines) == 1, r.stderr
    line, where = lines[0], bad.decode().splitlines().index("  bogus.op.u32 %r1, %r2;") + 1
    for part in ("kernel 'reverse_add'", f"reverse_add.ptx:{where}:3", "unsupported instruction 'bogus.op.u32'"):
        assert part in line, f"{part!r} not in {line!r}"

def case_a_wrong_argument_count_aborts_naming_the_kernel(ptx_run):
    child = (
        "import sys; sys.path.insert(0, %r); import ptx_run_ctypes as t; "
        "f = t.bind(%r); t.launch(f, t.REVERSE_ADD, [0, 0], (4, 1, 1), (1, 1, 1), 16)"
    ) % (os.path.dirname(os.path.abspath(__file__)), LIB)
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert r.returncode == -6, f"exit {r.returncode}, stderr {r.stderr!r}"
    assert "kernel 'reverse_add': takes 3 arguments, ptx_run got 2" in r.stderr, r.stderr

def case_ptxjit_stats_reports_compiles_and_launches_at_exit(ptx_run):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats")
        child = (
            "import ctypes, sys; sys.path.insert(0, %r); import ptx_run_ctypes as t; "
            "f = t.bind(%r); out = (ctypes.c_int32 * 4)(); inp = (ctypes.c_int32 * 4)(); "
            "[t.launch(f, t.REVERSE_ADD, [ctypes.addressof(out), ctypes.addressof(inp), 0], "
            "(4, 1, 1), (1, 1, 1), 16) for _ in range(3)]"
        ) % (os.path.dirname(os.path.abspath(__file__)), LIB)
        r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                           env={**os.environ, "PTXJIT_STATS": stats})
        assert r.returncode == 0, r.stderr
        with open(stats) as f:
            lines = f.read().splitlines()
    assert len(lines) == 1, lines
    fields = dict(kv.split("=") for kv in lines[0].split())
    assert fields["compiles"] == "1" and fields["launches"] == "3", lines[0]
    assert float(fields["launch_s"]) > 0, lines[0]

def main():
    global LIB
    LIB = os.path.abspath(sys.argv[1])
    ptx_run = bind(LIB)
    cases = [(k, v) for k, v in globals().items() if k.startswith("case_")]
    failed = 0
    for name, case in cases:
        try:
            case(ptx_run)
            print(f"ok   {name[5:]}")
        except AssertionError as e:
            failed += 1
            print(f"FAIL {name[5:]}: {e}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)

if __name__ == "__main__":
    main()
