#!/bin/bash
# Run every lan7430 qtest alone with model properties forced through
# -global, e.g. to see which qtests a different default would break:
#
#   emulator/tests/qtest-globals.sh dma-rate=200 [desc-fetch-ns=2000 ...]
#
# Prints "ok NAME" or "FAIL NAME :: first error" per qtest, then a count;
# exits non-zero when any failed.  Each qtest runs in its own process (a
# failed assertion aborts the qtest binary).  Slow when many fail: a
# failing qtest waits out its real-time limits (up to ~10 s).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || { echo "usage: $0 PROP=VALUE..." >&2; exit 2; }
QEMU=$(LAN743X_BUILD_FORCE=1 LAN743X_BUILD_QTESTS=1 "$HERE/../build.sh" | tail -1)
SRC=$(cat "$(dirname "$QEMU")/source-dir")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
ARGS=""
for pv in "$@"; do
    case "$pv" in *=*) ;; *) echo "$0: $pv: not PROP=VALUE" >&2; exit 2 ;; esac
    ARGS="$ARGS -global lan743x-base.$pv"
done
mkdir -p "$W/bin"
cat > "$W/bin/qemu-system-x86_64" <<EOW
#!/bin/sh
exec "$QEMU" -L /usr/share/seabios -L /usr/share/qemu $ARGS "\$@"
EOW
chmod +x "$W/bin/qemu-system-x86_64"
cd "$SRC/build"
ok=0 bad=0
for t in $(grep -o 'qtest_add_func("lan7430/[a-z0-9-]*"' "$HERE/lan7430-test.c" |
           sed 's|.*"lan7430/|/x86_64/lan7430/|; s|"$||'); do
    if QTEST_QEMU_BINARY="$W/bin/qemu-system-x86_64" QTEST_QEMU_IMG=/bin/false \
       timeout 120 ./tests/qtest/lan7430-test --tap -p "$t" >"$W/log" 2>&1; then
        echo "ok ${t##*/}"; ok=$((ok + 1))
    else
        echo "FAIL ${t##*/} :: $(grep -m1 ERROR "$W/log" || tail -1 "$W/log")"
        bad=$((bad + 1))
    fi
done
echo "$* : $ok passed, $bad failed"
[ "$bad" = 0 ]
