"""Inputs and exact expected outputs of nv_func_pointers: Python floats. Every value is a
multiple of 1/8 below 2^10, so each f32 sum, difference, product and maximum is exact and
the result is the same in f32 as in Python. No GPU, no ptxjit.
Run from this folder: python3 expected.py"""
import random, struct

N = 200
random.seed(17)
a = [random.randint(-4000, 4000) / 8 for _ in range(N)]
b = [random.randint(-4000, 4000) / 8 for _ in range(N)]
which = [random.randint(0, 7) for _ in range(N)]
table = [lambda x, y: x + y, lambda x, y: x * y, max, lambda x, y: x - y]
out = []
for x, y, w in zip(a, b, which):
    f = table[w & 3](x, y)
    out.append(f - 1 if w & 4 else f + 1)

def write(name, fmt, values):
    with open(name, "wb") as fh:
        fh.write(struct.pack("<%d%s" % (len(values), fmt), *values))

write("in_a.bin", "f", a)
write("in_b.bin", "f", b)
write("in_which.bin", "i", which)
write("expected_out.bin", "f", out)
