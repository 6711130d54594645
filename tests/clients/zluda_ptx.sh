#!/usr/bin/env bash
# ZLUDA's PTX execution tests (182 kernels with inputs and outputs validated on NVIDIA GPUs,
# plus compile-only ones) through ptxjit's libcuda.so.1, as ZLUDA's own `test_cuda_assert`
# drives NVIDIA's driver. Needs a ZLUDA source tree (github.com/vosen/ZLUDA; not on PyPI), used
# in place and never copied here; python3 standard library only. A minute on 2 cores.
#
# usage: tests/clients/zluda_ptx.sh ZLUDA_TREE [TEST...]
# Prints one line per test and the counts; exits non-zero unless every test passes.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1/ptx/src/test/spirv_run/mod.rs" ]; then
  echo "usage: $0 ZLUDA_TREE [TEST...]  (ZLUDA_TREE/ptx/src/test/spirv_run/mod.rs must exist)" >&2
  exit 2
fi
tree=$(cd "$1" && pwd)
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$root" && cargo build --release --quiet -p ptxjit-capi)
exec python3 "$root/tests/clients/zluda_ptx.py" "$root/target/release/libptxjit_capi.so" \
  "$tree/ptx/src/test/spirv_run" "$@"
