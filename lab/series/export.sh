#!/bin/bash
# make export [STACK=...] [CHAIN=...]: rewrite patches/$STACK from
# stack-base..HEAD of build/$STACK/linux (stack-base: the base plus the
# parent stacks' patches).
#
# CHAIN= exports the parent stacks from the same tree as well, so that one
# tree can edit a whole chain (fixups that belong in a parent's patch, a
# patch moving from one stack to the next): its commits base..HEAD are cut
# into the chain's stacks in order. CHAIN=1 gives each parent stack as many
# commits as patches/<parent> holds now; CHAIN="net=2 net-next-1=9" gives
# the counts; STACK takes the rest.
#
# Each patch is addressed as scripts/get_maintainer.pl of the tree says: To:
# the maintainers of what it touches and their list, Cc: the reviewers and
# other lists, and the page_pool maintainers on a patch that uses page_pool.
# The cover letter is addressed to all its patches' recipients.
. "$(dirname "$0")/../common.sh"
need git

[ -d "$TREE/.git" ] || die "no tree at $TREE: run 'make tree' first"
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes: commit them first"
from=base
git -C "$TREE" rev-parse -q --verify stack-base >/dev/null && from=stack-base
[ -z "${CHAIN:-}" ] || from=base
n=$(git -C "$TREE" rev-list --count "$from..HEAD")
[ "$n" -gt 0 ] || die "no commits on top of $from in $TREE: nothing to export"
# SIGNOFF=1: the exporting user signs every patch off and becomes the
# author of those a placeholder wrote; their identity must be a real one.
# Without it, the stored form: no Signed-off-by of the exporter or of a
# placeholder (lab/series/signoff.sh).
. "$LAB_DIR/series/identity.sh"
signoff=${SIGNOFF:-0}
case "$signoff" in
0 | 1) ;;
*) die "SIGNOFF=$signoff: 1 signs the patches off, 0 (default) does not" ;;
esac
me=$(git config user.name || true)
email=$(git config user.email || true)
[ -n "$me" ] && [ -n "$email" ] ||
	die "set your git identity first (git config --global user.name/user.email)"
if [ "$signoff" = 1 ] && is_placeholder "$me <$email>"; then
	die "SIGNOFF=1: '$me <$email>' is a placeholder identity; set your own (git config --global user.name/user.email): only you can sign the patches off"
fi

# ranges: "stack count" lines, in order, covering $from..HEAD
ranges() {
	local s c left=$n spec
	if [ -z "${CHAIN:-}" ]; then
		echo "$STACK $n"
		return
	fi
	for s in $(stack_chain); do
		[ "$s" != "$STACK" ] || break
		c=""
		if [ "$CHAIN" = 1 ]; then
			c=$(series "$s" | wc -l)
		else
			for spec in $CHAIN; do
				[ "${spec%%=*}" = "$s" ] && c=${spec#*=}
			done
			[ -n "$c" ] || die "CHAIN=\"$CHAIN\" gives no count for stack $s"
		fi
		[[ "$c" =~ ^[0-9]+$ ]] && [ "$c" -ge 1 ] && [ "$c" -lt "$left" ] ||
			die "stack $s: $c commits of the $left left in $TREE (CHAIN=\"$CHAIN\")"
		echo "$s $c"
		left=$((left - c))
	done
	echo "$STACK $left"
}
plan=$(ranges) || exit 1

if [ "$signoff" = 1 ]; then
	progress "signing the $n commits off as $me <$email>"
else
	progress "exporting the $n commits without a Signed-off-by (SIGNOFF=1 adds yours)"
fi
# the trailer's form as the base's checkpatch wants it (lab.conf)
assisted=$(conf_get BASE "$LAB_BASE" ASSISTED_BY)
LAN743X_SIGNOFF=$signoff LAN743X_ASSISTED_BY=${assisted:-$ASSISTED_BY} \
	git -C "$TREE" -c user.name="$me" -c user.email="$email" \
	rebase -q --exec "bash $LAB_DIR/series/signoff.sh" "$from" ||
	die "rewriting the commits' trailers failed (git -C $TREE rebase --abort)"

# export_stack STACK START END COUNT: patches/STACK from START..END
export_stack() {
	local s=$1 start=$2 end=$3 count=$4 out cover prefix version dir
	prefix=$(conf_get STACK "$s" PREFIX)
	version=$(conf_get STACK "$s" VERSION)
	cover="$LAB_DIR/series/cover/$s.txt"
	[ -r "$cover" ] || die "no cover text $cover for stack $s"
	out=$(mktemp -d)
	git -C "$TREE" format-patch -q --numbered --cover-letter --zero-commit \
		--subject-prefix="$prefix v$version" \
		--signature="lan743x-lab" --base="$start" -o "$out" "$start..$end"
	python3 "$LAB_DIR/series/address.py" "$TREE" "$cover" "$me <$email>" "$out" ||
		die "addressing the patches of $s failed"
	dir=${LAN743X_PATCHES_ROOT:-$ROOT_DIR/patches}/$s
	[ "$s" != "$STACK" ] || dir=$PATCHES
	mkdir -p "$dir"
	rm -f "$dir"/*.patch
	cp "$out"/*.patch "$dir"/
	rm -rf "$out"
	progress "exported $count patches (+ cover letter) to patches/$s"
	ls "$dir"
}

start=$(git -C "$TREE" rev-parse "$from")
while read -r s c; do
	end=$(git -C "$TREE" rev-list --reverse "$start..HEAD" | sed -n "${c}p")
	export_stack "$s" "$start" "$end" "$c"
	[ "$s" = "$STACK" ] || git -C "$TREE" tag -f stack-base "$end" >/dev/null
	start=$end
done <<<"$plan"
