#!/bin/bash
# make test: the series checks (lab/series/check.py) and the lab's tests
# (pytest) side by side, the check's lines prefixed "[check] ".
#
# The check builds in a worktree and O= directories of its own
# (lab/kernel/kbuild.sh, LAN743X_CHECK_TREE), so nothing it does waits for
# the tests' builds or they for it. Both are CPU-bound on a cold cache:
# the tests run at nice $TEST_NICE, so that the check keeps most of the
# cores while it runs (its tools' time limits, such as spatch's, are
# counted in wall-clock time) and the tests' kernel and QEMU builds take
# what it leaves idle (its checkpatch, kernel-doc and git steps use one
# core).
#
#   PY            python (python3)
#   PYTEST_XDIST  pytest-xdist options (the Makefile's)
#   TEST_NICE     niceness of the tests while the check runs (10)
#
# Exits non-zero if either fails; the pytest summary comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
read -r -a XDIST <<<"${PYTEST_XDIST-}"

# the check, its output line by line with a prefix
"$PY" -u lab/series/check.py > >(sed -u 's/^/[check] /') 2>&1 &
check_pid=$!

nice -n "${TEST_NICE:-10}" "$PY" -m pytest -q -rs --durations=25 "${XDIST[@]}" tests
test_rc=$?

wait "$check_pid"
check_rc=$?
wait  # the prefixing sed, until the check's last line is out
if [ "$check_rc" -ne 0 ]; then
	echo "make test: the check failed (exit $check_rc): its FAIL lines are" \
		"the ones prefixed [check] above" >&2
fi
[ "$test_rc" -eq 0 ] && [ "$check_rc" -eq 0 ]
