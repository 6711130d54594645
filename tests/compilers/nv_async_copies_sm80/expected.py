"""Inputs and exact expected outputs of nv_async_copies_sm80 (integers; no GPU, no ptxjit).
Run from this folder: python3 expected.py"""
import random, struct

TILE, TILES, BLOCKS = 256, 8, 4
random.seed(23)
inp = [random.randint(-10000, 10000) for _ in range(BLOCKS * TILES * TILE)]
section = []
for b in range(BLOCKS):
    for j in range(TILE):
        section.append(sum(inp[b * TILES * TILE + k * TILE + j] * (k + 1) for k in range(TILES)))
# The four variants compute the same sums, each into its own quarter.
out = section * 4

def write(name, values):
    with open(name, "wb") as fh:
        fh.write(struct.pack("<%di" % len(values), *values))

write("in_in.bin", inp)
write("expected_out.bin", out)
