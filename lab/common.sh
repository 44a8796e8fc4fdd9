# shellcheck shell=bash
# Common definitions for the lab's shell scripts. Source, don't run.
#
# STACK (default: lab.conf's STACK_DEFAULT) selects the series worked on:
# patches/$STACK, its parent stacks and its base. LAB_BASE overrides the
# base for commands that need no stack (kernel builds of one base).
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT_DIR=$(cd "$LAB_DIR/.." && pwd)
# shellcheck source=lab/lab.conf
. "$LAB_DIR/lab.conf"

CACHE=${LAN743X_LAB_CACHE:-$HOME/.cache/lan743x-lab}
_T0=${_T0:-$(date +%s)}
export _T0

# conf_get KIND NAME FIELD: lab.conf's KIND_<NAME>_FIELD ('.', '-' -> '_')
conf_get() {
	local n="$1_${2//[.-]/_}_$3"
	echo "${!n-}"
}

STACK=${STACK:-$STACK_DEFAULT}
case " $STACKS " in
*" $STACK "*) ;;
*) echo "error: unknown STACK '$STACK' (lab.conf: $STACKS)" >&2; exit 1 ;;
esac
LAB_BASE=${LAB_BASE:-$(conf_get STACK "$STACK" BASE)}
case " $BASES " in
*" $LAB_BASE "*) ;;
*) echo "error: unknown base '$LAB_BASE' (lab.conf: $BASES)" >&2; exit 1 ;;
esac
export STACK LAB_BASE

# select_base BASE: set the BASE_* variables for one of lab.conf's bases
select_base() {
	BASE_MAJOR=$1
	BASE_PKG=$(conf_get BASE "$1" PKG)
	BASE_SUITE=$(conf_get BASE "$1" SUITE)
	BASE_CHECKED=$(conf_get BASE "$1" CHECKED)
	if [ -n "$BASE_SUITE" ]; then
		BASE_DEBS=$CACHE/debian/$BASE_PKG
		BASE_TARBALL=$BASE_DEBS/root/usr/src/$BASE_PKG.tar.xz
	else
		BASE_TARBALL=/usr/src/$BASE_PKG.tar.xz
	fi
}
select_base "$LAB_BASE"
SERIES_PREFIX=$(conf_get STACK "$STACK" PREFIX)
SERIES_VERSION=$(conf_get STACK "$STACK" VERSION)
TREE=${LAN743X_TREE:-$ROOT_DIR/build/$STACK/linux}
PATCHES=${LAN743X_PATCHES:-$ROOT_DIR/patches/$STACK}

die() { echo "error: $*" >&2; exit 1; }
# progress MSG: one line with the elapsed time since the lab command started
progress() { printf '[%4ss] %s\n' "$(( $(date +%s) - _T0 ))" "$*" >&2; }

# clear_stale_git_locks GITDIR: remove the lock files an interrupted git
# left in GITDIR (index.lock, HEAD.lock, a ref's lock). Call it only while
# holding the lab's lock on that tree: no git of ours can be running there,
# so any such file is stale, and git would refuse every later command.
clear_stale_git_locks() {
	local d=$1 f
	[ -d "$d" ] || return 0
	for f in "$d"/index.lock "$d"/HEAD.lock "$d"/ORIG_HEAD.lock \
		"$d"/packed-refs.lock "$d"/config.lock; do
		[ -e "$f" ] || continue
		rm -f "$f"
		echo "note: removed ${f#"$CACHE"/}, left by an interrupted git run" >&2
	done
	while IFS= read -r f; do
		rm -f "$f"
		echo "note: removed ${f#"$CACHE"/}, left by an interrupted git run" >&2
	done < <(find "$d/refs" -name '*.lock' -type f 2>/dev/null)
}
need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			die "'$t' not found; run 'make setup' (or lab/setup.sh) first"
	done
}

# apt_private ARGS...: apt-get/apt-cache options that read only the lab's
# own source list for $BASE_SUITE (the system's suites are not touched)
apt_private() {
	local d=$CACHE/apt/$BASE_SUITE
	echo "-o Dir::Etc::SourceList=$d/lab.sources -o Dir::Etc::SourceParts=/dev/null" \
		"-o Dir::State::Lists=$d/lists -o Dir::Cache=$d/cache" \
		"-o Debug::NoLocking=1"
}

# fetch_base: bring the newest $BASE_PKG of $BASE_SUITE into the cache
# (apt-get download + dpkg-deb -x of the tarball only). Needs the network;
# without it the version already in the cache is kept, with a note.
fetch_base() {
	local d=$CACHE/apt/$BASE_SUITE v have deb tmp
	[ -n "$BASE_SUITE" ] || return 0
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$BASE_DEBS"
	cat >"$d/lab.sources" <<EOS
Types: deb
URIs: http://deb.debian.org/debian
Suites: $BASE_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	have=$(cat "$BASE_DEBS/version" 2>/dev/null || true)
	# shellcheck disable=SC2046
	if ! apt-get $(apt_private) update -qq >/dev/null 2>&1; then
		[ -n "$have" ] || die "cannot fetch the $BASE_SUITE package lists for $BASE_PKG (network?)"
		echo "note: $BASE_SUITE not reachable, keeping $BASE_PKG $have" >&2
		return 0
	fi
	# shellcheck disable=SC2046
	v=$(apt-cache $(apt_private) madison "$BASE_PKG" | awk '{print $3; exit}')
	[ -n "$v" ] || die "$BASE_PKG not found in $BASE_SUITE"
	[ "$v" != "$have" ] || [ ! -r "$BASE_TARBALL" ] || return 0
	progress "downloading $BASE_PKG $v from $BASE_SUITE"
	tmp=$(mktemp -d "$BASE_DEBS/dl.XXXXXX")
	# shellcheck disable=SC2046
	(cd "$tmp" && apt-get $(apt_private) download -qq "$BASE_PKG=$v" >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "apt-get download $BASE_PKG=$v failed"; }
	deb=$(ls "$tmp"/*.deb)
	mkdir -p "$tmp/root"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$tmp/root" "./usr/src/$BASE_PKG.tar.xz" ||
		{ rm -rf "$tmp"; die "unpacking $deb failed"; }
	rm -rf "$BASE_DEBS/root"
	mv "$tmp/root" "$BASE_DEBS/root"
	rm -rf "$tmp"
	echo "$v" >"$BASE_DEBS/version"
}

# SPARSE_SUITE/SPARSE_VERSION: Debian 12's sparse 0.6.4 predates
# __typeof_unqual__, and 7.3's build then turns C=2 off with a mere warning
# (scripts/checker-valid.sh). The lab builds sid's sparse from its Debian
# source package instead (a few seconds), for every base.
SPARSE_SUITE=sid
SPARSE_VERSION=0.6.5~rc1-2

# sparse_bin: the lab's sparse, built from Debian's source package if needed
sparse_bin() {
	local d=$CACHE/tools/sparse-$SPARSE_VERSION a=$CACHE/apt/$SPARSE_SUITE-src
	if [ ! -x "$d/sparse" ]; then
		mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$d.tmp"
		cat >"$a/lab.sources" <<EOS
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $SPARSE_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
		local o="-o Dir::Etc::SourceList=$a/lab.sources -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$a/lists -o Dir::Cache=$a/cache"
		progress "building sparse $SPARSE_VERSION from Debian's source package"
		# shellcheck disable=SC2086
		apt-get $o update -qq >/dev/null 2>&1 &&
			(cd "$d.tmp" && apt-get $o source -qq --download-only "sparse=$SPARSE_VERSION" >/dev/null 2>&1) ||
			die "cannot download the sparse $SPARSE_VERSION source package ($SPARSE_SUITE)"
		mkdir -p "$d.tmp/src"
		tar -xzf "$d.tmp"/sparse_*.orig.tar.gz -C "$d.tmp/src" --strip-components=1 &&
			make -s -C "$d.tmp/src" -j"$(nproc)" sparse >/dev/null 2>&1 ||
			die "building sparse $SPARSE_VERSION failed (in $d.tmp)"
		mkdir -p "$d"
		cp "$d.tmp/src/sparse" "$d/sparse"
		rm -rf "$d.tmp"
	fi
	echo "$d/sparse"
}

# guest_tools: newer user-space tools for the VM guest (which runs on the
# host's root file system) in $CACHE/tools/bin, put first on the guest's
# PATH by lab/vm/vm.sh: trixie's ethtool (Debian 12's 6.1 has no --json for
# -g, which the kernel's hw/pp_alloc_fail.py uses). Nothing is installed
# into the system.
GUEST_ETHTOOL_SUITE=trixie
GUEST_ETHTOOL_VERSION=1:6.14.2-1
guest_tools() {
	local d=$CACHE/tools a=$CACHE/apt/$GUEST_ETHTOOL_SUITE v tmp
	v=${GUEST_ETHTOOL_VERSION#*:}
	if [ "$(cat "$d/bin/.ethtool-version" 2>/dev/null)" != "$v" ]; then
		mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$d/bin"
		cat >"$a/lab.sources" <<EOS
Types: deb
URIs: http://deb.debian.org/debian
Suites: $GUEST_ETHTOOL_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
		local o="-o Dir::Etc::SourceList=$a/lab.sources -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$a/lists -o Dir::Cache=$a/cache"
		tmp=$(mktemp -d)
		progress "fetching ethtool $v ($GUEST_ETHTOOL_SUITE) for the guest"
		# shellcheck disable=SC2086
		apt-get $o update -qq >/dev/null 2>&1 &&
			(cd "$tmp" && apt-get $o download -qq "ethtool=$GUEST_ETHTOOL_VERSION" >/dev/null 2>&1) ||
			{ rm -rf "$tmp"; die "cannot download ethtool $v ($GUEST_ETHTOOL_SUITE)"; }
		dpkg-deb -x "$tmp"/ethtool_*.deb "$tmp/x" &&
			cp "$tmp/x/usr/sbin/ethtool" "$d/bin/ethtool" ||
			{ rm -rf "$tmp"; die "unpacking ethtool $v failed"; }
		rm -rf "$tmp"
		"$d/bin/ethtool" --version >/dev/null || die "ethtool $v does not run here"
		echo "$v" >"$d/bin/.ethtool-version"
	fi
	echo "$d/bin"
}

# base_version: the version of the base package in use, checked.
base_version() {
	local v
	if [ -n "$BASE_SUITE" ]; then
		v=$(cat "$BASE_DEBS/version" 2>/dev/null) ||
			die "$BASE_PKG ($BASE_SUITE) is not in the lab cache; run 'make setup'"
	else
		v=$(dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null) ||
			die "$BASE_PKG is not installed; run 'make setup' (apt-get install $BASE_PKG)"
	fi
	[ -n "$v" ] || die "$BASE_PKG is not installed; run 'make setup'"
	case "$v" in
	"$BASE_MAJOR".* | "$BASE_MAJOR"~*) ;;
	*) die "$BASE_PKG version $v is not a $BASE_MAJOR.y kernel" ;;
	esac
	[ -r "$BASE_TARBALL" ] || die "$BASE_TARBALL missing; run 'make setup'"
	echo "$v"
}

# note_base_drift: tell the user when Debian serves another version than checked.
note_base_drift() {
	local v=$1
	[ "$v" = "$BASE_CHECKED" ] ||
		echo "note: base is $BASE_PKG $v, the stacks on it were last checked against $BASE_CHECKED" >&2
}

# unpack_base DIR: unpack the pinned base into DIR as a git repo tagged
# 'base'. tar keeps the tarball's mtimes, so cached O= build directories
# stay valid across re-creation of the tree.
unpack_base() {
	local dir=$1 v tmp
	v=$(base_version)
	tmp="$dir.tmp.$$"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	progress "unpacking $BASE_PKG $v into $dir"
	tar -xf "$BASE_TARBALL" -C "$tmp" --strip-components=1
	(
		cd "$tmp"
		git init -q
		git config user.name "${GIT_AUTHOR_NAME:-Lab Developer}"
		git config user.email "${GIT_AUTHOR_EMAIL:-dev@lan743x-lab.invalid}"
		git config core.autocrlf false
		git config gc.auto 0  # no background repack holding our lock
		# Debian's packaging adds "/*" to .gitignore (its repository holds
		# only debian/): drop that block so the kernel tree can be tracked.
		sed -i '/^# Debian packaging: ignore everything/,$d' .gitignore
		sed -i '$ { /^#$/d }' .gitignore
		git add -Af
		[ -n "$(git ls-files Makefile)" ] || die "the base's files are not tracked (.gitignore?)"
		# fixed dates: the same base gives the same commit id every time
		GIT_AUTHOR_DATE=2025-01-01T00:00:00Z \
		GIT_COMMITTER_DATE=2025-01-01T00:00:00Z \
			git commit -q --no-verify -m "base: Debian $BASE_PKG $v"
		git tag base
	)
	rm -rf "$dir"
	mv "$tmp" "$dir"
	echo "$v" >"$dir/.git/lab-base-version"
}

# stack_chain [STACK]: the stacks whose patches make up STACK's tree, in
# order: its parents first, STACK last
stack_chain() {
	local s=${1:-$STACK} p
	p=$(conf_get STACK "$s" PARENT)
	[ -z "$p" ] || stack_chain "$p"
	echo "$s"
}

# series [STACK]: the patch files of one stack, in order, without the cover letter
series() {
	local p dir=$PATCHES
	[ -z "${1:-}" ] || dir=$ROOT_DIR/patches/$1
	for p in "$dir"/*.patch; do
		[ -e "$p" ] || continue
		case "$(basename "$p")" in 0000-*) continue ;; esac
		echo "$p"
	done
}

# parent_series: the patches of STACK's parent stacks (applied before its own)
parent_series() {
	local s
	for s in $(stack_chain); do
		[ "$s" = "$STACK" ] || series "$s"
	done
}

# full_series: the patches of the whole chain: the tree that STACK builds
full_series() {
	parent_series
	series
}

# apply_series DIR [N [LISTFN]]: git am the first N patches (all by default)
# that LISTFN prints (default: full_series, the whole chain) in DIR.
# A patch that does not apply stops with its name and the failing hunk.
apply_series() {
	local dir=$1 n=${2:-999999} list=${3:-full_series} i=0 p out
	for p in $($list); do
		i=$((i + 1))
		[ "$i" -le "$n" ] || break
		if ! out=$(git -C "$dir" am -q "$p" 2>&1); then
			git -C "$dir" am --abort >/dev/null 2>&1 || true
			echo "$out" | sed 's/^/  /' >&2
			# show the failing hunk: git apply -v prints what it looked for
			git -C "$dir" apply --check -v "$p" 2>&1 |
				sed -n '/error: while searching for:/,/^error:/p' |
				head -40 | sed 's/^/  /' >&2 || true
			die "patch $(basename "$(dirname "$p")")/$(basename "$p") does not apply to the $BASE_PKG base"
		fi
	done
}
