#!/bin/bash
# Run by export.sh on each exported commit (git rebase --exec): the patches
# carry the exporting user's identity. A commit authored by the lab's
# placeholder identity (trees made before an identity was set) is given to
# the exporter, its placeholder Signed-off-by replaced; every commit ends
# with the exporter's Signed-off-by (added only if missing).
set -euo pipefail
PLACEHOLDER="Lab Developer <dev@lan743x-lab.invalid>"
me="$(git config user.name) <$(git config user.email)>"
author=$(git log -1 --format='%an <%ae>')
msg=$(git log -1 --format=%B)
reset=()
if [ "$author" = "$PLACEHOLDER" ]; then
	reset=(--reset-author)
	msg=$(printf '%s\n' "$msg" | grep -vxF "Signed-off-by: $PLACEHOLDER")
fi
msg=$(printf '%s\n' "$msg" |
	git interpret-trailers --if-exists addIfDifferent --trailer "Signed-off-by: $me")
git commit -q --amend --no-verify "${reset[@]}" -m "$msg"
