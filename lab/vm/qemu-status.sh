#!/bin/bash
# The QEMU that vm.sh gives vng (--qemu): vng ends with 255 whenever the
# guest command left no status (a kernel panic, but also QEMU killed by a
# signal or stopped by an assertion) and drops QEMU's own exit status.
# This runs $LAB_QEMU and keeps that status (128 + N for signal N) in
# $LAB_QEMU_STATUS, for vm.sh to say which of those ended the guest.
"$LAB_QEMU" "$@"
rc=$?
[ -z "${LAB_QEMU_STATUS:-}" ] || echo "$rc" >"$LAB_QEMU_STATUS"
exit "$rc"
