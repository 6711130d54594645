#!/bin/sh
# numba-cuda's own test suite (shipped in its wheel), unmodified, with ptxjit standing in for
# libcuda.so.1 (issue 15), then cuda.core on the same driver (tests/clients/cuda_core.py).
#
# Installs numba-cuda[cu13] 0.30.4, cuda-core 1.2.2 and the suite's test dependencies from PyPI
# into a virtualenv and removes nvidia-nvjitlink from it, so that cuda.core links through the
# driver's cuLink* (PTX in, PTX out): nvJitLink would make a cubin, which no CPU runs. Runs
# pytest as upstream does, with the one fixture its source tree's conftest.py gives
# (tests/clients/numba_cuda_plugin.py).
#
# usage: tests/clients/numba_cuda.sh [--subset | PYTEST ARGS...]
#   no arguments: --pyargs numba.cuda.tests.cudapy numba.cuda.tests.cudadrv (the whole suite,
#   about 25 minutes on 2 cores); --subset: CI's representative modules (fp16 and other
#   intrinsics, atomics, shared memory, warp functions, cooperative groups, the driver).
#   PTXJIT_NUMBA_DIR: where the virtualenv and the log go (default target/numba-cuda).
# Exits non-zero when a test fails.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${PTXJIT_NUMBA_DIR:-$root/target/numba-cuda}
mkdir -p "$work"
libdir=$("$root/capi/make-libcuda-dir.sh" "$work/libcuda")
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet "numba-cuda[cu13]==0.30.4" "cuda-core==1.2.2" \
    pytest pytest-timeout filecheck ml-dtypes cffi psutil
  "$work/venv/bin/pip" uninstall --quiet --yes nvidia-nvjitlink
fi
t=numba.cuda.tests
case "${1:-}" in
  "") set -- --pyargs $t.cudapy $t.cudadrv ;;
  --subset)
    known=$(sed -e 's/#.*//' "$root/tests/clients/numba_cuda_known_failures.txt" | xargs | sed 's/ / or /g')
    set -- -k "not ($known)" --pyargs $t.cudapy.test_intrinsics $t.cudapy.test_atomics \
      $t.cudapy.test_sm $t.cudapy.test_warp_ops $t.cudapy.test_cooperative_groups \
      $t.cudadrv.test_cuda_driver $t.cudadrv.test_linker $t.cudadrv.test_cuda_memory ;;
esac
export LD_LIBRARY_PATH=$libdir PYTHONPATH=$root/tests/clients
# A kernel that never ends (a deadlock under test) ends with an error after a minute.
export PTXJIT_LAUNCH_TIMEOUT=${PTXJIT_LAUNCH_TIMEOUT:-60}
cd "$work"
status=0
venv/bin/python -m pytest -p numba_cuda_plugin -p no:cacheprovider --import-mode=importlib \
  -q -rfE --timeout 600 "$@" > numba_cuda.log 2>&1 || status=$?
tail -n 1 numba_cuda.log
venv/bin/python "$root/tests/clients/cuda_core.py"
exit $status
