#!/bin/bash
# Install what the lab needs (idempotent, non-interactive): Debian packages
# and PyPI packages. Fast when everything is already there.
. "$(dirname "$0")/common.sh"

APT_PKGS=(
	"$BASE_PKG" build-essential bc bison flex libelf-dev libssl-dev dwarves
	kmod cpio zstd rsync ccache git python3 python3-venv python3-yaml
	sparse coccinelle gcc-arm-linux-gnueabihf
	iperf3 ethtool iproute2 iputils-ping udev socat linux-perf
	dpkg-dev libfdt-dev libglib2.0-dev libpixman-1-dev ninja-build meson
	qemu-system-x86
)

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing Debian packages (${missing[*]}); run as root or install them"
	progress "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install failed for: ${missing[*]}"
fi

pymissing=()
python3 -c 'import virtme_ng' 2>/dev/null || pymissing+=(virtme-ng)
python3 -c 'import qemu.qmp' 2>/dev/null || pymissing+=(qemu.qmp)
python3 -c 'import matplotlib' 2>/dev/null || pymissing+=(matplotlib)
python3 -c 'import pytest' 2>/dev/null || pymissing+=(pytest)
# checkpatch's spdxcheck.py needs ply and GitPython
python3 -c 'import ply, git' 2>/dev/null || pymissing+=(ply GitPython)
if [ ${#pymissing[@]} -gt 0 ]; then
	progress "pip install ${pymissing[*]}"
	python3 -m pip install -q "${pymissing[@]}" ||
		die "pip install failed for: ${pymissing[*]}"
fi

v=$(base_version)
note_base_drift "$v"
progress "setup: all tools present (base $BASE_PKG $v)"
