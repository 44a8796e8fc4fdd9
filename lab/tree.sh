#!/bin/bash
# make tree: build/linux = pinned base + patches/*.patch (git am).
# Refuses to throw away local commits or changes unless FORCE=1.
. "$(dirname "$0")/common.sh"
need git tar xz

v=$(base_version)
note_base_drift "$v"

if [ -d "$TREE/.git" ] && [ "${FORCE:-0}" != 1 ]; then
	git -C "$TREE" rev-parse -q --verify base >/dev/null ||
		die "$TREE is not a lab tree (no 'base' tag); move it away or FORCE=1"
	if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		die "$TREE has uncommitted changes: commit them and 'make export', or 'make tree FORCE=1' to discard"
	fi
	# Local commits are safe only if the series already holds them.
	local_ids=$(git -C "$TREE" log --format=%H base..HEAD |
		while read -r c; do git -C "$TREE" show "$c" | git patch-id --stable | cut -d' ' -f1; done | sort)
	series_ids=$(for p in $(series); do git patch-id --stable <"$p" | cut -d' ' -f1; done | sort)
	if [ "$local_ids" != "$(comm -12 <(echo "$local_ids") <(echo "$series_ids"))" ]; then
		die "$TREE has commits not in patches/: run 'make export' first, or 'make tree FORCE=1' to discard them"
	fi
fi

src=$(bash "$LAB_DIR/kbuild.sh" srcrepo)
progress "cloning the base from $src"
rm -rf "$TREE.tmp"
mkdir -p "$(dirname "$TREE")"
git clone -q --no-checkout "$src" "$TREE.tmp"
(
	cd "$TREE.tmp"
	git remote remove origin
	git config user.name "${GIT_AUTHOR_NAME:-Lab Developer}"
	git config user.email "${GIT_AUTHOR_EMAIL:-dev@lan743x-lab.invalid}"
	git config gc.auto 0
	git checkout -q -B series base
)
cp "$src/.git/lab-base-version" "$TREE.tmp/.git/"
rm -rf "$TREE"
mv "$TREE.tmp" "$TREE"
n=$(series | wc -l)
progress "applying $n patches from patches/"
apply_series "$TREE"
progress "tree ready: $TREE ($(git -C "$TREE" describe --tags --always) , $n patches on base)"
