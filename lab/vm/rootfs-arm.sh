#!/bin/bash
# The ARMv7 guest's root file system: Debian 12 armhf packages fetched with
# `apt-get download` through an apt configuration private to the lab (its own
# source list, an empty dpkg status, APT::Architecture=armhf: the system's
# apt state and architectures are not touched) and unpacked with
# `dpkg-deb -x`; no maintainer script runs, nothing needs root, binfmt or
# qemu-user. Packed as an uncompressed initramfs (newc cpio, owner 0:0).
#
#   lab/vm/rootfs-arm.sh        print the path of the cached rootfs.cpio
#
# Cached as $CACHE/rootfs/armhf-<key>/rootfs.cpio, key = sha256(package
# list + this script): a change to either builds a fresh one. The versions
# come from the suite at build time and are listed in packages.txt beside it.
. "$(dirname "$0")/../common.sh"

RFS_SUITES="bookworm bookworm-updates"
# what the guest scripts run: bash + coreutils etc. for e2e.sh, iproute2
# (ip netns), iputils-ping (-M do), ethtool, iperf3, python3 (xfer.py,
# kselftests), kmod (insmod/modprobe), procps (pkill), busybox-static for
# anything else; for the kselftests (make arm-selftests): python3-yaml
# (ynl), socat (the generic tests), openssh (their ssh mode), tar (the
# results go back to the host as a tar on the console)
RFS_PKGS="bash coreutils util-linux mount grep sed mawk findutils gzip
	procps psmisc kmod iproute2 iputils-ping ethtool iperf3 python3
	busybox-static libc-bin diffutils hostname ncurses-base
	python3-yaml socat tar openssh-server openssh-client"

# deb_file DIR NAME=VERSION: the downloaded .deb of that version, if any
deb_file() {
	local name=${2%%=*} ver=${2#*=} f
	for f in "$1/${name}_${ver//:/%3a}_"*.deb; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 0
}

# armhf_apt DIR SUITES: a private apt configuration in DIR for Debian's
# armhf packages of SUITES (its own source list, lists, cache and an
# empty dpkg status; the system's apt state is not touched); prints the
# apt-get options that use it
armhf_apt() {
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial" "$1/state"
	: >"$1/state/status"
	cat >"$1/lab.sources" <<EOS
Types: deb
URIs: http://deb.debian.org/debian
Suites: $2
Components: main
Architectures: armhf
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	echo "-o Dir::Etc::SourceList=$1/lab.sources -o Dir::Etc::SourceParts=/dev/null
	   -o Dir::State=$1/state -o Dir::State::Lists=$1/lists
	   -o Dir::State::status=$1/state/status -o Dir::Cache=$1/cache
	   -o APT::Architecture=armhf -o APT::Architectures::=armhf
	   -o Debug::NoLocking=1 -o APT::Get::AllowUnauthenticated=false"
}

# ethtool_armhf ROOT TMP: GUEST_ETHTOOL_VERSION's armhf ethtool (from
# GUEST_ETHTOOL_SUITE, private apt lists) as ROOT/usr/local/sbin/ethtool
ethtool_armhf() {
	local o
	o=$(armhf_apt "$CACHE/apt/$GUEST_ETHTOOL_SUITE-armhf" "$GUEST_ETHTOOL_SUITE")
	mkdir -p "$2/eth"
	progress "armhf rootfs: ethtool $GUEST_ETHTOOL_VERSION ($GUEST_ETHTOOL_SUITE)"
	# shellcheck disable=SC2086
	apt-get $o update -qq >/dev/null 2>&1 || return 1
	# shellcheck disable=SC2086
	(cd "$2/eth" && apt-get $o download -qq "ethtool:armhf=$GUEST_ETHTOOL_VERSION" >/dev/null 2>&1) ||
		return 1
	dpkg-deb -x "$2"/eth/ethtool_*.deb "$2/eth/x" || return 1
	mkdir -p "$1/usr/local/sbin"
	cp "$2/eth/x/usr/sbin/ethtool" "$1/usr/local/sbin/ethtool"
}

rootfs() {
	local key out a o tmp root inst n deb
	key=$({
		echo "$RFS_SUITES $GUEST_ETHTOOL_SUITE $GUEST_ETHTOOL_VERSION"
		echo "$RFS_PKGS" | tr -s ' \t\n' '\n' | sort
		cat "${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-16)
	out=$CACHE/rootfs/armhf-$key
	if [ -s "$out/rootfs.cpio" ]; then
		echo "$out/rootfs.cpio"
		return
	fi
	need apt-get dpkg-deb cpio
	a=$CACHE/apt/bookworm-armhf
	o=$(armhf_apt "$a" "$RFS_SUITES")
	progress "armhf rootfs: apt-get update ($RFS_SUITES, armhf, private lists)"
	# shellcheck disable=SC2086
	apt-get $o update -qq >/dev/null 2>&1 ||
		die "armhf rootfs: apt-get update failed (network?)"
	# the whole dependency closure from an empty system: apt's own resolver
	# in simulation, against the private empty dpkg status
	# shellcheck disable=SC2086
	inst=$(apt-get $o -s -qq install --no-install-recommends $RFS_PKGS 2>"$a/resolve.err" |
		awk '/^Inst /{ v=$3; gsub(/[()]/, "", v); print $2 "=" v }') ||
		die "armhf rootfs: cannot resolve the package list: $(cat "$a/resolve.err")"
	[ -n "$inst" ] || die "armhf rootfs: empty package closure: $(cat "$a/resolve.err")"
	n=$(echo "$inst" | wc -l)
	tmp=$(mktemp -d "$CACHE/rootfs/tmp.XXXXXX" 2>/dev/null ||
		{ mkdir -p "$CACHE/rootfs"; mktemp -d "$CACHE/rootfs/tmp.XXXXXX"; })
	# the .debs are kept in $a/debs: a new key downloads only what changed
	local p want=() debs=()
	mkdir -p "$a/debs"
	for p in $inst; do
		deb=$(deb_file "$a/debs" "$p")
		if [ -n "$deb" ]; then debs+=("$deb"); else want+=("$p"); fi
	done
	if [ ${#want[@]} -gt 0 ]; then
		progress "armhf rootfs: downloading ${#want[@]} of $n packages"
		# shellcheck disable=SC2086
		(cd "$a/debs" && apt-get $o download -qq "${want[@]}" >/dev/null 2>"$tmp/dl.err") ||
			{ cat "$tmp/dl.err" >&2; rm -rf "$tmp"; die "armhf rootfs: apt-get download failed"; }
		for p in "${want[@]}"; do
			deb=$(deb_file "$a/debs" "$p")
			[ -n "$deb" ] || { rm -rf "$tmp"; die "armhf rootfs: $p not downloaded"; }
			debs+=("$deb")
		done
	fi
	root=$tmp/root
	mkdir -p "$root"
	for deb in "${debs[@]}"; do
		dpkg-deb -x "$deb" "$root" || { rm -rf "$tmp"; die "dpkg-deb -x $deb failed"; }
	done
	# the newer ethtool the x86_64 guest gets too (lab/common.sh
	# guest_tools): Debian 12's 6.1 has no --json for -g, which the
	# kernel's hw/pp_alloc_fail.py uses; first on the guest's PATH
	ethtool_armhf "$root" "$tmp" || { rm -rf "$tmp"; die "armhf rootfs: no ethtool $GUEST_ETHTOOL_VERSION"; }
	# trim what a test guest never reads
	rm -rf "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/info \
		"$root"/usr/share/locale "$root"/usr/share/lintian "$root"/usr/share/bash-completion
	mkdir -p "$root"/{proc,sys,dev,tmp,run,mnt,root,var/run,var/tmp,etc}
	chmod 1777 "$root/tmp" "$root/var/tmp"
	# merged /usr is not set up by unpacking alone: the dynamic loader and
	# the tools are found under both names
	[ -e "$root/lib/ld-linux-armhf.so.3" ] ||
		die "armhf rootfs: no /lib/ld-linux-armhf.so.3 (libc6 not unpacked?)"
	# what maintainer scripts (not run here) would have made: the
	# alternatives and /bin/sh the guest scripts use
	[ -e "$root/bin/sh" ] || ln -s bash "$root/bin/sh"
	[ -e "$root/usr/bin/awk" ] || ln -s mawk "$root/usr/bin/awk"
	# and the users sshd's privilege separation needs (openssh-server's
	# postinst would add sshd)
	printf '%s\n' "root:x:0:0:root:/root:/bin/bash" \
		"sshd:x:100:65534::/run/sshd:/usr/sbin/nologin" \
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin" >"$root/etc/passwd"
	printf '%s\n' "root:x:0:" "nogroup:x:65534:" >"$root/etc/group"
	printf '127.0.0.1 localhost\n' >"$root/etc/hosts"
	printf 'hosts: files\n' >"$root/etc/nsswitch.conf"
	echo "$inst" >"$tmp/packages.txt"
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) >"$tmp/rootfs.cpio" ||
		{ rm -rf "$tmp"; die "armhf rootfs: cpio failed"; }
	rm -rf "$out"
	mkdir -p "$out"
	mv "$tmp/packages.txt" "$out/packages.txt"
	mv "$tmp/rootfs.cpio" "$out/rootfs.cpio.tmp"
	mv "$out/rootfs.cpio.tmp" "$out/rootfs.cpio"
	rm -rf "$tmp"
	progress "armhf rootfs: $(du -h "$out/rootfs.cpio" | cut -f1) ($n packages) in $out"
	echo "$out/rootfs.cpio"
}

main() {
	mkdir -p "$CACHE/rootfs"
	exec 9>"$CACHE/rootfs/armhf.lock"
	flock 9
	rootfs
}
main "$@"; exit $?
