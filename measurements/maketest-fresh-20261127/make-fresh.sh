#!/bin/bash
# How this machine was made fresh before the cold `make test` of
# 2026-11-27: every Debian package and every PyPI package of the system
# Python that a fresh machine of this kind does not have was purged
# (the lists: the workplace's package list of a fresh machine, compared
# with what dpkg and pip list here), and the lab's cache was moved away.
# Run as root.  Input: FRESH_LIST, the workplace's list of what a fresh
# machine has ("apt<TAB>name<TAB>version" and "pip 3.11<TAB>name<TAB>...").
set -euo pipefail
FRESH_LIST=${FRESH_LIST:?the package list of a fresh machine}
out=${1:-.}

awk -F'\t' '$1=="apt"{sub(/:.*/,"",$2); print $2}' "$FRESH_LIST" | sort -u >"$out/apt-fresh.txt"
dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1=="ii"{print $2}' | sort -u >"$out/apt-now.txt"
comm -13 "$out/apt-fresh.txt" "$out/apt-now.txt" >"$out/apt-purged.txt"
awk -F'\t' '$1=="pip 3.11"{print tolower($2)}' "$FRESH_LIST" | sort -u >"$out/pip-fresh.txt"
python3 -m pip list --format=freeze | sed 's/==.*//' | tr A-Z a-z | sort -u >"$out/pip-now.txt"
comm -13 "$out/pip-fresh.txt" "$out/pip-now.txt" >"$out/pip-uninstalled.txt"

export DEBIAN_FRONTEND=noninteractive
if [ -s "$out/apt-purged.txt" ]; then
	xargs apt-get purge -y -q <"$out/apt-purged.txt"
	apt-get autoremove --purge -y -q
fi
if [ -s "$out/pip-uninstalled.txt" ]; then
	xargs python3 -m pip uninstall -y <"$out/pip-uninstalled.txt"
fi
command -v pyenv >/dev/null && pyenv rehash || true

# what is left beyond a fresh machine (both should be empty)
dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1=="ii"{print $2}' | sort -u |
	comm -13 "$out/apt-fresh.txt" - >"$out/apt-left.txt"
python3 -m pip list --format=freeze | sed 's/==.*//' | tr A-Z a-z | sort -u |
	comm -13 "$out/pip-fresh.txt" - >"$out/pip-left.txt"
wc -l "$out"/apt-purged.txt "$out"/pip-uninstalled.txt "$out"/apt-left.txt "$out"/pip-left.txt
