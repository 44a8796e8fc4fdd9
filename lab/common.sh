# shellcheck shell=bash
# Common definitions for the lab's shell scripts. Source, don't run.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT_DIR=$(cd "$LAB_DIR/.." && pwd)
# shellcheck source=lab/lab.conf
. "$LAB_DIR/lab.conf"

CACHE=${LAN743X_LAB_CACHE:-$HOME/.cache/lan743x-lab}
TREE=${LAN743X_TREE:-$ROOT_DIR/build/linux}
PATCHES=${LAN743X_PATCHES:-$ROOT_DIR/patches}
_T0=${_T0:-$(date +%s)}
export _T0

die() { echo "error: $*" >&2; exit 1; }
# progress MSG: one line with the elapsed time since the lab command started
progress() { printf '[%4ss] %s\n' "$(( $(date +%s) - _T0 ))" "$*" >&2; }
need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 ||
			die "'$t' not found; run 'make setup' (or lab/setup.sh) first"
	done
}

# base_version: the linux-source-6.12 package version installed, checked.
base_version() {
	local v
	v=$(dpkg-query -W -f='${Version}' "$BASE_PKG" 2>/dev/null) ||
		die "$BASE_PKG is not installed; run 'make setup' (apt-get install $BASE_PKG)"
	[ -n "$v" ] || die "$BASE_PKG is not installed; run 'make setup'"
	case "$v" in
	"$BASE_MAJOR".*) ;;
	*) die "$BASE_PKG version $v is not a $BASE_MAJOR.y kernel" ;;
	esac
	[ -r "$BASE_TARBALL" ] || die "$BASE_TARBALL missing; reinstall $BASE_PKG"
	echo "$v"
}

# note_base_drift: tell the user when apt serves another 6.12.y than checked.
note_base_drift() {
	local v=$1
	[ "$v" = "$BASE_CHECKED" ] ||
		echo "note: base is $BASE_PKG $v, series last checked against $BASE_CHECKED" >&2
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
		git add -A
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

# series: the patch files of the series, in order, without the cover letter
series() {
	local p
	for p in "$PATCHES"/*.patch; do
		[ -e "$p" ] || continue
		case "$(basename "$p")" in 0000-*) continue ;; esac
		echo "$p"
	done
}

# apply_series DIR [N]: git am the first N patches (all by default) in DIR.
# A patch that does not apply stops with its name and the failing hunk.
apply_series() {
	local dir=$1 n=${2:-999999} i=0 p out
	for p in $(series); do
		i=$((i + 1))
		[ "$i" -le "$n" ] || break
		if ! out=$(git -C "$dir" am -q "$p" 2>&1); then
			git -C "$dir" am --abort >/dev/null 2>&1 || true
			echo "$out" | sed 's/^/  /' >&2
			# show the failing hunk: git apply -v prints what it looked for
			git -C "$dir" apply --check -v "$p" 2>&1 |
				sed -n '/error: while searching for:/,/^error:/p' |
				head -40 | sed 's/^/  /' >&2 || true
			die "patch $(basename "$p") does not apply to the base"
		fi
	done
}
