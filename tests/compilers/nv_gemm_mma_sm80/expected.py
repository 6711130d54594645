"""Inputs and exact expected outputs of nv_gemm_mma_sm80: A (128 x 96) and B (96 x 128) of
multiples of 1/4 in [-2, 2], exact in f16; every product and partial sum is then exact in f32,
so C = A·B is exact whatever the order. Python integers and fractions of 16; no GPU, no
ptxjit. Run from this folder: python3 expected.py"""
import random, struct

M, N, K = 128, 128, 96
random.seed(80)
A = [[random.randint(-8, 8) for _ in range(K)] for _ in range(M)]   # quarters
B = [[random.randint(-8, 8) for _ in range(N)] for _ in range(K)]


def half_bits(q):
    """f16 bits of q/4 (|q| <= 8)."""
    return struct.unpack("<H", struct.pack("<e", q / 4))[0]


with open("in_A.bin", "wb") as f:
    f.write(struct.pack("<%dH" % (M * K), *(half_bits(x) for row in A for x in row)))
with open("in_B.bin", "wb") as f:
    f.write(struct.pack("<%dH" % (K * N), *(half_bits(x) for row in B for x in row)))
C = [sum(A[i][k] * B[k][j] for k in range(K)) / 16 for i in range(M) for j in range(N)]
with open("expected_C.bin", "wb") as f:
    f.write(struct.pack("<%df" % len(C), *C))
