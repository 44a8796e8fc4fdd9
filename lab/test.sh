#!/bin/bash
# make test: the series checks (lab/series/check.py) and the lab's tests
# (pytest) side by side, the check's lines prefixed "[check] ".
#
# The check builds in a worktree and O= directories of its own
# (lab/kernel/kbuild.sh, LAN743X_CHECK_TREE), so nothing it does waits for
# the tests' builds or they for it. On a cold cache both are CPU-bound;
# the check runs at nice $CHECK_NICE: the tests' QEMU and kernel builds
# come first, as every VM test waits for them, and the check takes the
# cores the VM tests leave idle (a TCG guest waits on its timers and
# I/O). Its tools' time limits count CPU seconds (spatch: prlimit), which
# its priority does not stretch.
#
#   PY            python (python3)
#   PYTEST_XDIST  pytest-xdist options (the Makefile's)
#   CHECK_NICE    niceness of the check (10)
#
# Exits non-zero if either fails; the pytest summary comes last.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
read -r -a XDIST <<<"${PYTEST_XDIST-}"

# the check, its output line by line with a prefix
nice -n "${CHECK_NICE:-10}" "$PY" -u lab/series/check.py \
	> >(sed -u 's/^/[check] /') 2>&1 &
check_pid=$!

"$PY" -m pytest -q -rs --durations=25 "${XDIST[@]}" tests
test_rc=$?

wait "$check_pid"
check_rc=$?
wait  # the prefixing sed, until the check's last line is out
if [ "$check_rc" -ne 0 ]; then
	echo "make test: the check failed (exit $check_rc): its FAIL lines are" \
		"the ones prefixed [check] above" >&2
fi
[ "$test_rc" -eq 0 ] && [ "$check_rc" -eq 0 ]
