#!/bin/bash
# Kernel builds for the lab, cached outside the clone.
#
#   kbuild.sh srctree            print the cached base source tree (create it)
#   kbuild.sh srcrepo            the same, without waiting for a running build
#   kbuild.sh objdir VARIANT     print the O= directory of VARIANT
#   kbuild.sh core VARIANT       print the patches whose core parts (below)
#                                VARIANT's kernel carries, one a line
#   kbuild.sh prepare VARIANT    configure + modules_prepare (for module builds)
#   kbuild.sh kernel VARIANT     full build: bzImage + modules (VM kernels)
#   kbuild.sh module VARIANT REV build lan743x.ko of source revision REV
#                                (a commit of the source tree, 'base', or
#                                'series' = base + patches/, 'series:K' =
#                                base + the first K patches, 'v1' = the
#                                net-next v1 series rebased onto 7.3, see
#                                V1_REV in lab.conf, 'rev:C' = STACK's
#                                chain as patches/ held it at commit C of
#                                this repository) and print it
#
# VARIANT: guest (x86_64 checking kernel), bench (guest without
# DMA_API_DEBUG), debug (guest + KASAN, kmemleak, lockdep), armv7-imx
# (module builds for i.MX6 boards), armv7-virt (the ARMv7 VM guest on
# QEMU's virt machine: allnoconfig + kconfig/armv7-virt.config +
# guest.config, lock debugging on; `kernel armv7-virt` builds zImage +
# modules) or armv7-debug (armv7-virt + KASAN and kmemleak, for the soak).
# The base is the STACK's (lab.conf), or LAB_BASE's when set.
# Each O= directory is keyed by the base version, its config fragments, the
# compiler and this script, so a change to any of them builds a fresh one.
# A stack's patches that change the kernel itself (any file outside the
# driver's directory, Documentation/, MAINTAINERS and tools/testing/, such
# as a core helper the 6.12 backport takes from mainline) are part of the
# kernels of that stack: the variants that build a kernel build it from the
# base plus those changes, and their O= directory is keyed by them too. A
# stack without such changes (the 7.3 ones) builds the base alone, under
# the same key as before.
# The x86_64 variants start from allnoconfig + virtme-ng's requirements +
# kconfig/vm-min.config: a VM kernel with nothing it does not use.
. "$(dirname "$0")/../common.sh"

JOBS=${JOBS:-$(nproc)}
KCONF=$LAB_DIR/kernel/kconfig

srctree() {
	local v src
	v=$(base_version)
	src=$CACHE/src/linux-$v
	if [ ! -e "$src/.git/lab-base-version" ]; then
		mkdir -p "$CACHE/src"
		# one unpacking at a time, whichever tree's lock the caller
		# holds (the check's and the main tree's builds run side by side)
		(
			flock 7
			[ -e "$src/.git/lab-base-version" ] || unpack_base "$src"
		) 7>"$CACHE/src/unpack-$v.lock" || exit 1
	fi
	echo "$src"
}

# checking: LAN743X_CHECK_TREE=NAME (lab/series/check.py sets it: check
# for the stacks, check-fixtures for a directory of patches) gives the
# checking variants (guest, armv7-imx) a worktree of that check's own
# (<tree>-NAME), its own lock and O= directories: make test runs the check
# beside the VM kernels' and modules' builds, which use the main tree, and
# beside the tests that check fixture patches.
checking() { [ -n "${LAN743X_CHECK_TREE:-}" ]; }

# treename VARIANT: the worktree VARIANT builds in, as a suffix of the
# main tree's directory; empty for the main tree itself. The checking
# variants share the main tree with module builds (or, checking, the
# check's worktree); bench and debug kernels get a worktree of their own,
# so their long builds do not hold up checks and module builds of the
# others.
treename() {
	case "$1" in
	guest | armv7-imx | "") ! checking || echo "$LAN743X_CHECK_TREE" ;;
	*) echo "$1" ;;
	esac
}

# srcfor VARIANT: the source tree a variant builds from (treename)
srcfor() {
	local main wt name
	name=$(treename "$1")
	main=$(srctree)
	if [ -z "$name" ]; then
		echo "$main"
		return
	fi
	wt="$main-$name"
	if [ ! -e "$wt/.git" ]; then
		git -C "$main" worktree prune
		git -C "$main" worktree add -q --detach "$wt" base >/dev/null
	fi
	echo "$wt"
}

lockname() {
	local name
	name=$(treename "$1")
	echo "src-$LAB_BASE${name:+-$name}"
}

fragments() {
	case "$1" in
	guest) echo "$KCONF/vm-min.config $KCONF/guest.config" ;;
	bench) echo "$KCONF/vm-min.config $KCONF/guest.config $KCONF/bench.config" ;;
	debug) echo "$KCONF/vm-min.config $KCONF/guest.config $KCONF/debug.config" ;;
	armv7-imx) echo "$KCONF/armv7-imx.config" ;;
	armv7-virt) echo "$KCONF/armv7-virt.config $KCONF/guest.config" ;;
	armv7-debug) echo "$KCONF/armv7-virt.config $KCONF/guest.config $KCONF/armv7-debug.config" ;;
	*) die "unknown kernel variant '$1' (guest, bench, debug, armv7-imx, armv7-virt, armv7-debug)" ;;
	esac
}

is_arm() { case "$1" in armv7-*) return 0 ;; esac; return 1; }

archargs() {
	case "$1" in
	armv7-*) echo "ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf-" ;;
	*) echo "ARCH=x86_64" ;;
	esac
}

# core_part PATCH: the parts of PATCH (git format-patch) that change the
# kernel image: its diffs of files outside the driver's directory,
# Documentation/, MAINTAINERS and tools/testing/
core_part() {
	awk '/^diff --git / {
		keep = ($3 !~ /^a\/(drivers\/net\/ethernet\/microchip\/|Documentation\/|MAINTAINERS$|tools\/testing\/)/)
	}
	/^-- $/ { keep = 0 }
	keep' "$1"
}

# core_patches: the patches of STACK's chain (full_series) with a core
# part, for a variant that builds a kernel (armv7-imx only prepares module
# builds); none when LAB_BASE is not STACK's base
core_patches() {
	local p
	[ "$1" != armv7-imx ] || return 0
	[ "$(conf_get STACK "$STACK" BASE)" = "$LAB_BASE" ] || return 0
	for p in $(full_series); do
		[ -z "$(core_part "$p")" ] || echo "$p"
	done
}

# core_key VARIANT: a hash of the core parts VARIANT's kernel carries
# (empty without any)
core_key() {
	local p ps
	ps=$(core_patches "$1")
	[ -n "$ps" ] || return 0
	for p in $ps; do core_part "$p"; done | sha256sum | cut -c1-16
}

# kernel_rev VARIANT SRC: the commit of SRC that VARIANT's kernel is built
# from: 'base', or base + the core parts of the stack's patches in one
# commit, tagged lab-kernel-<core_key> (made once per set of core parts)
kernel_rev() {
	local variant=$1 src=$2 key tag p
	key=$(core_key "$variant")
	[ -n "$key" ] || { echo base; return; }
	tag=lab-kernel-$key
	if ! git -C "$src" rev-parse -q --verify "$tag" >/dev/null; then
		git -C "$src" am --abort >/dev/null 2>&1 || true
		git -C "$src" checkout -q -f base
		for p in $(core_patches "$variant"); do
			core_part "$p" | git -C "$src" apply --index - ||
				die "the core part of $(basename "$p") does not apply to the $BASE_PKG base"
		done
		GIT_AUTHOR_DATE=2025-01-01T00:00:00Z \
		GIT_COMMITTER_DATE=2025-01-01T00:00:00Z \
			git -C "$src" commit -q --no-verify \
			-m "lab: the core parts of the $STACK patches ($key)"
		git -C "$src" tag "$tag"
	fi
	echo "$tag"
}

objdir() {
	local variant=$1 key f cc core
	cc=gcc
	! is_arm "$variant" || cc=arm-linux-gnueabihf-gcc
	need "$cc"
	key=$({
		base_version
		for f in $(fragments "$variant"); do cat "$f"; done
		"$cc" --version | head -1
		is_arm "$variant" || pip show virtme-ng 2>/dev/null | grep ^Version
		echo "layout 2"  # bump when this script changes how trees are built
		# the check's own O= directories (checking)
		case "$variant" in guest | armv7-imx) ! checking || echo "tree $LAN743X_CHECK_TREE" ;; esac
		# only a kernel with core changes adds a line: the key of a base
		# alone stays what it was
		core=$(core_key "$variant")
		[ -z "$core" ] || echo "core $core"
	} | sha256sum | cut -c1-16)
	echo "$CACHE/obj/$variant-$key"
}

kmake() {
	local variant=$1 src=$2 obj=$3 cc=gcc
	shift 3
	! is_arm "$variant" || cc=arm-linux-gnueabihf-gcc
	if command -v ccache >/dev/null; then
		export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
		cc="ccache $cc"
	fi
	# modules_prepare-only trees have no Module.symvers
	[ -e "$obj/Module.symvers" ] || export KBUILD_MODPOST_WARN=1
	# shellcheck disable=SC2046
	make -s -C "$src" O="$obj" $(archargs "$variant") CC="$cc" "$@"
}

configure() {
	local variant=$1 src=$2 obj=$3 f
	mkdir -p "$obj"
	progress "configuring $variant kernel in $obj"
	if [ "$variant" = armv7-imx ]; then
		kmake "$variant" "$src" "$obj" imx_v6_v7_defconfig >/dev/null
	elif is_arm "$variant"; then
		kmake "$variant" "$src" "$obj" allnoconfig >/dev/null
	else
		need virtme-configkernel
		# virtme-ng's own requirements as a fragment, on allnoconfig
		(cd "$src" && virtme-configkernel --arch x86_64 --dry-run >"$obj/.lab-virtme.config" 2>"$obj/.lab-configkernel.log") ||
			die "virtme-configkernel --dry-run failed: see $obj/.lab-configkernel.log"
		kmake "$variant" "$src" "$obj" allnoconfig >/dev/null
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$obj/.lab-virtme.config" >/dev/null
	fi
	for f in $(fragments "$variant"); do
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$f" >/dev/null
	done
	kmake "$variant" "$src" "$obj" olddefconfig >/dev/null
	# every option a fragment asks for must have survived olddefconfig
	local missing
	# (the last fragment that sets a symbol wins, as in merge_config.sh)
	missing=$(grep -h '^CONFIG_' $(fragments "$variant") |
		awk -F= '{ v[$1] = $0; if (!($1 in o)) o[$1] = NR; k[NR] = $1 }
			END { for (i = 1; i <= NR; i++) if (o[k[i]] == i) print v[k[i]] }' |
		while IFS= read -r l; do
			case "$l" in
			*=n) ! grep -q "^${l%=n}=" "$obj/.config" || echo "$l" ;;
			*) grep -qxF "$l" "$obj/.config" || echo "$l" ;;
			esac
		done)
	# a symbol this base does not have at all (renamed or removed since
	# another base) is noted, not an error
	local l sym gone="" lost=""
	for l in $missing; do
		sym=${l%%=*}
		if grep -rqxE --include="Kconfig*" "(menu)?config ${sym#CONFIG_}[[:space:]]*" "$src"; then
			lost="$lost $l"
		else
			gone="$gone $sym"
		fi
	done
	[ -z "$gone" ] || echo "note: $variant config: not in $BASE_PKG:$gone" >&2
	[ -z "$lost" ] || die "$variant config lost options (dependency missing?):$lost"
}

with_src_lock() {
	local name tree gitdir
	name=$(lockname "${1:-}")
	tree=$(treename "${1:-}")
	# A run killed while git worked in the tree leaves git's own lock
	# files behind; with our lock held they are stale.
	gitdir=$CACHE/src/linux-$(base_version)
	if [ -z "$tree" ]; then
		gitdir=$gitdir/.git
	else
		# a worktree's .git names its git directory (none yet: nothing
		# to clear)
		gitdir=$(sed -n 's/^gitdir: //p' "$gitdir-$tree/.git" 2>/dev/null || true)
	fi
	# check.py holds its tree's lock for its whole run and tells us so (it
	# waits for us: none of its git commands runs meanwhile)
	if [ "$name" = "$(lockname "")" ] && [ "${LAN743X_SRC_LOCKED:-0}" = 1 ]; then
		clear_stale_git_locks "$gitdir"
		return
	fi
	mkdir -p "$CACHE"
	exec 9>"$CACHE/$name.lock"
	flock 9
	clear_stale_git_locks "$gitdir"
}

prepare() {
	local variant=$1 src obj
	src=$(srcfor "$variant")
	obj=$(objdir "$variant")
	[ -e "$obj/.lab-prepared" ] && { echo "$obj"; return; }
	configure "$variant" "$src" "$obj"
	progress "modules_prepare for $variant (a few minutes when cold)"
	kmake "$variant" "$src" "$obj" -j"$JOBS" modules_prepare
	touch "$obj/.lab-prepared"
	progress "$variant prepared"
	echo "$obj"
}

kernel() {
	local variant=$1 src obj rev image=bzImage
	[ "$variant" != armv7-imx ] || die "the armv7-imx variant is for module builds only"
	! is_arm "$variant" || image=zImage
	src=$(srcfor "$variant")
	rev=$(kernel_rev "$variant" "$src")
	obj=$(prepare "$variant")
	if [ -e "$obj/.lab-built" ]; then
		modules_install "$variant" "$src" "$obj"
		echo "$obj"
		return
	fi
	git -C "$src" checkout -q -f "$rev"
	[ "$rev" = base ] || progress "$variant kernel: base + the core parts of the $STACK patches ($rev)"
	progress "building the $variant kernel (~15 min cold on 2 cores; ccache helps)"
	kmake "$variant" "$src" "$obj" -j"$JOBS" "$image" modules
	touch "$obj/.lab-built"
	progress "$variant kernel built"
	modules_install "$variant" "$src" "$obj"
	echo "$obj"
}

# modules_install into $obj/mods so the guest can modprobe -d the
# base kernel's modules (lan743x needs phylink, which is modular here)
modules_install() {
	local variant=$1 src=$2 obj=$3
	[ -e "$obj/mods/.lab-done" ] && return
	rm -rf "$obj/mods"
	kmake "$variant" "$src" "$obj" INSTALL_MOD_PATH="$obj/mods" modules_install >/dev/null
	touch "$obj/mods/.lab-done"
}

module() {
	local variant=$1 rev=$2 src obj tree out
	src=$(srcfor "$variant")
	obj=$(prepare "$variant")
	case "$rev" in
	v1 | v3)
		# an earlier version of the series on 7.3: the patches/
		# directories of this repository at commit V1_REV or V3_REV
		# (lab.conf), up to net-next-2
		[ "$STACK" = net-next-2 ] ||
			die "module $rev: built for STACK=net-next-2 only (STACK=$STACK)"
		git -C "$src" am --abort >/dev/null 2>&1 || true
		git -C "$src" checkout -q -f base
		apply_series "$src" 999999 "${rev}_series"
		rev=$(git -C "$src" rev-parse HEAD)
		;;
	rev:*)
		# the whole chain of STACK as this repository's patches/ held it
		# at a commit: the series before a change, for an A/B in one run
		REV_AT=$(git -C "$ROOT_DIR" rev-parse -q --verify "${rev#rev:}^{commit}") ||
			die "module $rev: ${rev#rev:} is not a commit of $ROOT_DIR"
		git -C "$src" am --abort >/dev/null 2>&1 || true
		git -C "$src" checkout -q -f base
		apply_series "$src" 999999 rev_series
		rev=$(git -C "$src" rev-parse HEAD)
		;;
	series | series:*)
		# base + patches/ (series:K: base + the first K patches)
		git -C "$src" am --abort >/dev/null 2>&1 || true
		git -C "$src" checkout -q -f base
		apply_series "$src"
		if [ "$rev" = series ]; then
			rev=$(git -C "$src" rev-parse HEAD)
		else
			local k=${rev#series:} n
			n=$(git -C "$src" rev-list --count base..HEAD)
			[[ "$k" =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le "$n" ] ||
				die "$rev: the series has $n patches"
			rev=$(git -C "$src" rev-list --reverse base..HEAD | sed -n "${k}p")
		fi
		;;
	esac
	tree=$(git -C "$src" rev-parse "$rev:drivers/net/ethernet/microchip") ||
		die "no revision $rev in $src"
	out=$CACHE/modules/$(basename "$obj")/$tree
	[ -e "$out/lan743x.ko" ] && { echo "$out/lan743x.ko"; return; }
	git -C "$src" checkout -q -f "$rev"
	rm -f "$obj"/drivers/net/ethernet/microchip/lan743x*.o
	progress "building lan743x.ko for $variant at $rev"
	# a single-target build's modpost does not see the symbols of other
	# modules (phylink when it is =m): unresolved ones are only warnings
	# here, insmod in the VM is the real check
	KBUILD_MODPOST_WARN=1 kmake "$variant" "$src" "$obj" -j"$JOBS" \
		drivers/net/ethernet/microchip/lan743x.ko
	mkdir -p "$out"
	cp "$obj/drivers/net/ethernet/microchip/lan743x.ko" "$out/"
	echo "$out/lan743x.ko"
}

# old_series REV STACK...: the patch files of STACKs in this repository at
# commit REV, exported once into the cache (a revision's files never
# change); v1_series and v3_series (lab.conf's V1_REV, V3_REV)
old_series() {
	local r=$1 d=$CACHE/old-patches/$1 s p
	shift
	if [ ! -e "$d/.lab-done" ]; then
		git -C "$ROOT_DIR" cat-file -e "$r^{commit}" 2>/dev/null ||
			die "$r (lab.conf) is not a commit of $ROOT_DIR (a shallow clone?)"
		rm -rf "$d"
		mkdir -p "$d"
		git -C "$ROOT_DIR" archive "$r" "${@/#/patches/}" | tar -x -C "$d"
		touch "$d/.lab-done"
	fi
	for s in "$@"; do
		for p in "$d/patches/$s"/*.patch; do
			case "$(basename "$p")" in 0000-*) continue ;; esac
			echo "$p"
		done
	done
}
v1_series() { old_series "$V1_REV" net net-next; }
v3_series() { old_series "$V3_REV" net net-next-1 net-next-2; }
# rev_series: STACK's chain at commit REV_AT (module rev:REV)
rev_series() { old_series "$REV_AT" $(stack_chain); }

main() {
cmd=${1:-}
[ -n "$cmd" ] || die "usage: kbuild.sh srctree|objdir|core|prepare|kernel|module ..."
shift
case "$cmd" in
srctree) with_src_lock; srcfor "" ;;
srcrepo)
	# the base repository only (objects, tag 'base'): no lock once it exists
	v=$(base_version)
	if [ -e "$CACHE/src/linux-$v/.git/lab-base-version" ]; then
		echo "$CACHE/src/linux-$v"
	else
		with_src_lock
		srctree
	fi
	;;
objdir) objdir "$@" ;;
core) fragments "${1:-}" >/dev/null; core_patches "$1" ;;
prepare) with_src_lock "${1:-}"; prepare "$@" ;;
kernel) with_src_lock "${1:-}"; kernel "$@" ;;
module) with_src_lock "${1:-}"; module "$@" ;;
*) die "unknown command '$cmd'" ;;
esac
}

# one line, read whole before it runs: editing this file while a build runs
# cannot make bash execute half a line of the new text
main "$@"; exit $?
