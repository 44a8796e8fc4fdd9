#!/bin/bash
# make tree [STACK=...]: build/$STACK/linux = the stack's pinned base + its
# parent stacks' patches (tag 'stack-base') + patches/$STACK/*.patch (git am).
# Refuses to throw away local commits or changes unless FORCE=1.
. "$(dirname "$0")/../common.sh"
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
	from=base
	git -C "$TREE" rev-parse -q --verify stack-base >/dev/null && from=stack-base
	local_ids=$(git -C "$TREE" log --format=%H "$from..HEAD" |
		while read -r c; do git -C "$TREE" show "$c" | git patch-id --stable | cut -d' ' -f1; done | sort)
	series_ids=$(for p in $(series); do git patch-id --stable <"$p" | cut -d' ' -f1; done | sort)
	if [ "$local_ids" != "$(comm -12 <(echo "$local_ids") <(echo "$series_ids"))" ]; then
		die "$TREE has commits not in patches/$STACK: run 'make export' first, or 'make tree FORCE=1' to discard them"
	fi
fi

src=$(bash "$LAB_DIR/kernel/kbuild.sh" srcrepo)
progress "cloning the base from $src"
rm -rf "$TREE.tmp"
mkdir -p "$(dirname "$TREE")"
git clone -q --no-checkout "$src" "$TREE.tmp"
(
	cd "$TREE.tmp"
	git remote remove origin
	# your own git identity commits here; the placeholder only without one
	git config user.name >/dev/null || git config user.name "Lab Developer"
	git config user.email >/dev/null || git config user.email "dev@lan743x-lab.invalid"
	git config gc.auto 0
	git checkout -q -B series base
)
cp "$src/.git/lab-base-version" "$TREE.tmp/.git/"
rm -rf "$TREE"
mv "$TREE.tmp" "$TREE"
np=$(parent_series | wc -l)
if [ "$np" -gt 0 ]; then
	progress "applying $np patches of the parent stacks ($(stack_chain | grep -vx "$STACK" | tr '\n' ' '))"
	apply_series "$TREE" 999999 parent_series
fi
git -C "$TREE" tag -f stack-base >/dev/null
n=$(series | wc -l)
progress "applying $n patches from patches/$STACK"
apply_series "$TREE" 999999 series
progress "tree ready: $TREE (stack $STACK: $n patches on $BASE_PKG $v${np:+ + $np of its parents})"
