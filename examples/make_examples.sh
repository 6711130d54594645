#!/usr/bin/env bash
# Regenerate the bundled PTX examples from their CUDA sources.
#
# Needs nvcc (no GPU). One way to get it without a CUDA install:
#   python3 -m venv /tmp/nvenv
#   /tmp/nvenv/bin/pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-cuda-runtime nvidia-cuda-cccl
# Usage:  NVCC=/path/to/nvcc examples/make_examples.sh
# Without $NVCC, nvcc is searched for under /tmp/nvenv, then on $PATH.
# The input/expected .bin files come from make_data.py (needs numpy).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ -z "${NVCC:-}" ]]; then
    NVCC="$(find /tmp/nvenv -path '*/nvidia/cu*/bin/nvcc' -type f 2>/dev/null | head -n1 || true)"
    if [[ -z "$NVCC" ]]; then
        NVCC="$(command -v nvcc || true)"
    fi
fi
if [[ -z "$NVCC" || ! -x "$NVCC" ]]; then
    echo "nvcc not found: set NVCC=/path/to/nvcc" >&2
    exit 1
fi
bindir="$(dirname "$NVCC")"
PTXAS="${PTXAS:-$bindir/ptxas}"
# nvcc finds cuda_fp16.h by itself (the pip wheel's nvcc.profile points at
# ../include); add -I DIR via $NVCC_FLAGS if yours does not.

"$NVCC" --version
for name in h2_axpy f16_elementwise f16_scale; do
    dir="$here/$name"
    echo "== $name"
    (cd "$dir" && "$NVCC" -ptx -arch=sm_90 -O3 ${NVCC_FLAGS:-} "$name.cu" -o "$name.ptx")
    if [[ -x "$PTXAS" ]]; then
        "$PTXAS" -arch=sm_90 "$dir/$name.ptx" -o /dev/null
        echo "   ptxas ok"
    fi
done
