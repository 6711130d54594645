# Generates the Triton tutorial kernels of tests/compilers/tr_*: kernel.ptx, launch.json,
# in_*.bin and expected_*.bin in OUTDIR, compiled offline for the folder's target with
# Triton's defaults (num_warps=4, num_stages=3).
# Usage: python triton_gen.py FOLDER OUTDIR   (FOLDER: one of CASES below)
# Needs Triton 3.9.0 from PyPI and numpy; no GPU, no torch. Expected values come from numpy.
import json, os, sys
import numpy as np
import triton, triton.language as tl
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
           stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Tutorial 03: program ids in grouped ordering for L2 reuse.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def attention(q_ptr, k_ptr, v_ptr, o_ptr, N_CTX, sm_scale,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Tutorial 06's forward pass for one head (no causal mask): online softmax in base 2.
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptr + (start_n + offs_n)[None, :] * HEAD_DIM + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptr + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16))


NUM_WARPS, NUM_STAGES = 4, 3   # Triton's defaults
folder, out = sys.argv[1], sys.argv[2]
arch = int(folder.rsplit('_sm', 1)[1])
os.makedirs(out, exist_ok=True)


def i32(name, v):
    return {'name': name, 'kind': 'scalar', 'dtype': 'i32', 'value': v,
            'bytes_hex': int(v).to_bytes(4, 'little', signed=True).hex()}


def e4m3(x):
    """The e4m3 bytes of values it holds exactly (sign, 4 exponent bits biased by 7, 3 bits)."""
    out = np.zeros(x.shape, np.uint8)
    for i, v in np.ndenumerate(x):
        sign, v = (0x80, -v) if v < 0 else (0, v)
        if v == 0:
            out[i] = sign
            continue
        e = int(np.floor(np.log2(v)))
        if e < -6:
            m = v / 2.0 ** -9
            assert m == int(m)
            out[i] = sign | int(m)
            continue
        m = (v / 2.0 ** e - 1) * 8
        assert m == int(m) and -6 <= e <= 8, v
        out[i] = sign | (e + 7) << 3 | int(m)
    return out


def written(name, x, dtype):
    """An input buffer of `x` (exactly representable) in `dtype`."""
    if dtype == 'f16':
        assert np.array_equal(x.astype(np.float16).astype(np.float64), x)
        data = x.astype('<f2').tobytes()
    elif dtype == 'bf16':
        bits = x.astype('<f4').view('<u4')
        assert np.all(bits & 0xFFFF == 0)
        data = (bits >> 16).astype('<u2').tobytes()
    else:
        data = e4m3(x).tobytes()
    open(os.path.join(out, f'in_{name}.bin'), 'wb').write(data)
    return {'name': name, 'kind': 'input', 'dtype': {'fp8': 'u8'}.get(dtype, dtype),
            'count': x.size, 'file': f'in_{name}.bin'}


scratch = [{'name': 'global_scratch', 'kind': 'null_ptr', 'dtype': 'u64', 'value': 0},
           {'name': 'profile_scratch', 'kind': 'null_ptr', 'dtype': 'u64', 'value': 0}]
kernel_ops = []   # instructions the compiled PTX must contain

if folder.startswith('tr_matmul'):
    dtype = {'tr_matmul_sm80': 'f16'}.get(folder) or folder.split('_')[2]
    triton_type = {'f16': 'fp16', 'bf16': 'bf16', 'fp8': 'fp8e4nv'}[dtype]
    if arch == 80:
        M, N, K, BM, BN, BK = 192, 128, 160, 64, 64, 32
        kernel_ops = ['cp.async.cg.shared.global', 'cp.async.wait_group', 'mma.sync.aligned']
    else:
        # Two m64 wgmma per K step (BM = 128 over one warpgroup); B is N-major (imm-trans-b
        # 1) for f16 and bf16, transposed into K-major tiles for fp8.
        M, N, K, BM, BN, BK = 256, 192, 320, 128, 64, 64
        kernel_ops = ['cp.async.cg.shared.global', 'wgmma.mma_async.sync.aligned',
                      'wgmma.wait_group.sync.aligned', 'fence.proxy.async']
    GM = 8
    fn = matmul
    signature = {'a_ptr': '*' + triton_type, 'b_ptr': '*' + triton_type, 'c_ptr': '*fp16',
                 'M': 'i32', 'N': 'i32', 'K': 'i32', 'stride_am': 'i32',
                 'stride_ak': 'constexpr', 'stride_bk': 'i32', 'stride_bn': 'constexpr',
                 'stride_cm': 'i32', 'stride_cn': 'constexpr', 'BLOCK_M': 'constexpr',
                 'BLOCK_N': 'constexpr', 'BLOCK_K': 'constexpr', 'GROUP_M': 'constexpr'}
    constexprs = {'stride_ak': 1, 'stride_bn': 1, 'stride_cn': 1,
                  'BLOCK_M': BM, 'BLOCK_N': BN, 'BLOCK_K': BK, 'GROUP_M': GM}
    div16 = ['a_ptr', 'b_ptr', 'c_ptr', 'M', 'N', 'K', 'stride_am', 'stride_bk', 'stride_cm']
    rng = np.random.default_rng(20261124)
    # Multiples of 1/4 in [-2, 2] (exact in f16, bf16 and e4m3): products are multiples of
    # 1/16, every partial sum is exact in f32 (|s| <= K * 4), and C is a multiple of 1/16
    # below 2^11: exact in f16 too.
    A = rng.integers(-8, 9, size=(M, K)).astype(np.float64) / 4
    B = rng.integers(-8, 9, size=(K, N)).astype(np.float64) / 4
    C = A @ B
    assert np.array_equal(C.astype(np.float16).astype(np.float64), C)
    params = [written('a_ptr', A, dtype), written('b_ptr', B, dtype),
              {'name': 'c_ptr', 'kind': 'output', 'dtype': 'f16', 'count': M * N,
               'expected': 'expected_c_ptr.bin', 'check': {'mode': 'exact'}},
              i32('M', M), i32('N', N), i32('K', K), i32('stride_am', K), i32('stride_bk', N),
              i32('stride_cm', N)] + scratch
    open(os.path.join(out, 'expected_c_ptr.bin'), 'wb').write(C.astype('<f2').tobytes())
    grid = [triton.cdiv(M, BM) * triton.cdiv(N, BN), 1, 1]
    notes = (f'Tutorial 03 matmul with grouped ordering (GROUP_M={GM}), {dtype} in, f16 out, '
             f'{BM}x{BN}x{BK} tiles, M,N,K = {M},{N},{K}; num_stages=3 pipelines the K loop '
             f'with cp.async. Inputs are multiples of 1/4 in [-2, 2]: every product and partial '
             f'sum is exact, so C is exact whatever the order.')
elif folder.startswith('tr_attention'):
    N_CTX, D, BM, BN = 128, 64, 64, 32
    kernel_ops = ['cp.async.cg.shared.global']
    fn = attention
    signature = {'q_ptr': '*fp16', 'k_ptr': '*fp16', 'v_ptr': '*fp16', 'o_ptr': '*fp16',
                 'N_CTX': 'i32', 'sm_scale': 'fp32', 'HEAD_DIM': 'constexpr',
                 'BLOCK_M': 'constexpr', 'BLOCK_N': 'constexpr'}
    constexprs = {'HEAD_DIM': D, 'BLOCK_M': BM, 'BLOCK_N': BN}
    div16 = ['q_ptr', 'k_ptr', 'v_ptr', 'o_ptr', 'N_CTX']
    rng = np.random.default_rng(20261125)
    Q, Kt, V = (rng.integers(-16, 17, size=(N_CTX, D)).astype(np.float64) / 16 for _ in range(3))
    scale = 0.125
    S = (Q @ Kt.T) * scale
    P = np.exp(S - S.max(axis=1, keepdims=True))
    O = (P / P.sum(axis=1, keepdims=True)) @ V
    params = [written('q_ptr', Q, 'f16'), written('k_ptr', Kt, 'f16'),
              written('v_ptr', V, 'f16'),
              {'name': 'o_ptr', 'kind': 'output', 'dtype': 'f16', 'count': N_CTX * D,
               'expected': 'expected_o_ptr.bin',
               'check': {'mode': 'approx', 'atol': 3e-4, 'rtol': 2e-3}},
              i32('N_CTX', N_CTX),
              {'name': 'sm_scale', 'kind': 'scalar', 'dtype': 'f32', 'value': scale,
               'bytes_hex': np.float32(scale).tobytes().hex()}] + scratch
    open(os.path.join(out, 'expected_o_ptr.bin'), 'wb').write(O.astype('<f2').tobytes())
    grid = [N_CTX // BM, 1, 1]
    notes = (f'Tutorial 06 fused attention forward for one head, no causal mask, N_CTX={N_CTX}, '
             f'HEAD_DIM={D}, {BM}x{BN} blocks; num_stages=3 pipelines the K/V loads with cp.async. '
             f'P is rounded to f16 before the second dot and exp2 is ex2.approx: the expected '
             f'output is numpy softmax(QK^T*scale)V in float64, checked within atol 3e-4, rtol 2e-3 (ptxjit: 1 f16 ulp at most).')
else:
    sys.exit(f'unknown folder {folder}')

attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in div16}
k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs),
                   target=GPUTarget('cuda', arch, 32),
                   options={'num_warps': NUM_WARPS, 'num_stages': NUM_STAGES})
ptx = k.asm['ptx']
ptx = ptx.replace('"' + os.path.abspath(__file__) + '"', '"triton_gen.py"')
ptx = ptx.replace('"' + os.path.dirname(triton.__file__) + '/', '"triton/')
missing = [op for op in kernel_ops if op not in ptx]
assert not missing, missing
open(os.path.join(out, 'kernel.ptx'), 'w').write(ptx)
launch = {
    'name': folder, 'ptx': 'kernel.ptx', 'entry': fn.__name__, 'grid': grid,
    'block': [32 * NUM_WARPS, 1, 1], 'dynamic_shared_bytes': k.metadata.shared,
    'params': params,
    'generator': f'Triton {triton.__version__} (PyPI triton), triton.compile(ASTSource, '
                 f'GPUTarget("cuda", {arch}, 32)), num_warps={NUM_WARPS}, '
                 f'num_stages={NUM_STAGES}; see ../triton_gen.py',
    'notes': notes,
}
json.dump(launch, open(os.path.join(out, 'launch.json'), 'w'), indent=1)
open(os.path.join(out, 'README.md'), 'w').write(f'''# {folder}

{notes}

Produced with Triton {triton.__version__} (PyPI `triton`, no GPU, no torch) and numpy, at
Triton's defaults `num_warps={NUM_WARPS}`, `num_stages={NUM_STAGES}`, for
`GPUTarget("cuda", {arch}, 32)`:

```
python3 -m venv /tmp/tvenv && /tmp/tvenv/bin/pip install triton==3.9.0 numpy
TRITON_DEFAULT_FP_FUSION=1 /tmp/tvenv/bin/python ../triton_gen.py {folder} OUTDIR
```

`../triton_gen.py` holds the tutorial kernels and compiles them offline with
`triton.compile(ASTSource(...))`; the only edit to the PTX shortens its `.file` paths.
Expected values come from numpy, not from a GPU or ptxjit.
''')
print(folder, 'grid', grid, 'shared', k.metadata.shared, 'ptx bytes', len(ptx))
