#!/bin/bash
# Boot a virtme-ng guest with our QEMU (built by emulator/build.sh) and a
# LAN7430 DUT, wired through a QEMU hub to a virtio-net peer; run a command
# in the guest and return its exit status.
#
# usage: lab/vm/vm.sh [-r|--kernel PATH] [--moddir DIR] [--qmp SOCK] [--qemu BIN]
#                  [--] <guest command...>
#        lab/vm/vm.sh lab/guest/e2e.sh
#
# environment:
#   KERNEL     bzImage path or kernel build dir (default: newest Debian 6.12
#              /boot/vmlinuz-6.12*)
#   MODDIR     optional module tree for the guest: either a dir containing
#              lib/modules/<ver> (modprobe -d), or a dir holding lan743x.ko.
#              Exported to the guest as LAN743X_MODDIR.
#   QEMU       QEMU binary (default: output of emulator/build.sh)
#   QMP_SOCK   QMP unix socket path (default /tmp/lan743x-lab-qmp-$$.sock);
#              printed on stderr, exported to the guest command's host env.
#   VM_CPUS    default 2        VM_MEM  default 2G
#   VM_TIMEOUT seconds, default 1800
#   DUT_MAC    default 02:74:30:00:00:01, PEER_MAC default 02:74:30:00:00:02
#   DUT_OPTS   extra ",prop=val" for -device lan7430 (e.g. ",msix=off")
#   DUT_DEVICE the model's variant: lan7430 (default) or lan7431
#              (emulator/README.md "Variants"); id stays "dut"
#   VM_TCG_THREAD  TCG threading: "multi" (default: MTTCG, one host thread
#              per vCPU, QEMU's own default) or "single" (every vCPU in one
#              host thread, -accel tcg,thread=single: the cure the issue 18
#              reports for INT3 oopses of live text patching; it changes the
#              bench's per-packet counts, see README-crash-notes.md); empty:
#              no -accel option. Ignored when VM_EXTRA_QEMU_OPTS has an -accel.
#   VM_EXTRA_QEMU_OPTS  extra QEMU arguments
#   VM_APPEND  extra kernel command line
#   VM_ROOT_CACHE  the 9p cache mode of the guest's root (the host's, read
#              only): "loose" (default) lets the guest keep the files and
#              directory entries it read; "none" is virtme-ng's own (every
#              lookup and read a round trip to the host: under TCG a
#              process start took 1-9 s, see README "Time"). The guest
#              then does not see a file the host changes under the root
#              during the run; results and the bench's requests use
#              VM_RWDIR, a mount of its own, which this does not change.
#   E2E_*, LAN743X_*  forwarded into the guest command's environment
#   VM_VERBOSE non-empty: show the guest's kernel console (panics)
#   VM_RWDIR   a host directory the guest may write (results, bench RPC)
#   VM_CONSOLE_LOG  file that keeps the guest's kernel console (default: a
#              temporary file, removed unless the guest crashed)
#
# exit status: the guest command's; 2 for a usage error; 86 when the guest
# kernel crashed (a panic; the lab's kernels panic on oops): the
# console lines of the crash are printed on stderr, so that a runner can
# tell a crash of the (emulated) machine from a test result and retry.
set -euo pipefail

# Whole body in a function so bash parses it before running: the script can
# be edited while a (long) VM run is in progress.
main() {

local v LAB ROOT QOPTS GCMD FW APPEND rc a d CMDFILE
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$LAB/.." && pwd)
die() { echo "vm.sh: error: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    -r|--kernel) KERNEL=$2; shift 2 ;;
    --moddir) MODDIR=$2; shift 2 ;;
    --qmp) QMP_SOCK=$2; shift 2 ;;
    --qemu) QEMU=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || die "usage: lab/vm/vm.sh [-r KERNEL] [--moddir DIR] [--qmp SOCK] [--qemu BIN] [--] <guest command...>"
command -v vng >/dev/null || die "virtme-ng (vng) not found"

if [ -z "${KERNEL:-}" ]; then
    KERNEL=$(ls -1 /boot/vmlinuz-6.12* 2>/dev/null | sort -V | tail -1 || true)
    [ -n "$KERNEL" ] || die "no KERNEL given and no /boot/vmlinuz-6.12*"
fi
[ -e "$KERNEL" ] || die "KERNEL=$KERNEL does not exist"

if [ -z "${QEMU:-}" ]; then
    QEMU=$("$ROOT/emulator/build.sh" | tail -1) || die "emulator/build.sh failed"
fi
[ -x "$QEMU" ] || die "QEMU=$QEMU not executable"

QMP_SOCK=${QMP_SOCK:-/tmp/lan743x-lab-qmp-$$.sock}
rm -f "$QMP_SOCK"
export QMP_SOCK
echo "vm.sh: qemu=$QEMU" >&2
echo "vm.sh: kernel=$KERNEL" >&2
echo "vm.sh: QMP_SOCK=$QMP_SOCK  (qom-get path=/machine/peripheral/dut property=counters)" >&2

DUT_MAC=${DUT_MAC:-02:74:30:00:00:01}
PEER_MAC=${PEER_MAC:-02:74:30:00:00:02}

# firmware: Debian's seabios + qemu data (our build has no pc-bios blobs)
FW=""
for d in /usr/share/seabios /usr/share/qemu /usr/lib/ipxe/qemu; do
    [ -d "$d" ] && FW="$FW -L $d"
done

QOPTS="$FW -qmp unix:$QMP_SOCK,server=on,wait=off"
QOPTS="$QOPTS -netdev hubport,id=p0,hubid=0 -netdev hubport,id=p1,hubid=0"
QOPTS="$QOPTS -device ${DUT_DEVICE:-lan7430},id=dut,netdev=p0,mac=$DUT_MAC${DUT_OPTS:-}"
QOPTS="$QOPTS -device virtio-net-pci,id=peer,netdev=p1,mac=$PEER_MAC,romfile="
# the kernel console, always kept: a crash is reported with its oops lines
CONSOLE_LOG=${VM_CONSOLE_LOG:-$(mktemp /tmp/lan743x-lab-console.XXXXXX)}
: >"$CONSOLE_LOG"
# TCG threading (see VM_TCG_THREAD above); vng passes no -accel without KVM
TCG_THREAD=${VM_TCG_THREAD-multi}
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

# Build the guest command: cd to the repo, export env, run.
GCMD="cd $(printf %q "$ROOT") && export LAN743X_DUT_MAC=$DUT_MAC LAN743X_PEER_MAC=$PEER_MAC"
for v in $(compgen -e | grep -E '^(E2E_|LAN743X_)' || true); do
    GCMD="$GCMD $v=$(printf %q "${!v}")"
done
if [ -n "${MODDIR:-}" ]; then
    GCMD="$GCMD LAN743X_MODDIR=$(printf %q "$(cd "$MODDIR" && pwd)")"
fi
# newer guest tools fetched by the lab (lab/common.sh guest_tools) first
TOOLS=${LAN743X_LAB_CACHE:-$HOME/.cache/lan743x-lab}/tools/bin
[ ! -d "$TOOLS" ] || GCMD="$GCMD PATH=$(printf %q "$TOOLS"):\$PATH"
GCMD="$GCMD &&"
for a in "$@"; do GCMD="$GCMD $(printf %q "$a")"; done
# virtme-ng passes the command base64-encoded on the kernel command line,
# whose end (init=...) x86 cuts at 2048 bytes: a long command (a bench of
# five modules with their paths) then panicked the guest with "Requested
# init ... failed". A long command goes into a script in the repository
# (the guest sees it at the same path) and the command line names it.
CMDFILE=""
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
APPEND="$APPEND${VM_APPEND:+ $VM_APPEND}"
APPEND=${APPEND# }
set +e
# vng --verbose sends the kernel console to stderr: its lines (the kernel's
# "[ secs.usecs] " prefix) go to $CONSOLE_LOG, and to stderr only with
# VM_VERBOSE; everything else (the guest command's stderr) passes through
timeout --foreground -k 10 "${VM_TIMEOUT:-1800}" \
    vng -r "$KERNEL" --qemu "$QEMU" --disable-kvm --disable-microvm \
        --cpus "${VM_CPUS:-2}" --memory "${VM_MEM:-2G}" \
        ${APPEND:+--append "$APPEND"} --verbose \
        ${VM_RWDIR:+--rwdir "$VM_RWDIR"} \
        --qemu-opts="$QOPTS" -e "$GCMD" \
    2> >(awk -v klog="$CONSOLE_LOG" -v verbose="${VM_VERBOSE:-}" '
        /^\[ *[0-9]+\.[0-9]+\] / || /^(early console|input_data|input_len|output|output_len|kernel_total_size|needed_size|trampoline_32bit|Decompressing|Booting the kernel)/ {
            print >> klog; fflush(klog)
            if (verbose == "") next
        }
        { print > "/dev/stderr"; fflush("/dev/stderr") }')
rc=$?
set -e
wait  # the console filter has written everything
rm -f "$QMP_SOCK"
[ -z "$CMDFILE" ] || rm -f "$CMDFILE"
echo "vm.sh: guest exit status $rc" >&2
# a crash: the kernel panicked (the lab's kernels panic on oops), so the
# guest command could not report its status
if grep -q "Kernel panic - not syncing" "$CONSOLE_LOG"; then
	echo "vm.sh: GUEST CRASHED (console: $CONSOLE_LOG):" >&2
	grep -E -A25 "Oops|BUG: |Kernel panic|general protection fault" "$CONSOLE_LOG" |
		head -60 | sed 's/^/vm.sh: | /' >&2
	[ -s "$CONSOLE_LOG" ] || echo "vm.sh: | (empty console)" >&2
	return 86
fi
[ -n "${VM_CONSOLE_LOG:-}" ] || rm -f "$CONSOLE_LOG"
return $rc
}
main "$@"
exit $?
