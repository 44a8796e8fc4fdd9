#!/bin/bash
# Boot the ARMv7 guest (QEMU `virt`, Cortex-A15, 32-bit without LPAE, 1 GiB
# with highmem, TCG) with a LAN7430 DUT and a virtio-net peer on one QEMU
# hub, run a command in it and return its exit status.
#
# usage: lab/vm/vm-arm.sh [--ko NAME=PATH]... [--file SRC=DEST]... [--dir SRC=DEST]...
#                      [--] <guest command...>
#        lab/vm/vm-arm.sh --ko series=/path/lan743x.ko lab/guest/e2e-arm.sh
#
# The guest has no host file system: its root is an initramfs, the cached
# Debian armhf rootfs (lab/vm/rootfs-arm.sh) followed by a small per-run cpio
# with /init, the repository's lab/ (the command runs in its parent, so
# `lab/guest/...` paths work), the kernel's modules (MODDIR) in /lib/modules
# and each --ko module as /ko/NAME/lan743x.ko (LAN743X_KO_NAME in the
# guest's environment), each --file SRC as the guest's DEST (absolute) and
# each --dir SRC (a directory, copied whole) as DEST. Output comes back on
# the serial console; with VM_ARM_OUT, so do the files the command wrote
# to the guest's /out (a gzipped tar in base64 between marker lines, with
# its sha256, unpacked into VM_ARM_OUT on the host).
#
# The PCIe host bridge is NON-coherent, as on i.MX6: QEMU's virt machine
# marks its PCIe node `dma-coherent` in the device tree it generates
# (hw/arm/virt.c create_pcie()), so the DT is dumped (-M ...,dumpdtb=),
# the property removed from the pcie node (fdtput -d) and the result
# passed with -dtb. VM_ARM_COHERENT=1 keeps QEMU's DT (the coherent
# contrast: no arch_sync_dma_for_* calls).
#
# environment:
#   KERNEL     zImage path, or the kernel's O= directory (default: the
#              armv7-virt kernel, lab/kernel/kbuild.sh kernel armv7-virt)
#   MODDIR     a dir holding lib/modules/<ver> (default: KERNEL's O=/mods)
#   QEMU       qemu-system-arm (default: emulator/build.sh --arch arm)
#   ROOTFS     rootfs cpio (default: lab/vm/rootfs-arm.sh)
#   VM_CPUS    default 2        VM_MEM  default 1G
#   VM_TIMEOUT seconds, default 3600 (TCG on a loaded 2-core host)
#   DUT_MAC, PEER_MAC, DUT_OPTS  as lab/vm/vm.sh
#   VM_APPEND  extra kernel command line
#   VM_ARM_COHERENT  1: keep the dma-coherent property (coherent PCI DMA)
#   VM_CONSOLE_LOG   file that keeps the whole console (default: temporary)
#   VM_VERBOSE non-empty: echo the whole console (kernel lines too)
#   VM_ARM_OUT host directory that receives the guest's /out at the end
#              (a missing, truncated or corrupted copy is an error, exit 2)
#   QMP_SOCK   if set: a QMP unix socket there (the emulator's counters,
#              lab/vm/qmp.py; lab/bench/arm_bench.py reads them; removed at the end)
#   E2E_*, LAN743X_*  forwarded into the guest command's environment
#
# exit status: the guest command's; 2 for a usage or setup error; 86 when
# the guest kernel crashed (panic) or died without reporting a status.
set -euo pipefail

main() {
local LAB ROOT KOS=() FILES=() DIRS=() a v rc tmp ov cmd node dtb
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$LAB/.." && pwd)
die() { echo "vm-arm.sh: error: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--ko) KOS+=("$2"); shift 2 ;;
	--file) FILES+=("$2"); shift 2 ;;
	--dir) DIRS+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "usage: lab/vm/vm-arm.sh [--ko NAME=PATH]... [--] <guest command...>"
command -v fdtput >/dev/null || die "fdtput not found (device-tree-compiler; make setup)"
command -v cpio >/dev/null || die "cpio not found (make setup)"

if [ -z "${KERNEL:-}" ]; then
	KERNEL=$(LAB_BASE=${LAB_BASE:-7.3} bash "$LAB/kernel/kbuild.sh" kernel armv7-virt | tail -1) ||
		die "lab/kernel/kbuild.sh kernel armv7-virt failed"
fi
if [ -d "$KERNEL" ]; then
	MODDIR=${MODDIR:-$KERNEL/mods}
	KERNEL=$KERNEL/arch/arm/boot/zImage
fi
[ -f "$KERNEL" ] || die "KERNEL=$KERNEL does not exist"
if [ -z "${QEMU:-}" ]; then
	QEMU=$(bash "$ROOT/emulator/build.sh" --arch arm | tail -1) || die "emulator/build.sh --arch arm failed"
fi
[ -x "$QEMU" ] || die "QEMU=$QEMU not executable"
if [ -z "${ROOTFS:-}" ]; then
	ROOTFS=$(bash "$LAB/vm/rootfs-arm.sh" | tail -1) || die "lab/vm/rootfs-arm.sh failed"
fi
[ -s "$ROOTFS" ] || die "ROOTFS=$ROOTFS missing"
echo "vm-arm.sh: qemu=$QEMU" >&2
echo "vm-arm.sh: kernel=$KERNEL" >&2
echo "vm-arm.sh: rootfs=$ROOTFS" >&2

tmp=$(mktemp -d /tmp/lan743x-arm.XXXXXX)
# shellcheck disable=SC2064
trap "rm -rf '$tmp'" EXIT
ov=$tmp/ov
mkdir -p "$ov/lab-root" "$ov/ko"
cp -a "$LAB" "$ov/lab-root/lab"
if [ -n "${MODDIR:-}" ]; then
	[ -d "$MODDIR/lib/modules" ] || die "MODDIR=$MODDIR has no lib/modules"
	mkdir -p "$ov/lib"
	cp -a "$MODDIR/lib/modules" "$ov/lib/"
	# the build tree links are host paths: drop them
	find "$ov/lib/modules" -maxdepth 2 \( -name build -o -name source \) -type l -delete
fi

for a in "${FILES[@]}"; do
	[ -f "${a%%=*}" ] || die "--file $a: no such file"
	case "${a#*=}" in /*) ;; *) die "--file $a: DEST must be absolute" ;; esac
	mkdir -p "$ov$(dirname "${a#*=}")"
	cp "${a%%=*}" "$ov${a#*=}"
done
for a in "${DIRS[@]}"; do
	[ -d "${a%%=*}" ] || die "--dir $a: no such directory"
	case "${a#*=}" in /*) ;; *) die "--dir $a: DEST must be absolute" ;; esac
	mkdir -p "$ov${a#*=}"
	cp -a "${a%%=*}/." "$ov${a#*=}/"
done
if [ -n "${VM_ARM_OUT:-}" ]; then
	mkdir -p "$VM_ARM_OUT" "$ov/out" || die "VM_ARM_OUT=$VM_ARM_OUT: cannot create"
	touch "$ov/lab-out"
fi

DUT_MAC=${DUT_MAC:-02:74:30:00:00:01}
PEER_MAC=${PEER_MAC:-02:74:30:00:00:02}
{
	echo "export LAN743X_DUT_MAC=$DUT_MAC LAN743X_PEER_MAC=$PEER_MAC"
	for a in "${KOS[@]}"; do
		[ -f "${a#*=}" ] || die "--ko $a: no such file"
		mkdir -p "$ov/ko/${a%%=*}"
		cp "${a#*=}" "$ov/ko/${a%%=*}/lan743x.ko"
		echo "export LAN743X_KO_${a%%=*}=/ko/${a%%=*}/lan743x.ko"
	done
	for v in $(compgen -e | grep -E '^(E2E_|LAN743X_)' || true); do
		echo "export $v=$(printf %q "${!v}")"
	done
} >"$ov/lab-env"
cmd=""
for a in "$@"; do cmd="$cmd $(printf %q "$a")"; done
echo "$cmd" >"$ov/lab-cmd"
cat >"$ov/init" <<'EOI'
#!/bin/bash
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin; ln -sf /proc/self/fd/1 /dev/stdout; ln -sf /proc/self/fd/2 /dev/stderr
# the kernel has no 32-bit time_t system calls (COMPAT_32BIT_TIME=n from
# allnoconfig): coreutils' sleep fails there, busybox's does not
if ! sleep 0 2>/dev/null; then
	mkdir -p /usr/local/bin
	ln -sf /bin/busybox /usr/local/bin/sleep
fi
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
ldconfig 2>/dev/null
hostname lan743x-arm
ip link set lo up
. /lab-env
cd /lab-root
echo "lan743x-arm: running:$(cat /lab-cmd)"
bash -c "$(cat /lab-cmd)" </dev/null
rc=$?
if [ -e /lab-out ]; then
	# the files the command left in /out, for the host (VM_ARM_OUT); the
	# kernel's console messages would interleave with them: quiet it
	echo 1 >/proc/sys/kernel/printk
	tar -C /out -czf /tmp/lab-out.tgz .
	echo "LAN743X-ARM-OUT-BEGIN $(sha256sum </tmp/lab-out.tgz | cut -d' ' -f1)"
	base64 -w 76 /tmp/lab-out.tgz
	echo "LAN743X-ARM-OUT-END"
fi
echo "LAN743X-ARM-EXIT=$rc"
sync
echo o >/proc/sysrq-trigger
# init must not exit before the power-off has taken effect
while :; do :; done
EOI
chmod 755 "$ov/init"
(cd "$ov" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc -R 0:0 --quiet) >"$tmp/ov.cpio"
cat "$ROOTFS" "$tmp/ov.cpio" >"$tmp/initrd.cpio"

local Q=("$QEMU" -M virt,highmem=off -cpu cortex-a15 -smp "${VM_CPUS:-2}" -m "${VM_MEM:-1G}"
	-display none -monitor none -no-reboot -nodefaults
	-kernel "$KERNEL" -initrd "$tmp/initrd.cpio"
	-netdev hubport,id=p0,hubid=0 -netdev hubport,id=p1,hubid=0
	-device "lan7430,id=dut,netdev=p0,mac=$DUT_MAC${DUT_OPTS:-}"
	-device "virtio-net-pci,id=peer,netdev=p1,mac=$PEER_MAC,romfile=")
local QMP=()
[ -z "${QMP_SOCK:-}" ] || { rm -f "$QMP_SOCK"; QMP=(-qmp "unix:$QMP_SOCK,server=on,wait=off"); }
# the device tree: QEMU's own, less the pcie node's dma-coherent
dtb=$tmp/virt.dtb
"${Q[@]}" -M virt,highmem=off,dumpdtb="$dtb" >/dev/null 2>&1 || true
[ -s "$dtb" ] || die "qemu could not dump the virt device tree"
node=$(dtc -I dtb -O dts "$dtb" 2>/dev/null | awk '/^\tpcie@[0-9a-f]+ \{/ && !n++ {print $1}')
[ -n "$node" ] || die "no pcie node in the virt device tree"
if [ "${VM_ARM_COHERENT:-0}" = 1 ]; then
	echo "vm-arm.sh: PCIe DMA coherent (QEMU's DT: /$node has dma-coherent)" >&2
else
	fdtput -d "$dtb" "/$node" dma-coherent || die "fdtput -d /$node dma-coherent failed"
	! fdtget -p "$dtb" "/$node" | grep -qx dma-coherent || die "dma-coherent still in /$node"
	echo "vm-arm.sh: PCIe DMA NON-coherent (dma-coherent removed from /$node)" >&2
fi

CONSOLE_LOG=${VM_CONSOLE_LOG:-$tmp/console.log}
# mawk (Debian's awk) reads a pipe in blocks: -W interactive passes each
# console line on as it comes (lab/bench/arm_bench.py answers requests on them)
local AWK_LIVE=()
case "$(awk -W version 2>/dev/null)" in *mawk*) AWK_LIVE=(-W interactive) ;; esac
: >"$CONSOLE_LOG"
set +e
timeout --foreground -k 10 "${VM_TIMEOUT:-3600}" \
	"${Q[@]}" "${QMP[@]}" -dtb "$dtb" -serial stdio \
	-append "console=ttyAMA0 rdinit=/init panic=-1 loglevel=4 ${VM_APPEND:-}" </dev/null |
	tee -a "$CONSOLE_LOG" |
	awk "${AWK_LIVE[@]}" -v verbose="${VM_VERBOSE:-}" '
		/^LAN743X-ARM-EXIT=/ { next }
		/^LAN743X-ARM-OUT-BEGIN/ { out = 1; next }
		/^LAN743X-ARM-OUT-END/ { out = 0; next }
		out { next }
		/^\[ *[0-9]+\.[0-9]+\] / && verbose == "" { next }
		{ sub(/\r$/, ""); print; fflush() }'
rc=${PIPESTATUS[0]}
set -e
[ -z "${QMP_SOCK:-}" ] || rm -f "$QMP_SOCK"
echo "vm-arm.sh: qemu exit status $rc" >&2
if grep -q "Kernel panic - not syncing" "$CONSOLE_LOG"; then
	echo "vm-arm.sh: GUEST CRASHED:" >&2
	grep -a -E -A25 "Oops|BUG: |Kernel panic|Internal error" "$CONSOLE_LOG" |
		head -60 | sed 's/^/vm-arm.sh: | /' >&2
	[ -n "${VM_CONSOLE_LOG:-}" ] || cp "$CONSOLE_LOG" "/tmp/lan743x-arm-crash-$$.log"
	return 86
fi
rc=$(grep -a -o '^LAN743X-ARM-EXIT=[0-9]*' "$CONSOLE_LOG" | tail -1 | cut -d= -f2)
if [ -z "$rc" ]; then
	echo "vm-arm.sh: the guest reported no exit status (timeout or crash); console tail:" >&2
	tail -30 "$CONSOLE_LOG" | sed 's/^/vm-arm.sh: | /' >&2
	return 86
fi
echo "vm-arm.sh: guest exit status $rc" >&2
if [ -n "${VM_ARM_OUT:-}" ]; then
	local sum got
	sum=$(tr -d '\r' <"$CONSOLE_LOG" | awk '/^LAN743X-ARM-OUT-BEGIN / {print $2}' | tail -1)
	[ -n "$sum" ] || die "the guest sent no /out (no LAN743X-ARM-OUT-BEGIN line)"
	tr -d '\r' <"$CONSOLE_LOG" |
		awk '/^LAN743X-ARM-OUT-BEGIN / {f = 1; next} /^LAN743X-ARM-OUT-END/ {f = 0} f' |
		base64 -d >"$tmp/out.tgz" 2>/dev/null
	got=$(sha256sum <"$tmp/out.tgz" | cut -d' ' -f1)
	[ "$got" = "$sum" ] ||
		die "the guest's /out came back corrupted (sha256 $got, sent $sum)"
	tar -xzf "$tmp/out.tgz" -C "$VM_ARM_OUT" || die "cannot unpack the guest's /out"
	echo "vm-arm.sh: the guest's /out is in $VM_ARM_OUT ($(stat -c %s "$tmp/out.tgz") bytes)" >&2
fi
return "$rc"
}
main "$@"
exit $?
