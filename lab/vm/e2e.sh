#!/bin/bash
# `make e2e` (ARCH=x86_64, the default, or ARCH=armv7; `make arm-e2e` is
# ARCH=armv7): the guest end-to-end test (lab/guest/e2e.sh) with the
# upstream lan743x.ko (base) and the series' (base + the stack's patches:
# patches/net + patches/net-next, or patches/6.12 + 6.12-2), one boot of
# lab/vm/vm.sh per module. Builds (cached) QEMU with the lan7430 model,
# the guest kernel of the stack's base (x86_64: the checking kernel,
# DMA-API debug on; armv7: armv7-virt, non-coherent PCI DMA) and both
# modules for it (armv7: and the Debian armhf rootfs). The series' module
# also gets the live MTU / ethtool -G changes (E2E_LIVE=1). A guest crash
# (vm.sh exit 86) is a lab event: that boot is repeated once, and said so.
#
# env: ARCH (x86_64 or armv7), STACK (net-next, the default: the series on
#      7.3; or 6.12-2: the backport on 6.12 LTS, the kernel i.MX6 boards
#      run), E2E_MODULES (default "upstream series"; series:K is the
#      chain's first K patches, run without the live changes unless
#      E2E_LIVE=1), E2E_LOGDIR (default
#      results/e2e-<arch>-<date>), E2E_* / VM_* as lab/guest/e2e.sh and
#      lab/vm/vm.sh.
# Prints each step's time, the result lines of each module (armv7: the
# SYNC lines of the DMA cache maintenance) and a summary; exit status 0
# only if every module passed.
. "$(dirname "$0")/../common.sh"
case ${STACK:=net-next-2} in
net-next-2 | 6.12-2) ;;
*) die "e2e: STACK net-next-2 or 6.12-2, not '$STACK'" ;;
esac
ARCH=${ARCH:-x86_64}
case $ARCH in
x86_64) VARIANT=guest QARCH=x86_64 ;;
armv7) VARIANT=armv7-virt QARCH=arm ;;
*) die "e2e: ARCH x86_64 or armv7, not '$ARCH'" ;;
esac
LAB_BASE=$(conf_get STACK "$STACK" BASE)
export LAB_BASE STACK
progress "e2e ($ARCH): stack $STACK on Linux $LAB_BASE"
LOGDIR=${E2E_LOGDIR:-$ROOT_DIR/results/e2e-$ARCH-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$LOGDIR"
MODULES=${E2E_MODULES:-upstream series}
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
# the kernel's make reads ARCH from the environment: the builds get none
QEMU=$(step "qemu-system-$QARCH" env -u ARCH bash "$ROOT_DIR/emulator/build.sh" --arch "$QARCH")
OBJ=$(step "$VARIANT kernel" env -u ARCH JOBS="${JOBS:-2}" bash "$LAB_DIR/kernel/kbuild.sh" kernel "$VARIANT")
if [ "$ARCH" = armv7 ]; then
	ROOTFS=$(step "armhf rootfs" env -u ARCH bash "$LAB_DIR/vm/rootfs-arm.sh")
	export ROOTFS KERNEL=$OBJ
else
	export KERNEL=$OBJ/arch/x86/boot/bzImage MODDIR=$OBJ/mods
fi
export QEMU
declare -A KO REV=([upstream]=base [series]=series)
for m in $MODULES; do
	# series:K: the chain's first K patches (lab/kernel/kbuild.sh), the
	# series as it stands at one of its patches
	[[ "$m" =~ ^series:[1-9][0-9]*$ ]] && REV[$m]=$m
	[ -n "${REV[$m]:-}" ] || die "unknown module '$m' (upstream, series, series:K)"
	KO[$m]=$(step "$m lan743x.ko" env -u ARCH JOBS="${JOBS:-2}" bash "$LAB_DIR/kernel/kbuild.sh" module "$VARIANT" "${REV[$m]}")
done

fails=0
declare -A RES
for m in $MODULES; do
	live=0
	[ "$m" = series ] && live=1
	# E2E_LIVE=1: the live changes for every module but upstream (a
	# series:K that has them)
	[ "${E2E_LIVE:-}" = 1 ] && [ "$m" != upstream ] && live=1
	# the module's path in the guest (lab/vm/vm.sh --ko)
	ko=${KO[$m]}
	[ "$ARCH" = x86_64 ] || ko=/ko/$m/lan743x.ko
	for try in 1 2; do
		t0=$(t)
		progress "booting the $ARCH guest with the $m module (try $try)"
		set +e
		LAN743X_KO=$ko E2E_LIVE=$live VM_CONSOLE_LOG="$LOGDIR/console-$m-$try.log" \
			ARCH=$ARCH bash "$LAB_DIR/vm/vm.sh" --ko "$m=${KO[$m]}" lab/guest/e2e.sh \
			>"$LOGDIR/$m.log" 2>&1
		rc=$?
		set -e
		progress "$m: guest run ${try}: $(($(t) - t0))s, exit $rc"
		[ $rc = 86 ] || break
		grep '^vm.sh: |' "$LOGDIR/$m.log" | head -20 >&2
		cp "$LOGDIR/$m.log" "$LOGDIR/$m-crash-$try.log"
		# only the TCG text-patching int3 signature is a lab event
		# (lab/vm/crash.py); any other crash is the run's result
		python3 "$LAB_DIR/vm/crash.py" retryable "$LOGDIR/console-$m-$try.log" >&2 || break
		[ "$try" = 1 ] && echo "e2e: the guest crashed on the int3 signature: repeating once" >&2
	done
	# the result lines (not again from e2e.sh's summary at the end)
	awk '/^==== summary ====/ { s = 1 } /^E2E RESULT/ || (!s &&
		/^(PASS|FAIL|SYNC)|^    (device tree|MemTotal|HighTotal|SYNC)/)' \
		"$LOGDIR/$m.log" | sed "s/^/[$m] /"
	RES[$m]=$rc
	[ $rc = 0 ] || fails=$((fails + 1))
done
echo "==== e2e ($ARCH) summary (logs: $LOGDIR) ===="
for m in $MODULES; do
	echo "  $m: $([ "${RES[$m]}" = 0 ] && echo PASS || echo "FAIL (exit ${RES[$m]})")"
done
[ $fails = 0 ] || { echo "E2E ($ARCH): FAIL"; exit 1; }
echo "E2E ($ARCH): PASS"
