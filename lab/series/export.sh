#!/bin/bash
# make export [STACK=...]: rewrite patches/$STACK from stack-base..HEAD of
# build/$STACK/linux (stack-base: the base plus the parent stacks' patches).
. "$(dirname "$0")/../common.sh"
need git

[ -d "$TREE/.git" ] || die "no tree at $TREE: run 'make tree' first"
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes: commit them first"
from=base
git -C "$TREE" rev-parse -q --verify stack-base >/dev/null && from=stack-base
n=$(git -C "$TREE" rev-list --count "$from..HEAD")
[ "$n" -gt 0 ] || die "no commits on top of $from in $TREE: nothing to export"
# the author and Signed-off-by are the exporting user's git identity
me=$(git config user.name || true)
[ -n "$me" ] && [ -n "$(git config user.email || true)" ] ||
	die "set your git identity first (git config --global user.name/user.email)"

email=$(git config user.email)
progress "signing the $n commits off as $me <$email>"
git -C "$TREE" -c user.name="$me" -c user.email="$email" \
	rebase -q --exec "bash $LAB_DIR/series/signoff.sh" "$from" ||
	die "rewriting the commits' identity failed (git -C $TREE rebase --abort)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
git -C "$TREE" format-patch -q --numbered --cover-letter --zero-commit \
	--subject-prefix="$SERIES_PREFIX v$SERIES_VERSION" \
	--signature="lan743x-lab" --base="$from" -o "$out" "$from..HEAD"

# Keep the cover letter from the tracked cover text.
cover="$LAB_DIR/series/cover/$STACK.txt"
[ -r "$cover" ] || die "no cover text $cover for stack $STACK"
python3 - "$out/0000-cover-letter.patch" "$cover" <<'PY'
import sys
path, cover = sys.argv[1], sys.argv[2]
text = open(path).read()
lines = open(cover).read().rstrip("\n").split("\n")
subject, blurb = lines[0], "\n".join(lines[2:] if len(lines) > 2 else [])
text = text.replace("*** SUBJECT HERE ***", subject)
text = text.replace("*** BLURB HERE ***", blurb)
open(path, "w").write(text)
PY

mkdir -p "$PATCHES"
rm -f "$PATCHES"/*.patch
cp "$out"/*.patch "$PATCHES"/
progress "exported $n patches (+ cover letter) to patches/$STACK"
ls "$PATCHES"
