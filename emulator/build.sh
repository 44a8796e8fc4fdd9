#!/bin/bash
# Build Debian's QEMU (source package from apt) with the lan7430 device model.
# Idempotent.  Prints the path of the resulting qemu-system-x86_64 on stdout
# (last line); progress goes to stderr.
#
#   emulator/build.sh            qemu-system-x86_64 (x86_64-softmmu)
#   emulator/build.sh --arch arm qemu-system-arm (arm-softmmu, the ARMv7 guest)
#   (or LAN743X_QEMU_ARCH=arm)
#
# Cache layout (outside the clone):
#   $CACHE/src/<qemu-pkg-version>/         unpacked source + build/ (x86_64)
#                                          and build-arm/ (arm), incremental
#   $CACHE/qemu/<key>/qemu-system-x86_64   installed snapshot for one input set
#   $CACHE/qemu/<key>/qemu-system-arm      the same input set's ARM binary
# LAN743X_BUILD_FORCE=1 skips the warm-cache shortcut (re-syncs the tree).
# key = sha256(qemu source version + emulator/*.c *.h trace-events
#              + build.sh + tests/*.c)
set -euo pipefail

ARCH=${LAN743X_QEMU_ARCH:-x86_64}
if [ "${1:-}" = --arch ]; then ARCH=${2:-}; shift 2 || true; fi
case "$ARCH" in
x86_64) TARGET=x86_64-softmmu BUILDDIR=build ;;
arm) TARGET=arm-softmmu BUILDDIR=build-arm ;;
*) echo "build.sh: error: --arch x86_64|arm (got '$ARCH')" >&2; exit 1 ;;
esac
BIN=qemu-system-$ARCH

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${LAN743X_LAB_CACHE:-$HOME/.cache/lan743x-lab}
JOBS=${JOBS:-2}
T0=$(date +%s%N)
log() {
    local ms=$(( ($(date +%s%N) - T0) / 1000000 ))
    printf '[build.sh %4d.%01ds] %s\n' $((ms / 1000)) $(((ms % 1000) / 100)) "$*" >&2
}
die() { echo "build.sh: error: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "missing tool '$1' (install: $2)"; }

need sha256sum coreutils
need apt-get apt
need dpkg-source dpkg-dev
need ninja ninja-build
need meson meson
need python3 python3
need pkg-config pkg-config
need cc gcc

# Version of the qemu source package apt would give us.  Cheap: apt-cache
# madison reads local lists only.  Fall back to a recorded version.
src_version() {
    local v
    v=$(apt-cache showsrc qemu 2>/dev/null | awk '/^Version:/{print $2; exit}') || true
    if [ -z "$v" ]; then
        v=$(cat "$CACHE/src/.last-version" 2>/dev/null || true)
    fi
    echo "$v"
}

input_hash() {
    {
        echo "qemu=$1"
        for f in "$HERE"/*.c "$HERE"/*.h "$HERE"/trace-events "$HERE"/build.sh \
                 "$HERE"/tests/*.c; do
            [ -f "$f" ] || continue
            echo "== ${f#$HERE/}"
            cat "$f"
        done
    } | sha256sum | cut -c1-16
}

# ---- fast path: warm cache ----------------------------------------------
# print the cached binary for the last source version and exit, if built
cached_exit() {
    local ver key
    ver=$(cat "$CACHE/src/.last-version" 2>/dev/null || true)
    [ -n "$ver" ] && [ -z "${LAN743X_BUILD_FORCE:-}" ] || return 0
    key=$(input_hash "$ver")
    if [ -x "$CACHE/qemu/$key/$BIN" ]; then
        echo "$CACHE/qemu/$key/$BIN"
        exit 0
    fi
}
cached_exit

# ---- one build at a time -----------------------------------------------
# Taken before apt: two cold builds at once (make test's two xdist workers)
# ran apt-get update together, and the second failed on apt's lists lock.
# Every clone of the lab (and both targets) copies its emulator sources into
# the same tree: without a lock, another clone's copy made during our ninja
# run links a binary from two versions (seen: lan7430.c of one clone, the
# trace events of another -> undefined trace_lan743x_* at link time).
mkdir -p "$CACHE/src"
exec 8>"$CACHE/src/qemu-build.lock"
if ! flock -n 8; then
    log "waiting for another QEMU build"
    flock 8
    cached_exit     # the other build may have made ours
fi

# apt's own lock may be held by something else (a package install): wait
apt_update() {
    local i
    for i in 1 2 3 4 5 6; do
        apt-get update -qq >&2 && return 0
        log "apt-get update failed (try $i of 6; apt busy?): retrying in 10 s"
        sleep 10
    done
    return 1
}

# ---- deb-src -------------------------------------------------------------
SRCLIST=/etc/apt/sources.list.d/lan743x-lab-src.sources
if ! apt-cache showsrc qemu >/dev/null 2>&1 || [ -z "$(apt-cache showsrc qemu 2>/dev/null)" ]; then
    if [ ! -f "$SRCLIST" ]; then
        log "adding deb-src entry $SRCLIST"
        [ -w /etc/apt/sources.list.d ] || die "need root to add $SRCLIST"
        cat > "$SRCLIST" <<'EOS'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
    fi
    log "apt-get update"
    apt_update || die "apt-get update failed"
fi
VER=$(src_version)
[ -n "$VER" ] || die "cannot determine qemu source package version (deb-src?)"
UPVER=${VER#*:}; UPVER=${UPVER%%-*}; UPVER=${UPVER%%+*}
KEY=$(input_hash "$VER")
OUT="$CACHE/qemu/$KEY"
if [ -x "$OUT/$BIN" ] && [ -z "${LAN743X_BUILD_FORCE:-}" ]; then
    mkdir -p "$CACHE/src"; echo "$VER" > "$CACHE/src/.last-version"
    echo "$OUT/$BIN"; exit 0
fi
log "qemu source $VER, key $KEY, target $TARGET"

# ---- source tree (one per qemu version, reused for incremental builds) ---
SRCROOT="$CACHE/src/$(echo "$VER" | tr ':~+' '___')"
mkdir -p "$SRCROOT"
SRC=$(find "$SRCROOT" -maxdepth 1 -mindepth 1 -type d -name 'qemu-*' | head -1)
if [ -z "$SRC" ] || [ ! -f "$SRC/.lan743x-unpacked" ]; then
    log "apt-get source qemu=$VER (into $SRCROOT)"
    rm -rf "$SRCROOT"; mkdir -p "$SRCROOT"
    (cd "$SRCROOT" && apt-get source -qq "qemu=$VER" >&2) || die "apt-get source qemu failed"
    SRC=$(find "$SRCROOT" -maxdepth 1 -mindepth 1 -type d -name 'qemu-*' | head -1)
    [ -n "$SRC" ] || die "no unpacked qemu tree in $SRCROOT"
    touch "$SRC/.lan743x-unpacked"
fi

# ---- integrate our device -------------------------------------------------
copy_if_changed() { cmp -s "$1" "$2" 2>/dev/null || cp "$1" "$2"; }
# The model: this revision's compilation units (lan7430*.c) and headers.
# The tree is shared by every revision of the model (each clone, each
# commit built), so files this revision does not have are removed: older
# revisions were one unit, lan7430.c, #including lan7430-*.c.inc parts.
UNITS=()
for f in "$HERE"/lan7430*.c "$HERE"/lan7430*.h; do
    [ -f "$f" ] || continue
    copy_if_changed "$f" "$SRC/hw/net/$(basename "$f")"
    case "$f" in *.c) UNITS+=("$(basename "$f")") ;; esac
done
[ ${#UNITS[@]} -gt 0 ] || die "no emulator/lan7430*.c"
for f in "$SRC"/hw/net/lan7430*.c "$SRC"/hw/net/lan7430*.c.inc "$SRC"/hw/net/lan7430*.h; do
    if [ -f "$f" ] && [ ! -f "$HERE/$(basename "$f")" ]; then
        rm -f "$f"
    fi
done

# trace-events: keep the original once, append ours between markers.
[ -f "$SRC/hw/net/trace-events.orig" ] || cp "$SRC/hw/net/trace-events" "$SRC/hw/net/trace-events.orig"
TMP=$(mktemp)
{ cat "$SRC/hw/net/trace-events.orig"; echo; echo "# lan7430.c"; cat "$HERE/trace-events"; } > "$TMP"
copy_if_changed "$TMP" "$SRC/hw/net/trace-events"; rm -f "$TMP"

# hw/net/meson.build: one line naming this revision's units, replaced on
# every build.  The build.sh of an older revision appends its line
# (files('lan7430.c')) only when no line mentions lan7430 and keeps any
# other, so that one-unit line is put back when this script ends (also on
# failure): an older revision built next then reconfigures and compiles
# its lan7430.c alone, not this revision's units beside it.
MESON_BUILD="$SRC/hw/net/meson.build"
meson_line() {
    local f list=""
    for f in "$@"; do list="$list${list:+, }'$f'"; done
    echo "softmmu_ss.add(when: 'CONFIG_LAN7430_PCI', if_true: files($list))"
}
set_meson_line() {
    python3 - "$MESON_BUILD" "$1" <<'EOP'
import re, sys
path, line = sys.argv[1], sys.argv[2]
s = open(path).read()
pat = re.compile(r"^softmmu_ss\.add\(when: 'CONFIG_LAN7430_PCI'.*$", re.M)
new = pat.sub(lambda m: line, s) if pat.search(s) else s + line + "\n"
if new != s:
    open(path, "w").write(new)
EOP
}
ONE_UNIT_LINE=$(meson_line lan7430.c)
set_meson_line "$(meson_line "${UNITS[@]}")"
trap 'set_meson_line "$ONE_UNIT_LINE"' EXIT
if ! grep -q LAN7430 "$SRC/hw/net/Kconfig"; then
    printf '\nconfig LAN7430_PCI\n    bool\n    default y if PCI_DEVICES\n    depends on PCI && MSI_NONBROKEN\n' >> "$SRC/hw/net/Kconfig"
fi
# QEMU 7.2 core fix: qemu_flush_or_purge_queued_packets() flushes a hub
# peer's queues before the client's own incoming queue, so frames that were
# held back (receive returned 0) are overtaken by later ones -> reordering on
# any NIC behind a hub (seen as TCP OFO/DSACK on the virtio-net peer).
# Flush our own queue first, then the hub.
python3 - "$SRC/net/net.c" <<'EOP'
import sys
p = sys.argv[1]; s = open(p).read()
if "lan743x-lab" not in s:
    old = """    nc->receive_disabled = 0;

    if (nc->peer && nc->peer->info->type == NET_CLIENT_DRIVER_HUBPORT) {
        if (net_hub_flush(nc->peer)) {
            qemu_notify_event();
        }
    }
    if (qemu_net_queue_flush(nc->incoming_queue)) {
        /* We emptied the queue successfully, signal to the IO thread to repoll
         * the file descriptor (for tap, for example).
         */
        qemu_notify_event();
    } else if (purge) {
        /* Unable to empty the queue, purge remaining packets */
        qemu_net_queue_purge(nc->incoming_queue, nc->peer);
    }
"""
    new = """    nc->receive_disabled = 0;

    /* lan743x-lab: own queue first, then the hub, to keep frame order */
    if (qemu_net_queue_flush(nc->incoming_queue)) {
        /* We emptied the queue successfully, signal to the IO thread to repoll
         * the file descriptor (for tap, for example).
         */
        qemu_notify_event();
    } else if (purge) {
        /* Unable to empty the queue, purge remaining packets */
        qemu_net_queue_purge(nc->incoming_queue, nc->peer);
    }
    if ((purge || !nc->receive_disabled) &&
        nc->peer && nc->peer->info->type == NET_CLIENT_DRIVER_HUBPORT) {
        if (net_hub_flush(nc->peer)) {
            qemu_notify_event();
        }
    }
"""
    if old not in s:
        sys.exit("net/net.c: flush-order patch does not apply")
    s = s.replace(old, new)
    open(p, "w").write(s)
EOP
[ $? -eq 0 ] || die "net/net.c patch failed"

# qtests
if [ -d "$HERE/tests" ]; then
    for t in "$HERE"/tests/*.c; do
        [ -f "$t" ] || continue
        copy_if_changed "$t" "$SRC/tests/qtest/$(basename "$t")"
    done
    if [ -f "$HERE/tests/lan7430-test.c" ] && ! grep -q lan7430-test "$SRC/tests/qtest/meson.build"; then
        python3 - "$SRC/tests/qtest/meson.build" <<'EOP'
import sys,re
p=sys.argv[1]; s=open(p).read()
# add to the x86_64 qtest list
s=s.replace("qtests_x86_64 = qtests_i386", "qtests_x86_64 = qtests_i386 + (config_all_devices.has_key('CONFIG_LAN7430_PCI') ? ['lan7430-test'] : [])",1)
open(p,'w').write(s)
EOP
    fi
fi

# ---- configure --------------------------------------------------------------
BUILD="$SRC/$BUILDDIR"
CONF_ARGS=(--target-list=$TARGET
    --disable-docs --disable-werror --disable-debug-info
    --disable-gtk --disable-sdl --disable-vnc --disable-spice --disable-opengl
    --disable-usb-redir --disable-libusb --disable-smartcard --disable-curses
    --audio-drv-list= --disable-tools --disable-guest-agent
    --disable-slirp --disable-capstone --disable-xen --disable-rbd
    --disable-glusterfs --disable-libiscsi --disable-libnfs --disable-libssh
    --disable-curl --disable-gnutls --disable-nettle --disable-gcrypt
    --disable-vde --disable-brlapi --disable-virglrenderer --disable-vte
    --disable-bpf --disable-linux-io-uring --disable-fuse --disable-alsa
    --disable-pa --disable-jack --disable-oss --disable-sndio
    --disable-tpm --disable-seccomp
    --enable-virtfs --enable-trace-backends=log)
# reconfigure from scratch only when the configure arguments change
if [ ! -f "$BUILD/build.ninja" ] ||
   [ "$(cat "$BUILD/.lan743x-conf" 2>/dev/null)" != "${CONF_ARGS[*]}" ]; then
    log "configure"
    rm -rf "$BUILD"
    mkdir -p "$BUILD"
    (cd "$BUILD" && ../configure "${CONF_ARGS[@]}" >&2) || die "configure failed"
    echo "${CONF_ARGS[*]}" > "$BUILD/.lan743x-conf"
fi
# The line put back at the end of the previous build made meson.build newer
# than build.ninja.  If build.ninja already compiles exactly this
# revision's units (the previous build was of this layout), date
# meson.build back so that ninja does not reconfigure for nothing;
# otherwise make sure it does.
built_units() {
    grep -o 'hw_net_lan7430[A-Za-z0-9_.-]*\.c\.o' "$BUILD/build.ninja" | sort -u | tr '\n' ' '
}
if [ "$(built_units)" = "$(printf 'hw_net_%s.o\n' "${UNITS[@]}" | sort -u | tr '\n' ' ')" ]; then
    touch -r "$BUILD/build.ninja" -d '-1 second' "$MESON_BUILD"
else
    touch "$MESON_BUILD"
fi
# LAN743X_BUILD_QTESTS=1 (run-qtests.sh): the qtest binary too, while the
# tree is ours (lock held, meson line of this revision)
TARGETS=("$BIN")
if [ -n "${LAN743X_BUILD_QTESTS:-}" ] && [ "$ARCH" = x86_64 ]; then
    TARGETS+=(tests/qtest/lan7430-test)
fi
log "ninja -j$JOBS ${TARGETS[*]}"
ninja -C "$BUILD" -j"$JOBS" "${TARGETS[@]}" >&2 || die "ninja failed"

mkdir -p "$OUT"
cp "$BUILD/$BIN" "$OUT/$BIN.tmp"
mv "$OUT/$BIN.tmp" "$OUT/$BIN"
# Firmware: point at the build tree's pc-bios via a wrapper-free symlink dir.
ln -sfn "$SRC/pc-bios" "$OUT/pc-bios"
echo "$VER" > "$CACHE/src/.last-version"
echo "$SRC" > "$OUT/source-dir"
log "done"
echo "$OUT/$BIN"
