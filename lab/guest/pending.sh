#!/bin/bash
# Changes of a lan743x interface while a partial frame is pending: the
# stop of each RX channel finds a frame whose last buffer never came and
# counts it as lost (the series' lan743x_rx_count_lost(), in process
# context). Runs inside the VM as root, on a model started with
# `fault-drop-ls-every=2` (lab/vm/vm.sh DUT_OPTS): every other frame the
# model writes has no LS and stays half-assembled in the driver until the
# next one, or until the channel stops; the others are received, so the
# NAPI poll updates the same statistics in softirq context first.
#
#   lab/vm/vm.sh lab/guest/pending.sh [KO]
#
#   KO  lan743x.ko to load (default $LAN743X_KO, else the kernel's own)
#
# Before each of `ip link set down` (then up), `ip link set mtu 9000` and
# `ethtool -G rx 256` the peer sends single UDP frames until one is not
# received (Ip InReceives; static neighbours, IPv6 off: nothing else
# reaches the DUT). Prints one line per change:
#   pending: <change> rc=<status> rx_dropped+<delta> frames=<sent> pending=yes|no
# then the kernel log's suspicious lines after the run's start
# (lab/guest/klog.sh) between "pending: klog begin" and "pending: klog
# end", the whole kernel log of the run after "pending: dmesg", and
# "pending: DONE". Kernel log lines are prefixed "pending| " (the ARM
# guest's console filter drops lines that look like the kernel's own). The verdict is the caller's (tests/test_vm_arm.py).
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/klog.sh"

KO=${1:-${LAN743X_KO:-}}
MARK=lan743x-pending-start

dropped() { cat "/sys/class/net/$1/statistics/rx_dropped"; }

# IP packets the stack received (Ip InReceives): what the driver passed
# up, whichever module (upstream's rx_packets is the MAC's count)
ip_in() { awk '/^Ip:/ && n++ { print $4 }' /proc/net/snmp; }

# UDP frames from the peer to the DUT (bash's /dev/udp: no python start,
# slow under TCG), one at a time until one is not received: that one is
# pending. Sets SENT.
make_pending() {
	local last
	for SENT in 1 2 3 4 5 6 7 8; do
		last=$(ip_in)
		ip netns exec "$NS" bash -c "echo pending >/dev/udp/$LOCAL_V4/9999" 2>/dev/null
		sleep 1
		[ "$(ip_in)" = "$last" ] && return 0
	done
	return 1
}

carrier() {
	local i
	for i in $(seq 1 100); do
		[ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

# change NAME CMD...: a frame pending, then CMD; one result line
change() {
	local name=$1 a b rc
	shift
	local p=yes
	make_pending || p=no
	a=$(dropped "$DUT")
	"$@" 2>/tmp/pending-err
	rc=$?
	b=$(dropped "$DUT")
	echo "pending: $name rc=$rc rx_dropped+$((b - a)) frames=$SENT pending=$p"
	[ $rc = 0 ] || echo "pending: $name: $(head -1 /tmp/pending-err)"
}

main() {
	local i dutmac
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	peer_setup || { echo "pending: no peer"; return 1; }
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	load "$KO" || { echo "pending: the module did not load"; return 1; }
	for i in $(seq 1 100); do DUT=$(find_if lan743x) && break; sleep 0.1; done
	udevadm settle -t 10 2>/dev/null || sleep 2
	DUT=$(find_if lan743x) || { echo "pending: no lan743x interface"; return 1; }
	dutmac=$(cat "/sys/class/net/$DUT/address")
	ip addr flush dev "$DUT"
	ip addr add "$LOCAL_V4/24" dev "$DUT"
	ip link set "$DUT" up
	carrier "$DUT" || echo "pending: no carrier"
	ip -n "$NS" neigh replace "$LOCAL_V4" lladdr "$dutmac" dev "$PEER" nud permanent
	echo "$MARK" >/dev/kmsg
	echo "pending: DUT $DUT ($(ethtool -i "$DUT" | sed -n 's/^version: //p'))"

	change down ip link set dev "$DUT" down
	ip link set dev "$DUT" up
	carrier "$DUT" || echo "pending: no carrier after up"
	change mtu-9000 ip link set dev "$DUT" mtu 9000
	change ring-256 ethtool -G "$DUT" rx 256
	sleep 1

	echo "pending: klog begin"
	dmesg | klog_bad "$MARK" | sed 's/^/pending| /'
	echo "pending: klog end"
	echo "pending: dmesg"
	dmesg | awk -v m="$MARK" 'f; index($0, m) {f=1}' | sed 's/^/pending| /'
	echo "pending: DONE"
}

main "$@"
