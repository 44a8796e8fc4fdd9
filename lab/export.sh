#!/bin/bash
# make export: rewrite patches/ from base..HEAD of build/linux.
. "$(dirname "$0")/common.sh"
need git

[ -d "$TREE/.git" ] || die "no tree at $TREE: run 'make tree' first"
git -C "$TREE" rev-parse -q --verify base >/dev/null || die "$TREE has no 'base' tag"
[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes: commit them first"
n=$(git -C "$TREE" rev-list --count base..HEAD)
[ "$n" -gt 0 ] || die "no commits on top of base in $TREE: nothing to export"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
git -C "$TREE" format-patch -q --numbered --cover-letter --zero-commit \
	--subject-prefix="$SERIES_PREFIX v$SERIES_VERSION" \
	--signature="lan743x-lab" --base=base -o "$out" base..HEAD

# Keep the cover letter from the tracked cover text.
cover="$LAB_DIR/cover-letter.txt"
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
progress "exported $n patches (+ cover letter) to $PATCHES"
ls "$PATCHES"
