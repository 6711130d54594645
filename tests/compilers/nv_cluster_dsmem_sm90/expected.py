"""Inputs and exact expected outputs of nv_cluster_dsmem_sm90 (integers; no GPU, no ptxjit).
Run from this folder: python3 expected.py"""
import random, struct

CLUSTERS, PER_CLUSTER, BINS, BLOCKS = 2, 3000, 256, 4
SLICE = BINS // BLOCKS
random.seed(90)
inp = [random.randint(-2**31, 2**31 - 1) for _ in range(CLUSTERS * PER_CLUSTER)]
hist, ring = [], []
for c in range(CLUSTERS):
    h = [0] * BINS
    for v in inp[c * PER_CLUSTER:(c + 1) * PER_CLUSTER]:
        h[v & (BINS - 1)] += 1
    hist += h
    for rank in range(BLOCKS):
        right = (rank + 1) % BLOCKS
        ring += [h[right * SLICE + i] * 1000 + h[rank * SLICE + i] for i in range(SLICE)]

def write(name, fmt, values):
    with open(name, "wb") as fh:
        fh.write(struct.pack("<%d%s" % (len(values), fmt), *values))

write("in_in.bin", "i", inp)
write("expected_hist.bin", "I", hist)
write("expected_ring.bin", "I", ring)
