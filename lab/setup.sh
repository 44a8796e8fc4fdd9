#!/bin/bash
# Install what the lab needs (idempotent, non-interactive): Debian packages
# and PyPI packages. Fast when everything is already there.
. "$(dirname "$0")/common.sh"

# the bases installed from the system's suites (the others are fetched below)
SYS_BASES=()
for b in $BASES; do
	[ -n "$(conf_get BASE "$b" SUITE)" ] || SYS_BASES+=("$(conf_get BASE "$b" PKG)")
done

APT_PKGS=(
	"${SYS_BASES[@]}" build-essential bc bison flex libelf-dev libssl-dev dwarves
	kmod cpio zstd rsync ccache git python3 python3-venv python3-yaml
	sparse coccinelle gcc-arm-linux-gnueabihf device-tree-compiler
	iperf3 ethtool iproute2 iputils-ping udev socat linux-perf
	dpkg-dev libfdt-dev libglib2.0-dev libpixman-1-dev ninja-build meson
	pkg-config libcap-ng-dev libattr1-dev
	qemu-system-x86 qemu-system-data seabios ipxe-qemu
	openssh-server openssh-client
	# the forwarding library's tests (drivers/net/hw/ethtool_*.sh): mausezahn, jq
	netsniff-ng jq
	clang python3-jsonschema
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
# make check's py-lint: pinned, so that a new release's rules do not
# change what counts as a new diagnostic; pytest-xdist: make test's two
# workers (Makefile)
for v in ruff==0.17.6 pylint==4.1.4 pytest-xdist==3.8.0; do
	python3 -c "import importlib.metadata as m, sys
sys.exit(m.version('${v%%==*}') != '${v#*==}')" 2>/dev/null || pymissing+=("$v")
done
if [ ${#pymissing[@]} -gt 0 ]; then
	progress "pip install ${pymissing[*]}"
	python3 -m pip install -q "${pymissing[@]}" ||
		die "pip install failed for: ${pymissing[*]}"
fi

# every base: fetch those served from another suite, check and report drift
vs=()
for b in $BASES; do
	select_base "$b"
	fetch_base
	v=$(base_version)
	note_base_drift "$v"
	vs+=("$BASE_PKG $v")
done
sparse_bin >/dev/null
guest_tools >/dev/null
progress "setup: all tools present (bases: ${vs[*]})"
