# Generates Triton kernels that move tiles with tensor descriptors (TMA) at sm_90: kernel.ptx,
# launch.json, in_*.bin, expected_*.bin in OUTDIR.
#   device: tl.make_tensor_descriptor (tensormap.replace on shared memory,
#           tensormap.cp_fenceproxy to a global scratch slot, cp.async.bulk.tensor both ways)
#   host:   descriptors passed as kernel arguments (.param .align 64 .b8 [128], cvta.param)
# Usage: python gen.py device|host OUTDIR   (Triton 3.9.0 from PyPI, numpy; no GPU, no torch)
import json, os, sys
import numpy as np
import triton, triton.language as tl
from triton.compiler import ASTSource
from triton.backends.compiler import GPUTarget


@triton.jit
def add_device(a_ptr, b_ptr, c_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    b = tl.make_tensor_descriptor(b_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    c = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    x = a.load([pid_m * BM, pid_n * BN])
    y = b.load([pid_m * BM, pid_n * BN])
    c.store([pid_m * BM, pid_n * BN], x + y * 2)


@triton.jit
def add_host(a, b, c, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = a.load([pid_m * BM, pid_n * BN])
    y = b.load([pid_m * BM, pid_n * BN])
    c.store([pid_m * BM, pid_n * BN], x + y * 2)


which, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
NUM_WARPS = 4
# 100 x 72 f16: the 32 x 64 boxes of the last row and column of blocks cross the tensor's edge
# (loads fill zeros there, stores skip it). Rows are 144 bytes: a multiple of 16.
M, N, BM, BN = 100, 72, 32, 64
rng = np.random.default_rng(20261124)
# Multiples of 1/8 in [-4, 4]: x + 2y is exact in f16.
A = rng.integers(-32, 33, size=(M, N)).astype(np.float64) / 8
B = rng.integers(-32, 33, size=(M, N)).astype(np.float64) / 8
C = A + 2 * B
assert np.array_equal(C.astype(np.float16).astype(np.float64), C)
grid = [triton.cdiv(M, BM), triton.cdiv(N, BN), 1]


def buffer(name, x, argument=True):
    open(os.path.join(out, f'in_{name}.bin'), 'wb').write(x.astype('<f2').tobytes())
    p = {'name': name, 'kind': 'input', 'dtype': 'f16', 'count': x.size, 'file': f'in_{name}.bin'}
    if not argument:
        p['argument'] = False
    return p


def output(name, argument=True):
    open(os.path.join(out, f'expected_{name}.bin'), 'wb').write(C.astype('<f2').tobytes())
    p = {'name': name, 'kind': 'output', 'dtype': 'f16', 'count': M * N,
         'expected': f'expected_{name}.bin', 'check': {'mode': 'exact'}}
    if not argument:
        p['argument'] = False
    return p


def scalar(name, dtype, v):
    width = {'i32': 4, 'i64': 8}[dtype]
    return {'name': name, 'kind': 'scalar', 'dtype': dtype, 'value': v,
            'bytes_hex': int(v).to_bytes(width, 'little', signed=True).hex()}


if which == 'device':
    fn = add_device
    signature = {'a_ptr': '*fp16', 'b_ptr': '*fp16', 'c_ptr': '*fp16', 'M': 'i32', 'N': 'i32',
                 'BM': 'constexpr', 'BN': 'constexpr'}
    attrs = {(i,): [['tt.divisibility', 16]] for i in range(3)}
    params = None   # set once the scratch size is known
else:
    fn = add_host
    desc = f'tensordesc<fp16[{BM}, {BN}]>'
    signature = {'a': desc, 'b': desc, 'c': desc, 'BM': 'constexpr', 'BN': 'constexpr'}
    attrs = {}
k = triton.compile(ASTSource(fn=fn, signature=signature, constexprs={'BM': BM, 'BN': BN},
                             attrs=attrs),
                   target=GPUTarget('cuda', 90, 32), options={'num_warps': NUM_WARPS})
programs = grid[0] * grid[1]
scratch = [{'name': 'global_scratch', 'kind': 'output', 'dtype': 'u8',
            'count': max(1, k.metadata.global_scratch_size * programs)},
           {'name': 'profile_scratch', 'kind': 'null_ptr', 'dtype': 'u64', 'value': 0}]
if which == 'device':
    params = [buffer('a_ptr', A), buffer('b_ptr', B), output('c_ptr'),
              scalar('M', 'i32', M), scalar('N', 'i32', N)] + scratch
    notes = ('tl.make_tensor_descriptor: lane 0 builds each map in zeroed shared memory with '
             'tensormap.replace (address, rank, box, dims, stride, element strides, elemtype, '
             '128B swizzle), tensormap.cp_fenceproxy copies it to the program\'s 256-byte '
             'global scratch slot; cp.async.bulk.tensor.2d loads complete on an mbarrier, the '
             'result leaves by a bulk_group store. ')
else:
    meta = k.metadata.tensordesc_meta
    assert all(m['swizzle'] == 3 and m['elem_type'] == 6 for m in meta), meta
    params = []
    for name, x in (('a', A), ('b', B), ('c', None)):
        params.append(buffer(name, x, argument=False) if x is not None
                      else output(name, argument=False))
        # Triton's launcher encodes each descriptor with cuTensorMapEncodeTiled from its
        # metadata (swizzle 3 = 128B, f16) and passes the shape and strides after it.
        params.append({'name': f'{name}_desc', 'kind': 'tensormap', 'buffer': name,
                       'dtype': 'f16', 'dims': [N, M], 'box': [BN, BM], 'swizzle': '128B'})
        params += [scalar(f'{name}_M', 'i32', M), scalar(f'{name}_N', 'i32', N),
                   scalar(f'{name}_stride0', 'i64', N), scalar(f'{name}_stride1', 'i64', 1)]
    params += scratch
    notes = ('Host-side descriptors: three .param .align 64 .b8 [128] tensor maps reached '
             'through mov.b32 + cvta.param, 128B-swizzled boxes. ')
notes += (f'{M}x{N} f16, {BM}x{BN} boxes: the last row and column of blocks cross the '
          f'tensor\'s edge. c = a + 2b, exact.')
ptx = k.asm['ptx']
ptx = ptx.replace('"' + os.path.abspath(__file__) + '"', '"gen.py"')
ptx = ptx.replace('"' + os.path.dirname(triton.__file__) + '/', '"triton/')
assert 'cp.async.bulk.tensor.2d' in ptx
assert which != 'device' or 'tensormap.replace' in ptx
open(os.path.join(out, 'kernel.ptx'), 'w').write(ptx)
launch = {
    'name': f'tr_tma_{which}_sm90', 'ptx': 'kernel.ptx', 'entry': fn.__name__, 'grid': grid,
    'block': [32 * NUM_WARPS, 1, 1], 'dynamic_shared_bytes': k.metadata.shared,
    'params': params,
    'generator': f'Triton {triton.__version__} (PyPI triton), triton.compile(ASTSource, '
                 f'GPUTarget("cuda", 90, 32)), num_warps={NUM_WARPS}; see gen.py',
    'notes': notes,
}
json.dump(launch, open(os.path.join(out, 'launch.json'), 'w'), indent=1)
print(which, 'grid', grid, 'shared', k.metadata.shared, 'scratch',
      k.metadata.global_scratch_size, 'ptx bytes', len(ptx))
