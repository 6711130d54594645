#!/bin/sh
# The GPU-truth harness (tools/gpu-truth, issue 17) end to end without a GPU: it records every
# instruction form through ptxjit's libcuda.so.1 (the same script, unchanged, records an
# NVIDIA GPU through its driver), then tests/hardware.rs reads those recordings and runs
# ptxjit's library on the same PTX and inputs: the bits must agree; and it runs tests/corpus and
# tests/compilers through the driver, whose outputs must pass their checks. This checks the
# harness (kernels, driver calls, recording format, reader), not the hardware's bits.
#
# Installs cuda-bindings and numpy from PyPI into a virtualenv (what the GPU machine needs).
# usage: tests/clients/gpu_truth.sh   (PTXJIT_GPU_TRUTH_DIR: work directory, default
#        target/gpu-truth)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${PTXJIT_GPU_TRUTH_DIR:-$root/target/gpu-truth}
mkdir -p "$work"
libdir=$("$root/capi/make-libcuda-dir.sh" "$work/libcuda")
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet "cuda-bindings==13.5.0" numpy
fi
rm -rf "$work/recorded"
LD_LIBRARY_PATH=$libdir "$work/venv/bin/python" "$root/tools/gpu-truth/gpu_truth.py" \
  record "$work/recorded" | tail -n 1
# (The forms' test: the kernels' test compares with a GPU's outputs, tests/hardware/h200.)
PTXJIT_TRUTH_DIR=$work/recorded cargo test --quiet --manifest-path "$root/Cargo.toml" \
  --test hardware ptxjit_gives_the_recorded_bits_of_every_form
for corpus in corpus compilers; do
  LD_LIBRARY_PATH=$libdir "$work/venv/bin/python" "$root/tools/gpu-truth/gpu_truth.py" corpus \
    "$work/recorded/$corpus" --corpus "$root/tests/$corpus" > "$work/$corpus.log"
  # On ptxjit every output must pass its check (on a GPU, a failure here is a finding); a
  # kernel that fails to run prints an error line instead.
  if grep -v ", 0 beyond what their check allows" "$work/$corpus.log"; then
    echo "tests/$corpus outputs through the driver differ from the expected files" >&2
    exit 1
  fi
  echo "tests/$corpus through the driver: $(wc -l < "$work/$corpus.log") kernels pass their checks"
done
