#!/bin/bash
# Run by export.sh on each exported commit (git rebase --exec).
#
# Every patch carries the base's Documentation/process/coding-assistants.rst
# trailer, "Assisted-by: LLM <tools>" ($LAN743X_ASSISTED_BY), once.
#
# The stored form (make export): no Signed-off-by of the exporter or of a
# placeholder identity. Only a human who has read the patch can certify
# the DCO, so the patches kept in this repository carry none; a
# Signed-off-by of somebody else (the upstream author of a backported
# commit) is kept.
#
# The signed form (make export SIGNOFF=1, LAN743X_SIGNOFF=1): the exporter
# becomes the author of every commit authored by a placeholder and signs
# every commit off, exactly once. export.sh refuses a placeholder exporter
# before it gets here (lab/series/identity.sh).
set -euo pipefail
. "$(dirname "$0")/identity.sh"
me="$(git config user.name) <$(git config user.email)>"
author=$(git log -1 --format='%an <%ae>')
msg=$(git log -1 --format=%B)
assisted=${LAN743X_ASSISTED_BY:?LAN743X_ASSISTED_BY is not set}
reset=()

# drop the exporter's and every placeholder's Signed-off-by
keep=""
while IFS= read -r line; do
	if [[ "$line" =~ ^Signed-off-by:\ (.*)$ ]]; then
		who=${BASH_REMATCH[1]}
		if [ "$who" = "$me" ] || is_placeholder "$who"; then
			continue
		fi
	fi
	keep+="$line"$'\n'
done <<<"$msg"
msg=$(printf '%s' "$keep" | grep -v '^Assisted-by: ' || true)
msg=$(printf '%s\n' "$msg" | git interpret-trailers --trailer "Assisted-by: $assisted")
if [ "${LAN743X_SIGNOFF:-0}" = 1 ]; then
	if is_placeholder "$author"; then
		reset=(--reset-author)
	fi
	msg=$(printf '%s\n' "$msg" | git interpret-trailers --trailer "Signed-off-by: $me")
fi
git commit -q --amend --no-verify "${reset[@]}" -m "$msg"
