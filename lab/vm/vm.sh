#!/bin/bash
# Boot the lab's guest with our QEMU (built by emulator/build.sh) and a
# LAN7430 DUT, wired through a QEMU hub to a virtio-net peer; run a command
# in the guest and return its exit status.
#
# usage: lab/vm/vm.sh [-r|--kernel PATH] [--moddir DIR] [--qmp SOCK] [--qemu BIN]
#                     [--ko NAME=PATH]... [--file SRC=DEST]... [--dir SRC=DEST]...
#                     [--] <guest command...>
#        lab/vm/vm.sh lab/guest/e2e.sh
#        ARCH=armv7 lab/vm/vm.sh --ko series=/path/lan743x.ko lab/guest/e2e.sh
#
# ARCH selects the guest (default x86_64):
#   x86_64  virtme-ng (vng) boots the kernel on QEMU's pc machine with the
#           host's root file system (9p, read only): the command runs in
#           the repository and sees the host's files.
#   armv7   QEMU's virt machine, Cortex-A15, 32-bit without LPAE, 1 GiB with
#           highmem, the PCIe host NON-coherent as on i.MX6. The guest has
#           no host file system: its root is an initramfs, the cached Debian
#           armhf rootfs (lab/vm/rootfs-arm.sh) followed by a small per-run
#           cpio with /init, the repository's lab/ (the command runs in its
#           parent, so `lab/guest/...` paths work), the kernel's modules
#           (MODDIR) in /lib/modules, each --ko module as
#           /ko/NAME/lan743x.ko, each --file SRC as the guest's DEST
#           (absolute) and each --dir SRC (a directory, copied whole) as
#           DEST. Output comes back on the serial console; with VM_ARM_OUT,
#           so do the files the command wrote to the guest's /out (a gzipped
#           tar in base64 between marker lines, with its sha256, unpacked
#           into VM_ARM_OUT on the host).
#           QEMU's virt machine marks its PCIe node `dma-coherent` in the
#           device tree it generates (hw/arm/virt.c create_pcie()), so the
#           DT is dumped (-M ...,dumpdtb=), the property removed from the
#           pcie node (fdtput -d) and the result passed with -dtb.
#           VM_ARM_COHERENT=1 keeps QEMU's DT (the coherent contrast: no
#           arch_sync_dma_for_* calls).
# Each --ko NAME=PATH is LAN743X_KO_NAME in the guest's environment (the
# module's path in the guest: PATH on x86_64, /ko/NAME/lan743x.ko on armv7;
# in the variable's name each character other than a letter, digit or _
# is a _: series+dim is LAN743X_KO_series_dim).
#
# environment:
#   ARCH       x86_64 (default) or armv7
#   KERNEL     x86_64: bzImage path or kernel build dir (default: newest
#              Debian 6.12 /boot/vmlinuz-6.12*); armv7: zImage path or the
#              kernel's O= directory (default: the armv7-virt kernel,
#              lab/kernel/kbuild.sh kernel armv7-virt)
#   MODDIR     module tree for the guest: a dir containing lib/modules/<ver>
#              (x86_64: modprobe -d; armv7: copied to /lib/modules, default
#              KERNEL's O=/mods), or (x86_64) a dir holding lan743x.ko.
#              x86_64: exported to the guest as LAN743X_MODDIR.
#   QEMU       QEMU binary (default: emulator/build.sh [--arch arm])
#   ROOTFS     armv7: rootfs cpio (default: lab/vm/rootfs-arm.sh)
#   QMP_SOCK   QMP unix socket path (default /tmp/lan743x-lab-qmp-$$.sock);
#              printed on stderr, exported to the guest command's host env
#              (the emulator's counters, lab/vm/qmp.py); removed at the end
#   VM_CPUS    default 2        VM_MEM  default 2G (x86_64), 1G (armv7)
#   VM_TIMEOUT seconds, default 1800 (x86_64), 3600 (armv7)
#   DUT_MAC    default 02:74:30:00:00:01, PEER_MAC default 02:74:30:00:00:02
#   DUT_OPTS   extra ",prop=val" for -device lan7430 (e.g. ",msix=off")
#   DUT_DEVICE the model's variant: lan7430 (default) or lan7431
#              (emulator/README.md "Variants"); id stays "dut"
#   VM_APPEND  extra kernel command line
#   VM_CONSOLE_LOG  file that keeps the guest's kernel console (default: a
#              temporary file, removed unless the guest crashed)
#   VM_VERBOSE non-empty: show the guest's kernel console (panics)
#   VM_EXTRA_QEMU_OPTS  extra QEMU arguments (split at blanks), e.g.
#              "-accel tcg,thread=single -icount shift=2,sleep=off": the
#              guest's and the model's clocks then count instructions
#   E2E_*, LAN743X_*  forwarded into the guest command's environment
#   VM_PARTNER_TAP  the DUT's wire is a host tap device of that name (the
#              link partner outside the guest, lab/vm/partner.sh), not the
#              QEMU hub to the guest's virtio-net peer
#   VM_MGMT_TAP  the guest's virtio-net NIC (PEER_MAC) is wired to a host tap
#              device of that name instead of the hub: a management port,
#              as a board's, for ssh from the host (lab/board/vm_board.py)
# x86_64 only:
#   VM_TCG_THREAD  TCG threading: "multi" (default: MTTCG, one host thread
#              per vCPU, QEMU's own default) or "single" (every vCPU in one
#              host thread, -accel tcg,thread=single: against INT3 oopses
#              of live text patching under MTTCG; it changes the bench's
#              per-packet counts, see measurements/crashrate-20261125);
#              empty: no -accel option. Ignored when VM_EXTRA_QEMU_OPTS has
#              an -accel.
#   VM_ROOT_CACHE  the 9p cache mode of the guest's root (the host's, read
#              only): "loose" (default) lets the guest keep the files and
#              directory entries it read; "none" is virtme-ng's own (every
#              lookup and read a round trip to the host: under TCG a
#              process start took 1-9 s). The guest then does not see a
#              file the host changes under the root during the run; results
#              and the bench's requests use VM_RWDIR, a mount of its own,
#              which this does not change.
#   VM_RWDIR   a host directory the guest may write (results, bench RPC)
#   VM_IOMMU   1: a vIOMMU in front of the DUT (-device intel-iommu on
#              vng's q35 machine, placed before the DUT so that its DMA
#              is translated; the guest gets intel_iommu=on
#              iommu.strict=1): a device write to an address the driver
#              has unmapped then fails in the model (counted in
#              dma_errors; with DUT_OPTS=",strict-dma=on" it fails the
#              run). Needs CONFIG_INTEL_IOMMU in the guest kernel; without
#              it the guest ignores the IOMMU and its DMA passes through
#              (vm.sh warns).
# armv7 only:
#   VM_ARM_COHERENT  1: keep the dma-coherent property (coherent PCI DMA)
#   VM_ARM_OUT host directory that receives the guest's /out at the end
#              (a missing, truncated or corrupted copy is an error, exit 2)
#
# exit status: the guest command's; 2 for a usage or setup error; 86 when
# the guest kernel crashed (a panic; the lab's kernels panic on oops) or
# (armv7) died without reporting a status: the console lines of the crash
# are printed on stderr, so that a runner can tell a crash of the
# (emulated) machine from a test result and retry; 87 when the guest
# command succeeded but the model counted descriptor errors or write-backs
# into a freed ring (its exit report, lab/vm/dut_report.py).
set -euo pipefail

die() { echo "vm.sh: error: $*" >&2; exit 2; }
# a --ko NAME as a variable name's tail: other characters than [A-Za-z0-9_]
# become _
ko_var() { printf %s "${1//[^A-Za-z0-9_]/_}"; }

# x86_64: virtme-ng, the host's root file system; sets rc
boot_x86_64() {
	local d FW APPEND GCMD CMDFILE="" v APPEND_IOMMU=""
	command -v vng >/dev/null || die "virtme-ng (vng) not found"
	if [ -z "${KERNEL:-}" ]; then
		KERNEL=$(ls -1 /boot/vmlinuz-6.12* 2>/dev/null | sort -V | tail -1 || true)
		[ -n "$KERNEL" ] || die "no KERNEL given and no /boot/vmlinuz-6.12*"
	fi
	[ -e "$KERNEL" ] || die "KERNEL=$KERNEL does not exist"
	[ ${#FILES[@]} = 0 ] && [ ${#DIRS[@]} = 0 ] ||
		die "--file and --dir are for ARCH=armv7 (the x86_64 guest sees the host's files)"
	echo "vm.sh: kernel=$KERNEL" >&2

	# firmware: Debian's seabios + qemu data (our build has no pc-bios blobs)
	FW=""
	for d in /usr/share/seabios /usr/share/qemu /usr/lib/ipxe/qemu; do
		[ -d "$d" ] && FW="$FW -L $d"
	done
	local IOMMU="" KCONF
	if [ "${VM_IOMMU:-}" = 1 ]; then
		IOMMU="-device intel-iommu,intremap=off"
		APPEND_IOMMU="intel_iommu=on iommu.strict=1"
		KCONF=$(dirname "$KERNEL")/../../../.config
		if [ -f "$KCONF" ] && ! grep -q '^CONFIG_INTEL_IOMMU=y' "$KCONF"; then
			echo "vm.sh: warning: VM_IOMMU=1 but $KERNEL has no CONFIG_INTEL_IOMMU: the guest will not use the IOMMU" >&2
		fi
	fi
	local QOPTS="$FW -qmp unix:$QMP_SOCK,server=on,wait=off $IOMMU ${NET[*]}"
	# TCG threading (see VM_TCG_THREAD above); vng passes no -accel without KVM
	local TCG_THREAD=${VM_TCG_THREAD-multi}
	case "$TCG_THREAD" in
	multi | single | "") ;;
	*) die "VM_TCG_THREAD=$TCG_THREAD: multi, single or empty" ;;
	esac
	case " ${VM_EXTRA_QEMU_OPTS:-} " in
	*" -accel "*) TCG_THREAD="" ;;
	esac
	[ -z "$TCG_THREAD" ] || QOPTS="$QOPTS -accel tcg,thread=$TCG_THREAD"
	echo "vm.sh: tcg thread=${TCG_THREAD:-(QEMU default or VM_EXTRA_QEMU_OPTS)}" >&2
	QOPTS="$QOPTS ${VM_EXTRA_QEMU_OPTS:-}"

	# the guest command: cd to the repo, export env, run
	if [ -n "${MODDIR:-}" ]; then
		ENVS+=("LAN743X_MODDIR=$(cd "$MODDIR" && pwd)")
	fi
	for a in "${KOS[@]}"; do
		[ -f "${a#*=}" ] || die "--ko $a: no such file"
		ENVS+=("LAN743X_KO_$(ko_var "${a%%=*}")=$(realpath "${a#*=}")")
	done
	GCMD="cd $(printf %q "$ROOT") && export"
	for v in "${ENVS[@]}"; do GCMD="$GCMD ${v%%=*}=$(printf %q "${v#*=}")"; done
	# newer guest tools fetched by the lab (lab/common.sh guest_tools) first
	local TOOLS=${LAN743X_LAB_CACHE:-$HOME/.cache/lan743x-lab}/tools/bin
	[ ! -d "$TOOLS" ] || GCMD="$GCMD PATH=$(printf %q "$TOOLS"):\$PATH"
	GCMD="$GCMD &&"
	for a in "$@"; do GCMD="$GCMD $(printf %q "$a")"; done
	# virtme-ng passes the command base64-encoded on the kernel command line,
	# whose end (init=...) x86 cuts at 2048 bytes: a long command (a bench of
	# five modules with their paths) then panicked the guest with "Requested
	# init ... failed". A long command goes into a script in the repository
	# (the guest sees it at the same path) and the command line names it.
	if [ "$(printf %s "$GCMD" | base64 -w0 | wc -c)" -gt 1024 ]; then
		mkdir -p "$ROOT/results"
		CMDFILE=$(mktemp "$ROOT/results/.vm-cmd.XXXXXX")
		printf '%s\n' "$GCMD" >"$CMDFILE"
		echo "vm.sh: guest command of ${#GCMD} bytes run from $CMDFILE" >&2
		GCMD="bash $(printf %q "$CMDFILE")"
	fi

	# virtme-ng mounts the root with rootflags=... and no cache option; a later
	# rootflags= on the command line replaces it (the kernel keeps the last)
	case "${VM_ROOT_CACHE:-loose}" in
	none) APPEND="" ;;
	loose) APPEND="rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose" ;;
	*) die "VM_ROOT_CACHE=$VM_ROOT_CACHE: loose or none" ;;
	esac
	# no_timer_check: the boot's IO-APIC timer check waits a fixed number
	# of TSC cycles for timer ticks; a TCG vCPU that the loaded host does
	# not run meanwhile sees none, and the kernel panics ("IO-APIC + timer
	# doesn't work") before any driver loads. Virtual machines boot with
	# it for that reason; the timer works.
	APPEND="$APPEND no_timer_check${APPEND_IOMMU:+ $APPEND_IOMMU}${VM_APPEND:+ $VM_APPEND}"
	APPEND=${APPEND# }
	set +e
	# vng --verbose sends the kernel console to stderr: its lines go to
	# $CONSOLE_LOG, and to stderr only with VM_VERBOSE; everything else (the
	# guest command's stderr) passes through (klog_filter.awk)
	QEMU_STATUS=$(mktemp /tmp/lan743x-lab-qemu-status.XXXXXX)
	LAB_QEMU="$QEMU" LAB_QEMU_STATUS="$QEMU_STATUS" \
	timeout --foreground -k 10 "${VM_TIMEOUT:-1800}" \
		vng -r "$KERNEL" --qemu "$LAB/vm/qemu-status.sh" --disable-kvm --disable-microvm \
		--cpus "${VM_CPUS:-2}" --memory "${VM_MEM:-2G}" \
		${APPEND:+--append "$APPEND"} --verbose \
		${VM_RWDIR:+--rwdir "$VM_RWDIR"} \
		--qemu-opts="$QOPTS" -e "$GCMD" \
		2> >(awk -v klog="$CONSOLE_LOG" -v verbose="${VM_VERBOSE:-}" \
			-f "$LAB/vm/klog_filter.awk")
	rc=$?
	set -e
	wait  # the console filter has written everything
	qemu_rc=$(cat "$QEMU_STATUS" 2>/dev/null || true)
	rm -f "$QEMU_STATUS"
	[ -z "$CMDFILE" ] || rm -f "$CMDFILE"
}

# armv7: QEMU virt, an initramfs, the non-coherent device tree; sets rc
boot_armv7() {
	local a v tmp ov cmd node dtb
	command -v fdtput >/dev/null || die "fdtput not found (device-tree-compiler; make setup)"
	command -v cpio >/dev/null || die "cpio not found (make setup)"
	if [ -z "${KERNEL:-}" ]; then
		KERNEL=$(env -u ARCH LAB_BASE=${LAB_BASE:-7.3} bash "$LAB/kernel/kbuild.sh" kernel armv7-virt | tail -1) ||
			die "lab/kernel/kbuild.sh kernel armv7-virt failed"
	fi
	if [ -d "$KERNEL" ]; then
		MODDIR=${MODDIR:-$KERNEL/mods}
		KERNEL=$KERNEL/arch/arm/boot/zImage
	fi
	[ -f "$KERNEL" ] || die "KERNEL=$KERNEL does not exist"
	if [ -z "${ROOTFS:-}" ]; then
		ROOTFS=$(env -u ARCH bash "$LAB/vm/rootfs-arm.sh" | tail -1) || die "lab/vm/rootfs-arm.sh failed"
	fi
	[ -s "$ROOTFS" ] || die "ROOTFS=$ROOTFS missing"
	echo "vm.sh: kernel=$KERNEL" >&2
	echo "vm.sh: rootfs=$ROOTFS" >&2

	tmp=$(mktemp -d /tmp/lan743x-arm.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	ov=$tmp/ov
	mkdir -p "$ov/lab-root" "$ov/ko"
	cp -a "$LAB" "$ov/lab-root/lab"
	find "$ov/lab-root/lab" -name __pycache__ -type d -prune -exec rm -rf {} +
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
	for a in "${KOS[@]}"; do
		[ -f "${a#*=}" ] || die "--ko $a: no such file"
		mkdir -p "$ov/ko/${a%%=*}"
		cp "${a#*=}" "$ov/ko/${a%%=*}/lan743x.ko"
		ENVS+=("LAN743X_KO_$(ko_var "${a%%=*}")=/ko/${a%%=*}/lan743x.ko")
	done
	for v in "${ENVS[@]}"; do
		echo "export ${v%%=*}=$(printf %q "${v#*=}")"
	done >"$ov/lab-env"
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
		-kernel "$KERNEL" -initrd "$tmp/initrd.cpio")
	# the device tree: QEMU's own, less the pcie node's dma-coherent. The
	# dump runs without the network: a tap backend would create the host's
	# tap devices (VM_PARTNER_TAP, VM_MGMT_TAP) for this short run, and a
	# host that set one up would lose it when the dump exits
	dtb=$tmp/virt.dtb
	"${Q[@]}" -M virt,highmem=off,dumpdtb="$dtb" >/dev/null 2>&1 || true
	Q+=("${NET[@]}")
	[ -s "$dtb" ] || die "qemu could not dump the virt device tree"
	node=$(dtc -I dtb -O dts "$dtb" 2>/dev/null | awk '/^\tpcie@[0-9a-f]+ \{/ && !n++ {print $1}')
	[ -n "$node" ] || die "no pcie node in the virt device tree"
	if [ "${VM_ARM_COHERENT:-0}" = 1 ]; then
		echo "vm.sh: PCIe DMA coherent (QEMU's DT: /$node has dma-coherent)" >&2
	else
		fdtput -d "$dtb" "/$node" dma-coherent || die "fdtput -d /$node dma-coherent failed"
		! fdtget -p "$dtb" "/$node" | grep -qx dma-coherent || die "dma-coherent still in /$node"
		echo "vm.sh: PCIe DMA NON-coherent (dma-coherent removed from /$node)" >&2
	fi

	local EXTRA=()
	read -r -a EXTRA <<<"${VM_EXTRA_QEMU_OPTS:-}"
	Q+=("${EXTRA[@]}")

	# mawk (Debian's awk) reads a pipe in blocks: -W interactive passes each
	# console line on as it comes (lab/bench/bench.py answers requests on them)
	local AWK_LIVE=()
	case "$(awk -W version 2>/dev/null)" in *mawk*) AWK_LIVE=(-W interactive) ;; esac
	set +e
	timeout --foreground -k 10 "${VM_TIMEOUT:-3600}" \
		"${Q[@]}" -qmp "unix:$QMP_SOCK,server=on,wait=off" -dtb "$dtb" -serial stdio \
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
	echo "vm.sh: qemu exit status $rc" >&2
	crashed && return 0
	rc=$(grep -a -o '^LAN743X-ARM-EXIT=[0-9]*' "$CONSOLE_LOG" | tail -1 | cut -d= -f2 || true)
	if [ -z "$rc" ]; then
		echo "vm.sh: the guest reported no exit status (timeout or crash); console tail:" >&2
		tail -30 "$CONSOLE_LOG" | sed 's/^/vm.sh: | /' >&2
		rc=86
		return 0
	fi
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
		echo "vm.sh: the guest's /out is in $VM_ARM_OUT ($(stat -c %s "$tmp/out.tgz") bytes)" >&2
	fi
}

# crashed: the guest kernel panicked (the lab's kernels panic on oops), so
# the guest command could not report its status: the oops lines on stderr
crashed() {
	grep -q "Kernel panic - not syncing" "$CONSOLE_LOG" || return 1
	echo "vm.sh: GUEST CRASHED (console: $CONSOLE_LOG):" >&2
	grep -a -E -A25 "Oops|BUG: |Kernel panic|general protection fault|Internal error" "$CONSOLE_LOG" |
		head -60 | sed 's/^/vm.sh: | /' >&2
	KEEP_CONSOLE=1
	rc=86
}

# x86_64: vng's 255 without a panic on the console: the guest ended before
# its command did (QEMU killed, an assertion in the model, a reset): say how
# QEMU ended and what the console said last
no_status() {
	local how="QEMU exit status ${qemu_rc:-unknown}"
	[ "$rc" = 255 ] || return 0
	if [ -n "$qemu_rc" ] && [ "$qemu_rc" -gt 128 ]; then
		how="$how (signal $((qemu_rc - 128)))"
	fi
	echo "vm.sh: the guest command left no exit status and the console shows" \
		"no panic; $how; the console's last lines:" >&2
	tail -n 20 "$CONSOLE_LOG" | sed 's/^/vm.sh: | /' >&2
	KEEP_CONSOLE=1
}

# Whole body in functions so bash parses it before running: the script can
# be edited while a (long) VM run is in progress.
main() {
local LAB ROOT a rc=0 qemu_rc= KEEP_CONSOLE=0 KOS=() FILES=() DIRS=() NET=() ENVS=() v
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$LAB/.." && pwd)

while [ $# -gt 0 ]; do
	case "$1" in
	-r | --kernel) KERNEL=$2; shift 2 ;;
	--moddir) MODDIR=$2; shift 2 ;;
	--qmp) QMP_SOCK=$2; shift 2 ;;
	--qemu) QEMU=$2; shift 2 ;;
	--ko) KOS+=("$2"); shift 2 ;;
	--file) FILES+=("$2"); shift 2 ;;
	--dir) DIRS+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "usage: lab/vm/vm.sh [-r KERNEL] [--moddir DIR] [--qmp SOCK] [--qemu BIN] [--ko NAME=PATH]... [--file SRC=DEST]... [--dir SRC=DEST]... [--] <guest command...>"
local arch=${ARCH:-x86_64} qarch
case "$arch" in
x86_64) qarch=x86_64 ;;
armv7) qarch=arm ;;
*) die "ARCH=$arch: x86_64 or armv7" ;;
esac
echo "vm.sh: arch=$arch" >&2

if [ -z "${QEMU:-}" ]; then
	QEMU=$(env -u ARCH bash "$ROOT/emulator/build.sh" --arch "$qarch" | tail -1) ||
		die "emulator/build.sh --arch $qarch failed"
fi
[ -x "$QEMU" ] || die "QEMU=$QEMU not executable"
echo "vm.sh: qemu=$QEMU" >&2
QMP_SOCK=${QMP_SOCK:-/tmp/lan743x-lab-qmp-$$.sock}
rm -f "$QMP_SOCK"
export QMP_SOCK
echo "vm.sh: QMP_SOCK=$QMP_SOCK  (qom-get path=/machine/peripheral/dut property=counters)" >&2

# the model's counters at QEMU's exit: a run ends with no descriptor error
DUT_REPORT=$(mktemp /tmp/lan743x-lab-dut.XXXXXX)
: >"$DUT_REPORT"
# the DUT and the virtio-net peer on one QEMU hub
DUT_MAC=${DUT_MAC:-02:74:30:00:00:01}
PEER_MAC=${PEER_MAC:-02:74:30:00:00:02}
NET=(-netdev hubport,id=p0,hubid=0 -netdev hubport,id=p1,hubid=0
	-device "${DUT_DEVICE:-lan7430},id=dut,netdev=p0,mac=$DUT_MAC,exit-report=$DUT_REPORT${DUT_OPTS:-}"
	-device "virtio-net-pci,id=peer,netdev=p1,mac=$PEER_MAC,romfile=")
# VM_PARTNER_TAP=IFNAME: the DUT wired to a host tap device of that name
# instead (lab/vm/partner.sh moves it into the link partner's network
# namespace); the virtio-net peer stays, alone on the hub
if [ -n "${VM_PARTNER_TAP:-}" ]; then
	[[ "$VM_PARTNER_TAP" =~ ^[A-Za-z0-9_.-]{1,15}$ ]] ||
		die "VM_PARTNER_TAP=$VM_PARTNER_TAP: not an interface name"
	NET[1]="tap,id=p0,ifname=$VM_PARTNER_TAP,script=no,downscript=no"
fi
if [ -n "${VM_MGMT_TAP:-}" ]; then
	[[ "$VM_MGMT_TAP" =~ ^[A-Za-z0-9_.-]{1,15}$ ]] ||
		die "VM_MGMT_TAP=$VM_MGMT_TAP: not an interface name"
	[ "$VM_MGMT_TAP" != "${VM_PARTNER_TAP:-}" ] ||
		die "VM_MGMT_TAP and VM_PARTNER_TAP name the same device"
	NET[3]="tap,id=p1,ifname=$VM_MGMT_TAP,script=no,downscript=no"
fi
# the guest command's environment
ENVS=("LAN743X_DUT_MAC=$DUT_MAC" "LAN743X_PEER_MAC=$PEER_MAC")
for v in $(compgen -e | grep -E '^(E2E_|LAN743X_)' || true); do
	ENVS+=("$v=${!v}")
done
# the kernel console, always kept: a crash is reported with its oops lines
CONSOLE_LOG=${VM_CONSOLE_LOG:-$(mktemp /tmp/lan743x-lab-console.XXXXXX)}
: >"$CONSOLE_LOG"

"boot_$arch" "$@"
rm -f "$QMP_SOCK"
local drc=0
python3 "$LAB/vm/dut_report.py" "$DUT_REPORT" || drc=$?
rm -f "$DUT_REPORT"
if [ "$drc" = 1 ] && [ "$rc" = 0 ]; then
	rc=87
fi
[ "$arch" = armv7 ] || crashed || no_status
echo "vm.sh: guest exit status $rc" >&2
[ -n "${VM_CONSOLE_LOG:-}" ] || [ "$KEEP_CONSOLE" = 1 ] || rm -f "$CONSOLE_LOG"
return "$rc"
}
main "$@"
exit $?
