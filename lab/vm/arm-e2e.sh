#!/bin/bash
# `make arm-e2e`: the ARMv7 guest end to end. Builds (cached)
# qemu-system-arm with the lan7430 model, the armv7-virt kernel of the
# stack's base (7.3; STACK=6.12: 6.12), the Debian armhf rootfs, the
# upstream lan743x.ko (base) and the series' (base + the stack's patches:
# patches/net + patches/net-next, or patches/6.12), then boots the guest once
# per module and runs lab/guest/e2e-arm.sh (the series' module with the
# live MTU / ethtool -G changes). A guest crash (vm-arm.sh exit 86) is a lab
# event: that boot is repeated once, and said so.
#
# env: ARM_E2E_MODULES (default "upstream series"), ARM_E2E_LOGDIR (default
#      results/arm-e2e-<date>), E2E_* / VM_* as lab/vm/vm-arm.sh.
# Prints each step's time, the SYNC lines of each module and a summary;
# exit status 0 only if every module passed.
. "$(dirname "$0")/../common.sh"
# STACK: net-next (default: the series on 7.3) or 6.12 (the backport on
# 6.12 LTS, the kernel i.MX6 boards run); the base is the stack's
case ${STACK:=net-next} in
net-next | 6.12) ;;
*) die "arm-e2e: STACK net-next or 6.12, not '$STACK'" ;;
esac
LAB_BASE=$(conf_get STACK "$STACK" BASE)
export LAB_BASE STACK
progress "arm-e2e: stack $STACK on Linux $LAB_BASE"
LOGDIR=${ARM_E2E_LOGDIR:-$ROOT_DIR/results/arm-e2e-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$LOGDIR"
t() { date +%s; }
step() {	# step NAME CMD...: run a build step, print its time and result
	local name=$1 t0 out
	shift
	t0=$(t)
	out=$("$@" | tail -1) || die "$name failed ($*)"
	[ -n "$out" ] || die "$name printed nothing ($*)"
	progress "$name: $(($(t) - t0))s: $out"
	echo "$out"
}
QEMU=$(step "qemu-system-arm" bash "$ROOT_DIR/emulator/build.sh" --arch arm)
OBJ=$(step "armv7-virt kernel" env JOBS="${JOBS:-2}" bash "$LAB_DIR/kernel/kbuild.sh" kernel armv7-virt)
ROOTFS=$(step "armhf rootfs" bash "$LAB_DIR/vm/rootfs-arm.sh")
declare -A KO
KO[upstream]=$(step "upstream lan743x.ko" env JOBS="${JOBS:-2}" bash "$LAB_DIR/kernel/kbuild.sh" module armv7-virt base)
KO[series]=$(step "series lan743x.ko" env JOBS="${JOBS:-2}" bash "$LAB_DIR/kernel/kbuild.sh" module armv7-virt series)
export QEMU ROOTFS KERNEL=$OBJ

fails=0
declare -A RES
for m in ${ARM_E2E_MODULES:-upstream series}; do
	[ -n "${KO[$m]:-}" ] || die "unknown module '$m' (upstream, series)"
	live=0
	[ "$m" = series ] && live=1
	for try in 1 2; do
		t0=$(t)
		progress "booting the ARMv7 guest with the $m module (try $try)"
		set +e
		LAN743X_MODDIR=/ko/$m E2E_ARM_LIVE=$live VM_CONSOLE_LOG="$LOGDIR/console-$m-$try.log" \
			bash "$LAB_DIR/vm/vm-arm.sh" --ko "$m=${KO[$m]}" lab/guest/e2e-arm.sh \
			>"$LOGDIR/$m.log" 2>&1
		rc=$?
		set -e
		progress "$m: guest run ${try}: $(($(t) - t0))s, exit $rc"
		[ $rc = 86 ] || break
		echo "arm-e2e: the guest crashed (vm-arm.sh exit 86), a lab event: repeating once" >&2
		grep '^vm-arm.sh: |' "$LOGDIR/$m.log" | head -20 >&2
		cp "$LOGDIR/$m.log" "$LOGDIR/$m-crash-$try.log"
	done
	grep -E '^(PASS|FAIL|SYNC|E2E-ARM RESULT)|^  \| (FAIL|E2E RESULT)|^    (device tree|MemTotal|HighTotal)' \
		"$LOGDIR/$m.log" | sed "s/^/[$m] /"
	RES[$m]=$rc
	[ $rc = 0 ] || fails=$((fails + 1))
done
echo "==== arm-e2e summary (logs: $LOGDIR) ===="
for m in ${ARM_E2E_MODULES:-upstream series}; do
	echo "  $m: $([ "${RES[$m]}" = 0 ] && echo PASS || echo "FAIL (exit ${RES[$m]})")"
done
[ $fails = 0 ] || { echo "ARM-E2E: FAIL"; exit 1; }
echo "ARM-E2E: PASS"
