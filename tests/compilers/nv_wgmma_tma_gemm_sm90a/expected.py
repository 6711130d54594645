"""Inputs and exact expected outputs of nv_wgmma_tma_gemm_sm90a: A (M x K) and Bt (N x K, B
given K-major) of multiples of 1/4 in [-2, 2], exact in f16; every product and partial sum is
exact in f32, so C = A·Bt^T is exact whatever the order. No GPU, no ptxjit.
Run from this folder: python3 expected.py"""
import random, struct

M, N, K = 128, 128, 192
random.seed(90)
A = [[random.randint(-8, 8) for _ in range(K)] for _ in range(M)]   # quarters
Bt = [[random.randint(-8, 8) for _ in range(K)] for _ in range(N)]


def halves(rows):
    return struct.pack("<%de" % sum(len(r) for r in rows), *(x / 4 for r in rows for x in r))


open("in_A.bin", "wb").write(halves(A))
open("in_Bt.bin", "wb").write(halves(Bt))
C = [sum(A[i][k] * Bt[j][k] for k in range(K)) / 16 for i in range(M) for j in range(N)]
open("expected_C.bin", "wb").write(struct.pack("<%df" % len(C), *C))
