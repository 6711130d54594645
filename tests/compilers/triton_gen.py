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


@triton.jit
def add(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # Tutorial 01.
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@triton.jit
def softmax(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
            BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # Tutorial 02: each program takes rows start, start + programs, ...
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


@triton.jit
def dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    # Tutorial 04's seeded (low-memory) dropout: the mask is Philox of the seed and offset.
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def layer_norm(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    # Tutorial 05's fused forward pass.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


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


def philox(seed, offsets):
    """Triton's `tl.randint` (Philox 4x32, 10 rounds, counter (offset, 0, 0, 0), key = seed),
    then `uint_to_uniform_float` in f32, from triton/language/random.py."""
    M32 = 0xFFFFFFFF
    out = np.zeros(len(offsets), np.float32)
    for i, off in enumerate(offsets):
        c0, c1, c2, c3 = int(off) & M32, 0, 0, 0
        k0, k1 = seed & M32, seed >> 32 & M32
        for _ in range(10):
            _c0, _c2 = c0, c2
            c0 = ((0xCD9E8D57 * _c2) >> 32) ^ c1 ^ k0
            c2 = ((0xD2511F53 * _c0) >> 32) ^ c3 ^ k1
            c1 = 0xCD9E8D57 * _c2 & M32
            c3 = 0xD2511F53 * _c0 & M32
            k0 = (k0 + 0x9E3779B9) & M32
            k1 = (k1 + 0xBB67AE85) & M32
        x = c0 - (1 << 32) if c0 >> 31 else c0
        x = ~x if x < 0 else x
        out[i] = np.float32(x) * np.float32(4.6566127342e-10)
    return out


def f32_in(name, x):
    open(os.path.join(out, f'in_{name}.bin'), 'wb').write(x.astype('<f4').tobytes())
    return {'name': name, 'kind': 'input', 'dtype': 'f32', 'count': x.size,
            'file': f'in_{name}.bin'}


def expected(name, x, dtype, check):
    np_type = {'f16': '<f2', 'f32': '<f4'}[dtype]
    open(os.path.join(out, f'expected_{name}.bin'), 'wb').write(x.astype(np_type).tobytes())
    return {'name': name, 'kind': 'output', 'dtype': dtype, 'count': x.size,
            'expected': f'expected_{name}.bin', 'check': check}


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
    # At sm_90 the second product takes P (A) from registers.
    kernel_ops = ['cp.async.cg.shared.global', 'mma.sync.aligned' if arch == 80 else
                  'wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {']
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
             f'HEAD_DIM={D}, {BM}x{BN} blocks; num_stages=3 pipelines the K/V loads with cp.async '
             f'({"mma.sync" if arch == 80 else "wgmma, the second with P in registers"}). '
             f'P is rounded to f16 before the second dot and exp2 is ex2.approx: the expected '
             f'output is numpy softmax(QK^T*scale)V in float64, checked within atol 3e-4, rtol 2e-3 (ptxjit: 1 f16 ulp at most).')
elif folder.startswith('tr_add'):
    n, BLOCK = 5000, 1024
    fn = add
    signature = {'x_ptr': '*fp32', 'y_ptr': '*fp32', 'output_ptr': '*fp32',
                 'n_elements': 'i32', 'BLOCK_SIZE': 'constexpr'}
    constexprs = {'BLOCK_SIZE': BLOCK}
    div16 = ['x_ptr', 'y_ptr', 'output_ptr']
    rng = np.random.default_rng(20261126)
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    params = [f32_in('x_ptr', x), f32_in('y_ptr', y),
              expected('output_ptr', x + y, 'f32', {'mode': 'exact'}), i32('n_elements', n)]
    params += scratch
    grid = [triton.cdiv(n, BLOCK), 1, 1]
    notes = (f'Tutorial 01 vector add, {n} f32 elements in blocks of {BLOCK} (the last one '
             f'masked); exact (one f32 addition each, as numpy\'s float32).')
elif folder.startswith('tr_softmax'):
    rows, cols, BLOCK, programs = 37, 781, 1024, 8
    fn = softmax
    signature = {'output_ptr': '*fp32', 'input_ptr': '*fp32', 'input_row_stride': 'i32',
                 'output_row_stride': 'i32', 'n_rows': 'i32', 'n_cols': 'i32',
                 'BLOCK_SIZE': 'constexpr', 'num_stages': 'constexpr'}
    constexprs = {'BLOCK_SIZE': BLOCK, 'num_stages': NUM_STAGES}
    div16 = ['output_ptr', 'input_ptr']
    rng = np.random.default_rng(20261127)
    X = rng.standard_normal((rows, cols)).astype(np.float32)
    E = np.exp(X.astype(np.float64) - X.max(axis=1, keepdims=True))
    Y = E / E.sum(axis=1, keepdims=True)
    params = [expected('output_ptr', Y, 'f32', {'mode': 'approx', 'atol': 1e-8, 'rtol': 1e-5}),
              f32_in('input_ptr', X), i32('input_row_stride', cols),
              i32('output_row_stride', cols), i32('n_rows', rows), i32('n_cols', cols)]
    params += scratch
    grid = [programs, 1, 1]
    notes = (f'Tutorial 02 fused softmax, {rows}x{cols} f32 rows ({BLOCK}-wide blocks, masked), '
             f'{programs} programs striding over the rows with tl.range(num_stages=3). tl.exp '
             f'is ex2.approx of x·log2(e): checked within rtol 1e-5 of numpy\'s float64 softmax.')
elif folder.startswith('tr_dropout'):
    n, BLOCK, p, seed = 3000, 1024, 0.5, 123456789
    fn = dropout
    signature = {'x_ptr': '*fp32', 'output_ptr': '*fp32', 'n_elements': 'i32', 'p': 'fp32',
                 'seed': 'i32', 'BLOCK_SIZE': 'constexpr'}
    constexprs = {'BLOCK_SIZE': BLOCK}
    div16 = ['x_ptr', 'output_ptr']
    rng = np.random.default_rng(20261128)
    x = rng.standard_normal(n).astype(np.float32)
    keep = philox(seed, np.arange(n)) > np.float32(p)
    assert 0.4 < keep.mean() < 0.6
    params = [f32_in('x_ptr', x),
              expected('output_ptr', np.where(keep, x * 2, 0).astype(np.float32), 'f32',
                       {'mode': 'exact'}),
              i32('n_elements', n),
              {'name': 'p', 'kind': 'scalar', 'dtype': 'f32', 'value': p,
               'bytes_hex': np.float32(p).tobytes().hex()},
              i32('seed', seed)] + scratch
    grid = [triton.cdiv(n, BLOCK), 1, 1]
    notes = (f'Tutorial 04 seeded dropout, {n} f32 elements, p={p}, seed={seed}: tl.rand is '
             f'Philox 4x32-10 (mul.hi.u32, xor) then an int-to-float scale; the expected mask '
             f'comes from a Python Philox written from triton/language/random.py. x / (1 - p) '
             f'is 2x: exact.')
elif folder.startswith('tr_layer_norm'):
    rows, N, BLOCK, eps = 24, 1100, 512, 1e-5
    fn = layer_norm
    signature = {'X': '*fp16', 'Y': '*fp16', 'W': '*fp16', 'B': '*fp16', 'Mean': '*fp32',
                 'Rstd': '*fp32', 'stride': 'i32', 'N': 'i32', 'eps': 'fp32',
                 'BLOCK_SIZE': 'constexpr'}
    constexprs = {'BLOCK_SIZE': BLOCK}
    div16 = ['X', 'Y', 'W', 'B', 'Mean', 'Rstd']
    rng = np.random.default_rng(20261129)
    X = rng.standard_normal((rows, N)).astype(np.float16).astype(np.float64)
    W = rng.uniform(0.5, 1.5, N).astype(np.float16).astype(np.float64)
    Bias = rng.uniform(-0.5, 0.5, N).astype(np.float16).astype(np.float64)
    mean = X.mean(axis=1)
    rstd = 1 / np.sqrt(((X - mean[:, None]) ** 2).mean(axis=1) + eps)
    Y = (X - mean[:, None]) * rstd[:, None] * W + Bias
    params = [written('X', X, 'f16'),
              expected('Y', Y, 'f16', {'mode': 'approx', 'atol': 1e-3, 'rtol': 2e-3}),
              written('W', W, 'f16'), written('B', Bias, 'f16'),
              expected('Mean', mean, 'f32', {'mode': 'approx', 'atol': 1e-6, 'rtol': 1e-5}),
              expected('Rstd', rstd, 'f32', {'mode': 'approx', 'rtol': 1e-5}),
              i32('stride', N), i32('N', N),
              {'name': 'eps', 'kind': 'scalar', 'dtype': 'f32', 'value': eps,
               'bytes_hex': np.float32(eps).tobytes().hex()}] + scratch
    grid = [rows, 1, 1]
    notes = (f'Tutorial 05 fused layer norm forward, {rows} rows of {N} f16 in {BLOCK}-wide '
             f'blocks (masked tails), f32 statistics: mean, 1/sqrt(var + eps) (sqrt.approx, '
             f'div), y = x_hat·w + b rounded to f16; within 2e-3 (about one f16 ulp) of numpy in '
             f'float64.')
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
