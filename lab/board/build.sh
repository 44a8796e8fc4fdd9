#!/bin/bash
# Host-side builds of the board kit (lab/board/board.py calls these).
#
#   build.sh tree KCONFIG SRC OBJ          configure SRC with KCONFIG in OBJ
#                                          (olddefconfig + modules_prepare);
#                                          prints OBJ
#   build.sh module NAME KDIR SRC OUT [PATCH...]
#                                          lan743x.ko of SRC's driver with
#                                          PATCHes applied (their hunks in
#                                          the driver's directory), built
#                                          out of tree against KDIR; prints
#                                          OUT/NAME/lan743x.ko
#   build.sh ksft KDIR SRC OUT [PATCH...]  make install of the kselftests
#                                          drivers/net/hw and drivers/net of
#                                          SRC + the selftest hunks of
#                                          PATCHes, into OUT/ksft; prints it
#
# BOARD_ARCH (armv7 default, arm64, x86_64) selects ARCH= and the cross
# compiler (CROSS_COMPILE overrides it). Nothing here needs the lab: only
# a kernel source tree, the board's kernel build tree and the patches.
set -euo pipefail

die() { echo "error: $*" >&2; exit 2; }
note() { echo "[board-build] $*" >&2; }

case "${BOARD_ARCH:-armv7}" in
armv7) KARCH=arm; CROSS=${CROSS_COMPILE-arm-linux-gnueabihf-} ;;
arm64) KARCH=arm64; CROSS=${CROSS_COMPILE-aarch64-linux-gnu-} ;;
x86_64) KARCH=x86_64; CROSS=${CROSS_COMPILE-} ;;
*) die "BOARD_ARCH=${BOARD_ARCH}: armv7, arm64 or x86_64" ;;
esac
command -v "${CROSS}gcc" >/dev/null ||
	die "no ${CROSS}gcc for ARCH ${BOARD_ARCH:-armv7} (Debian: apt-get install gcc-arm-linux-gnueabihf)"
JOBS=${JOBS:-$(nproc)}
DRV=drivers/net/ethernet/microchip

kmake() { make -s ARCH="$KARCH" CROSS_COMPILE="$CROSS" "$@"; }

# apply_hunks DIR INCLUDE PATCH...: the hunks of each PATCH under INCLUDE
# (git apply --include patterns) in DIR, a plain directory (no repository)
apply_hunks() {
	local dir=$1 inc=$2 p
	shift 2
	for p in "$@"; do
		p=$(realpath "$p")
		# shellcheck disable=SC2086
		(cd "$dir" && GIT_CEILING_DIRECTORIES=$(dirname "$dir") \
			git apply -p1 $inc "$p") ||
			die "$(basename "$p") does not apply to the driver of $SRC"
	done
}

cmd=${1:-}
[ -n "$cmd" ] || die "usage: build.sh tree|module|ksft ..."
shift
case "$cmd" in
tree)
	[ $# -eq 3 ] || die "usage: build.sh tree KCONFIG SRC OBJ"
	KCONFIG=$1 SRC=$2 OBJ=$3
	[ -f "$KCONFIG" ] || die "KCONFIG=$KCONFIG: no such file"
	[ -f "$SRC/Makefile" ] || die "SRC=$SRC: not a kernel source tree"
	mkdir -p "$OBJ"
	if ! cmp -s "$KCONFIG" "$OBJ/.board-kconfig"; then
		note "configuring $SRC in $OBJ with $KCONFIG"
		cp "$KCONFIG" "$OBJ/.config"
		kmake -C "$SRC" O="$OBJ" olddefconfig >/dev/null
		grep -q '^CONFIG_LAN743X=m' "$OBJ/.config" ||
			die "$KCONFIG: CONFIG_LAN743X is not =m after olddefconfig (the kit loads the driver as a module)"
		note "modules_prepare (minutes when cold)"
		kmake -C "$SRC" O="$OBJ" -j"$JOBS" modules_prepare
		cp "$KCONFIG" "$OBJ/.board-kconfig"
	fi
	echo "$OBJ"
	;;
module)
	[ $# -ge 4 ] || die "usage: build.sh module NAME KDIR SRC OUT [PATCH...]"
	NAME=$1 KDIR=$2 SRC=$3 OUT=$4
	shift 4
	[ -f "$KDIR/.config" ] || die "KDIR=$KDIR: no .config (the board kernel's build tree)"
	[ -f "$SRC/$DRV/lan743x_main.c" ] || die "SRC=$SRC: no $DRV/lan743x_main.c"
	grep -q '^CONFIG_LAN743X=m' "$KDIR/.config" ||
		note "warning: $KDIR/.config has no CONFIG_LAN743X=m"
	if [ ! -e "$KDIR/Module.symvers" ]; then
		# a tree from modules_prepare (KCONFIG=): modpost cannot check the
		# symbols the module uses; insmod on the board does
		note "no Module.symvers in $KDIR: unresolved symbols are warnings here"
		! grep -q '^CONFIG_MODVERSIONS=y' "$KDIR/.config" ||
			note "warning: CONFIG_MODVERSIONS=y without Module.symvers: the module carries no symbol versions and the board's kernel will refuse it; use the tree the board's kernel was built in (KDIR=)"
		export KBUILD_MODPOST_WARN=1
	fi
	w=$OUT/$NAME/src
	rm -rf "$w"
	mkdir -p "$w/$DRV"
	# the directory's files (its other drivers' subdirectories left out)
	find "$SRC/$DRV" -maxdepth 1 -type f -exec cp {} "$w/$DRV/" \;
	apply_hunks "$w" "--include=$DRV/*" "$@"
	# what the driver's Kconfig entry selects must be in the board's kernel
	for sym in $(awk '/^config LAN743X$/ { on = 1; next } /^(config|endif|menu)/ { on = 0 }
		on && $1 == "select" { print $2 }' "$w/$DRV/Kconfig"); do
		grep -q "^CONFIG_$sym=[ym]" "$KDIR/.config" ||
			note "warning: the $NAME driver selects $sym, not set in $KDIR/.config: the board's kernel needs CONFIG_$sym"
	done
	# the driver's lines of the directory's Makefile, as an out-of-tree
	# Kbuild: the other drivers of the directory are not built
	{
		echo "obj-m := lan743x.o"
		sed -n 's/^\(lan743x-\(objs\|y\)\s*[:+]\?=.*\)$/\1/p' "$w/$DRV/Makefile"
	} >"$w/$DRV/Kbuild"
	note "building $NAME lan743x.ko against $KDIR (ARCH=$KARCH)"
	kmake -C "$KDIR" M="$w/$DRV" -j"$JOBS" modules
	mkdir -p "$OUT/$NAME"
	cp "$w/$DRV/lan743x.ko" "$OUT/$NAME/lan743x.ko"
	echo "$OUT/$NAME/lan743x.ko"
	;;
ksft)
	[ $# -ge 3 ] || die "usage: build.sh ksft KDIR SRC OUT [PATCH...]"
	KDIR=$1 SRC=$2 OUT=$3
	shift 3
	t=$OUT/ksft-src
	rm -rf "$t" "$OUT/ksft"
	mkdir -p "$t"
	# what make install of these targets reads and builds with
	for p in tools/testing/selftests tools/net/ynl Documentation/netlink \
		tools/lib tools/include tools/build tools/arch tools/scripts \
		scripts/subarch.include scripts/bpf_doc.py include/uapi MAINTAINERS; do
		[ -e "$SRC/$p" ] || continue
		mkdir -p "$t/$(dirname "$p")"
		cp -a "$SRC/$p" "$t/$p"
	done
	apply_hunks "$t" "--include=tools/testing/selftests/*" "$@"
	note "UAPI headers of $KDIR (make headers_install)"
	kmake -C "$KDIR" headers_install INSTALL_HDR_PATH="$t/usr" >/dev/null
	tg="drivers/net/hw drivers/net"
	note "make install of the kselftests ($tg) for ARCH=$KARCH"
	if ! kmake -C "$t/tools/testing/selftests" TARGETS="$tg" \
		INSTALL_PATH="$OUT/ksft" install >"$OUT/ksft-install.log" 2>&1; then
		# the C helpers need the board's libraries (libelf, zlib,
		# liburing) for the cross compiler; the Python tests do not
		note "the cross make install failed (see $OUT/ksft-install.log): installing with the host compiler, dropping its binaries"
		rm -rf "$OUT/ksft"
		make -s -C "$t/tools/testing/selftests" TARGETS="$tg" \
			INSTALL_PATH="$OUT/ksft" install >>"$OUT/ksft-install.log" 2>&1 ||
			die "make install of the kselftests failed: $(tail -5 "$OUT/ksft-install.log")"
		# a binary the board cannot run is left out and named (e_machine:
		# EM_ARM 40, EM_AARCH64 183, EM_X86_64 62; BPF objects, EM_BPF
		# 247, load on any)
		case "$KARCH" in arm) em=40 ;; arm64) em=183 ;; *) em=62 ;; esac
		find "$OUT/ksft" -type f -print0 | while IFS= read -r -d '' f; do
			[ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
			m=$(od -An -tu2 -j18 -N2 "$f" | tr -d ' ')
			if [ "$m" != "$em" ] && [ "$m" != 247 ]; then
				echo "${f#"$OUT"/ksft/}" >>"$OUT/not-for-board.txt"
				rm -f "$f"
			fi
		done
	fi
	[ -x "$OUT/ksft/run_kselftest.sh" ] || die "make install left no run_kselftest.sh in $OUT/ksft"
	echo "$OUT/ksft"
	;;
*) die "unknown command '$cmd' (tree, module, ksft)" ;;
esac
