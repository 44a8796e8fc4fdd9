#!/bin/bash
# Build (in the cached QEMU tree) and run the lan7430 qtests.
# Exits non-zero on any failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# build.sh builds tests/qtest/lan7430-test too (LAN743X_BUILD_QTESTS): in
# the shared tree, with its lock held and this revision's units configured
QEMU=$(LAN743X_BUILD_FORCE=1 LAN743X_BUILD_QTESTS=1 "$HERE/../build.sh" | tail -1)
SRC=$(cat "$(dirname "$QEMU")/source-dir")
BUILD="$SRC/build"
cd "$BUILD"
# wrapper so the firmware search path (Debian's seabios) is passed along and
# the binary name still ends in -x86_64 (qtest derives the arch from it)
mkdir -p lab-qtest
cat > lab-qtest/qemu-system-x86_64 <<EOW
#!/bin/sh
exec "$QEMU" -L /usr/share/seabios -L /usr/share/qemu "\$@"
EOW
chmod +x lab-qtest/qemu-system-x86_64
QTEST_QEMU_BINARY=./lab-qtest/qemu-system-x86_64 \
QTEST_QEMU_IMG=/bin/false \
    timeout 300 ./tests/qtest/lan7430-test --tap -k "$@"
