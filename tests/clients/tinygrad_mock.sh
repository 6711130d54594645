#!/usr/bin/env bash
# tinygrad's own test suite, unmodified, on its mock GPU with ptxjit as GPU Ocelot's
# `ptx_run` (issue 11's acceptance). Slow (tens of minutes a mode on 2 cores): not run by CI,
# which runs tests/clients/ptx_run_ctypes.py and tests/clients/tinygrad.sh instead.
#
# usage: tests/clients/tinygrad_mock.sh TINYGRAD_TREE [MODE...]
#   TINYGRAD_TREE  a checkout of tinygrad's git tree (test/mockgpu/ is not in the PyPI sdist);
#                  it is used in place and never copied into this repository
#   MODE           ptx (DEV=MOCK+CUDA:PTX: sm_35, half emulated in f32), ptx86
#                  (DEV=MOCK+CUDA:PTX:sm_86: native f16, tensor cores), nv (DEV=MOCK+NV);
#                  all three when none is given
# environment:
#   TORCH=1        install torch 2.9.1 (tinygrad's pin; test_ops, test_dtype and test_nn
#                  compare against it) into the venv; without it those files fail to import
#   WORK           venv and logs (default: target/tinygrad-mock in this repository)
#   SUITE          what pytest runs after test/test_tiny.py (default: test/backend without
#                  test_multitensor.py, as tinygrad's own CI does)
#   PTXJIT_THREADS ptxjit's workers per pytest process (see the README)
#   FORWARD_ONLY, SKIP_SLOW_TEST: as tinygrad's CI sets them for these modes unless given
#
# Prints one line per mode and suite: 'MODE SUITE: N passed, N failed, N skipped, N errors in
# Ts', then each failed test, marked 'known' when tests/clients/tinygrad_known_failures.txt
# shows it is not ptxjit's; logs and JUnit XML are in $WORK/logs. Exits non-zero if any other
# test failed or errored.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -d "$1/test/mockgpu" ]; then
  echo "usage: $0 TINYGRAD_TREE [ptx|ptx86|nv ...]  (TINYGRAD_TREE/test/mockgpu must exist)" >&2
  exit 2
fi
tree=$(cd "$1" && pwd)
shift
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(ptx ptx86 nv)
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${WORK:-$root/target/tinygrad-mock}
mkdir -p "$work/logs"

(cd "$root" && cargo build --release --quiet -p ptxjit-capi)
lib=$root/target/release/libptxjit_capi.so

venv=$work/venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet numpy pytest pytest-xdist "hypothesis>=6.148.9" "z3-solver<4.15.4"
fi
if [ "${TORCH:-0}" = 1 ] && ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  "$venv/bin/pip" install --quiet torch==2.9.1
fi
. "$root/tests/clients/clang.sh"

suite=${SUITE:-test/backend --ignore test/backend/test_multitensor.py}
status=0
summary() { # the counts in pytest's closing line
  local line=$1 what
  for what in passed failed skipped errors; do
    local n
    n=$(grep -oE "[0-9]+ ${what%s}s?" <<<"$line" | head -1 | cut -d' ' -f1)
    printf '%s %s, ' "${n:-0}" "$what"
  done
  grep -oE 'in [0-9.]+s' <<<"$line" | tail -1
}
failures() { # JUNIT-XML: lists failed tests; fails unless every one is a known failure
  "$venv/bin/python" - "$1" "$mode" "$root/tests/clients/tinygrad_known_failures.txt" <<'PY'
import sys, xml.etree.ElementTree as ET
xml, mode, known_file = sys.argv[1:]
known = {tuple(l.split("#")[0].split()) for l in open(known_file) if l.strip() and not l.startswith("#")}
unknown = 0
for case in ET.parse(xml).iter("testcase"):
    if case.find("failure") is None and case.find("error") is None:
        continue
    test = case.get("file") or case.get("classname").replace(".", "/").rsplit("/", 1)[0] + ".py"
    test_id = f"{test}::{case.get('classname').rsplit('.', 1)[-1]}::{case.get('name')}"
    is_known = (mode, test_id) in known
    unknown += not is_known
    print(f"  {'known ' if is_known else 'FAILED'} {test_id}")
sys.exit(1 if unknown else 0)
PY
}
for mode in "${modes[@]}"; do
  case $mode in
    ptx) dev=MOCK+CUDA:PTX ;;
    ptx86) dev=MOCK+CUDA:PTX:sm_86 ;;
    nv) dev=MOCK+NV ;;
    *) echo "unknown mode '$mode' (ptx, ptx86, nv)" >&2; exit 2 ;;
  esac
  skip_slow=${SKIP_SLOW_TEST:-$([ "$mode" = nv ] && echo 1 || echo 0)}
  run() { # NAME PYTEST-ARGS...
    local name=$1 log
    shift
    log=$work/logs/$mode-$name.log
    set +e
    (cd "$tree" && env OCELOT_PATH="$lib" DEV="$dev" CC="$cc" FORWARD_ONLY="${FORWARD_ONLY:-1}" \
      SKIP_SLOW_TEST="$skip_slow" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
      --junitxml="$work/logs/$mode-$name.xml" "$@") >"$log" 2>&1
    local rc=$?
    set -e
    echo "$mode $name: $(summary "$(tail -1 "$log")")"
    [ $rc -eq 0 ] || failures "$work/logs/$mode-$name.xml" || status=1
  }
  run test_tiny test/test_tiny.py
  # shellcheck disable=SC2086 # the suite is a list of pytest arguments
  run backend -n auto $suite
done
exit $status
