#!/usr/bin/env bash
# The compiler-emitted cooperative kernels of tests/corpus and tests/compilers (barriers,
# warp shuffles, ldmatrix, mma) at sizes that run for a while: `ptxjit run --repeat R` of
# each, printing the first launch (compile included) and the fastest of the others. Inputs
# are zeros (timing only: the tests check these kernels' bits on their own inputs).
#
# usage: tools/cooperative_kernels.sh [PTXJIT_BINARY]   (default: target/release/ptxjit)
# environment: R (launches per kernel, default 6)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/target/release/ptxjit}
R=${R:-6}
c=$root/tests/compilers
k=$root/tests/corpus
run() {
  local name=$1
  shift
  printf '%-10s ' "$name"
  "$bin" run "$@" --repeat "$R" 2>&1 | tail -1 | grep -o 'first launch [0-9.]* [mµ]*s\|min [0-9.]* [mµ]*s' | tr '\n' ' '
  echo
}
# nvcc: a dot product (shfl.down + bar.sync), a block reduction, a 16 x 16 tiled matmul.
run dot $k/nv_dot_f16/kernel.ptx --grid 2048 --block 256 --arg zeros:2097152 --arg zeros:2097152 --arg zeros:8192 --arg s32:524288
run blockred $c/nv_block_reduce_f16/kernel.ptx --grid 2048 --block 256 --arg zeros:2097152 --arg zeros:65536 --arg zeros:65536 --arg s32:1048576
run matmul $c/nv_tiled_matmul_f16/kernel.ptx --grid 32,32 --block 16,16 --arg zeros:524288 --arg zeros:524288 --arg zeros:524288 --arg zeros:1048576 --arg s32:512 --arg s32:512 --arg s32:512
# Triton: softmax (4096 rows of 781), layer norm (4096 rows of 1100).
run softmax $c/tr_softmax_sm80/kernel.ptx --grid 64 --block 128 --shared-bytes 8208 --arg zeros:12795904 --arg zeros:12795904 --arg s32:781 --arg s32:781 --arg s32:4096 --arg s32:781 --arg u64:0 --arg u64:0
run layernorm $c/tr_layer_norm_sm80/kernel.ptx --grid 4096 --block 128 --shared-bytes 1024 --arg zeros:9011200 --arg zeros:9011200 --arg zeros:2200 --arg zeros:2200 --arg zeros:16384 --arg zeros:16384 --arg s32:1100 --arg s32:1100 --arg f32:1e-5 --arg u64:0 --arg u64:0
# mma.m16n8k16: Triton's matmul 512^3, nvcc's hand-written gemm 512^3, Triton's attention
# (N_CTX 1024).
run trmatmul $c/tr_matmul_sm80/kernel.ptx --grid 64 --block 128 --shared-bytes 16384 --arg zeros:524288 --arg zeros:524288 --arg zeros:524288 --arg s32:512 --arg s32:512 --arg s32:512 --arg s32:512 --arg s32:512 --arg s32:512 --arg u64:0 --arg u64:0
run nvgemm $c/nv_gemm_mma_sm80/kernel.ptx --grid 8,8 --block 128 --arg zeros:524288 --arg zeros:524288 --arg zeros:1048576 --arg s32:512 --arg s32:512 --arg s32:512
run attention $c/tr_attention_sm80/kernel.ptx --grid 16 --block 128 --shared-bytes 24576 --arg zeros:131072 --arg zeros:131072 --arg zeros:131072 --arg zeros:131072 --arg s32:1024 --arg f32:0.125 --arg u64:0 --arg u64:0
