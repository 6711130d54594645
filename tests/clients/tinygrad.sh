#!/bin/sh
# tinygrad's own tests, unmodified, on ptxjit standing in for libcuda.so.1 (issue 7's
# acceptance): downloads the tinygrad 0.14.0 source distribution, installs it with numpy and
# pytest into a virtualenv, and runs test/test_tiny.py with tinygrad's PTX renderer.
# Expected: 19 passed, 2 skipped (test_hgemm runs native f16 PTX: mul.f16).
#
# Needs python3 (venv, pip, PyPI) and a C compiler named clang for tinygrad's CPU device
# (CC overrides; a versioned clang-NN on PATH is used, else Debian's clang is installed).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${PTXJIT_TINYGRAD_DIR:-$root/target/tinygrad}
mkdir -p "$work"
libdir=$("$root/capi/make-libcuda-dir.sh" "$work/libcuda")
cd "$work"
if [ ! -f tinygrad-0.14.0.tar.gz ]; then
  python3 -m pip download --quiet --no-deps --no-binary :all: tinygrad==0.14.0 -d .
fi
rm -rf tinygrad-0.14.0 && tar xzf tinygrad-0.14.0.tar.gz
if [ ! -x venv/bin/python ]; then
  python3 -m venv venv
  venv/bin/pip install --quiet numpy pytest ./tinygrad-0.14.0.tar.gz
fi
. "$root/tests/clients/clang.sh"
cd tinygrad-0.14.0
LD_LIBRARY_PATH=$libdir DEV=CUDA:PTX JIT=2 TC=0 CC=$cc \
  ../venv/bin/python -m pytest -q -p no:cacheprovider test/test_tiny.py 2>&1 | tee ../test_tiny.log
grep -q "19 passed, 2 skipped" ../test_tiny.log
echo "tinygrad test_tiny.py on ptxjit: 19 passed, 2 skipped"
