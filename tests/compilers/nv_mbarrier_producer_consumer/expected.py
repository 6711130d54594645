"""Inputs and exact expected outputs of nv_mbarrier_producer_consumer (integers; no GPU, no
ptxjit). Run from this folder: python3 expected.py"""
import random, struct

CHUNK, CHUNKS, BLOCKS = 128, 10, 3
random.seed(31)
inp = [random.randint(-100000, 100000) for _ in range(BLOCKS * CHUNKS * CHUNK)]
out = []
for b in range(BLOCKS):
    for t in range(CHUNK):
        out.append(sum(inp[(b * CHUNKS + c) * CHUNK + t] * (c + 1) - (c & 3) for c in range(CHUNKS)))

def write(name, values):
    with open(name, "wb") as fh:
        fh.write(struct.pack("<%di" % len(values), *values))

write("in_in.bin", inp)
write("expected_out.bin", out)
