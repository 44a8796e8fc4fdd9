#!/bin/bash
# Shared guest helpers (sourced): find the lan743x and virtio-net
# interfaces, load a lan743x.ko with its dependencies, move the peer into a
# network namespace and bring the DUT up. Callers may set NS, LOCAL_V4,
# REMOTE_V4 before sourcing.

NS=${NS:-ksft-lan743x-peer}
LOCAL_V4=${LOCAL_V4:-192.0.2.1}
REMOTE_V4=${REMOTE_V4:-192.0.2.2}
# IPv6 of both ends (documentation prefix), added by ipv6_setup only
LOCAL_V6=${LOCAL_V6:-2001:db8:743::1}
REMOTE_V6=${REMOTE_V6:-2001:db8:743::2}
PEER_MAC=${LAN743X_PEER_MAC:-02:74:30:00:00:02}
DFLAG=()
[ -n "${LAN743X_MODDIR:-}" ] && [ -d "$LAN743X_MODDIR/lib/modules" ] && DFLAG=(-d "$LAN743X_MODDIR")

log() { echo "[$(basename "$0")] $*" >&2; }

find_if() {	# find_if DRIVER: first interface bound to DRIVER
	local n
	for n in /sys/class/net/*; do
		[ "$(basename "$(readlink -f "$n/device/driver" 2>/dev/null)")" = "$1" ] &&
			{ basename "$n"; return 0; }
	done
	return 1
}

load() {	# load KO: the module and its dependencies
	local ko=$1 d
	rmmod lan743x 2>/dev/null
	if [ -z "$ko" ]; then
		modprobe "${DFLAG[@]}" lan743x
		return
	fi
	# A module built alone against a kernel tree may record no
	# dependencies (modpost could not resolve them): load the known ones.
	for d in $(modinfo -F depends "$ko" | tr , ' ') phylink libphy mdio_devres microchip; do
		modprobe "${DFLAG[@]}" "$d" 2>/dev/null || modprobe "$d" 2>/dev/null ||
			log "note: could not modprobe $d"
	done
	insmod "$ko"
}

peer_setup() {
	local n peer=""
	ip netns list | grep -qw "$NS" && return 0
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address" 2>/dev/null)" = "$PEER_MAC" ] && peer=$(basename "$n")
	done
	[ -n "$peer" ] || peer=$(find_if virtio_net) || { log "no virtio-net peer"; return 1; }
	ip netns add "$NS"
	ip link set "$peer" netns "$NS"
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add "$REMOTE_V4/24" dev "$peer"
	ip -n "$NS" link set "$peer" up
	PEER=$peer
	log "peer $peer in netns $NS ($REMOTE_V4)"
}

dut_setup() {
	local i dut=""
	for i in $(seq 1 100); do dut=$(find_if lan743x) && break; sleep 0.1; done
	[ -n "$dut" ] || return 1
	# udev renames a new interface (eth0 -> enp0s10) shortly after it
	# appears: wait for that, then look again
	udevadm settle -t 10 2>/dev/null || sleep 2
	dut=$(find_if lan743x) || return 1
	ip addr flush dev "$dut"
	ip addr add "$LOCAL_V4/24" dev "$dut"
	ip link set "$dut" up
	for i in $(seq 1 100); do
		[ "$(cat "/sys/class/net/$dut/carrier" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	for i in $(seq 1 30); do ping -c 1 -W 1 "$REMOTE_V4" >/dev/null 2>&1 && break; done
	echo "$dut"
}

peer_ifname() {	# peer_ifname: the peer's port in netns NS
	# The port with PEER_MAC, else the first Ethernet port. Not merely the
	# first port other than lo: a kernel with tunnel drivers built in
	# (CONFIG_IPV6_SIT=y: sit0) gives every new namespace their fallback
	# devices, listed before the port moved in.
	ip -n "$NS" -o link show | awk -v mac="$PEER_MAC" '
		{ n = $2; sub(/:$/, "", n); sub(/@.*/, "", n)
		  for (i = 3; i < NF; i++) if ($i == "link/ether") {
			if ($(i + 1) == mac) { print n; found = 1; exit }
			if (first == "") first = n
		  } }
		END { if (!found && first != "") print first }'
}

ipv6_setup() {	# ipv6_setup DUT: LOCAL_V6 on DUT, REMOTE_V6 on the peer
	local dut=$1 peer i
	peer=$(peer_ifname)
	[ -n "$peer" ] || { log "no Ethernet port in netns $NS"; return 1; }
	ip -6 addr replace "$LOCAL_V6/64" dev "$dut" nodad || return 1
	ip -n "$NS" -6 addr replace "$REMOTE_V6/64" dev "$peer" nodad || return 1
	for i in $(seq 1 30); do ping -6 -c 1 -W 1 "$REMOTE_V6" >/dev/null 2>&1 && return 0; done
	log "ping -6 $REMOTE_V6 fails"
	return 1
}

netconfig() {	# netconfig FILE DUT MODE [v6]: a net.config in NIPA's layout
	local f=$1 dut=$2 mode=$3 v6=${4:-}
	{
		echo "# written by lab/guest/selftests.sh ($mode mode)"
		echo "NETIF=$dut"
		echo "LOCAL_V4=$LOCAL_V4"
		echo "REMOTE_V4=$REMOTE_V4"
		if [ -n "$v6" ]; then
			echo "LOCAL_V6=$LOCAL_V6"
			echo "REMOTE_V6=$REMOTE_V6"
		fi
		echo "REMOTE_TYPE=$mode"
		if [ "$mode" = ssh ]; then echo "REMOTE_ARGS=root@$REMOTE_V4"
		else echo "REMOTE_ARGS=$NS"; fi
	} >"$f"
}

# ksft_console: run_kselftest.sh writes each test's output to /dev/stdout
# (4>>). virtme-ng points /dev/stdout and /dev/stderr at its virtio
# console ports, so the output would bypass our pipe (and the .ktap
# files): make them the usual links to the process's own descriptors;
# mount tracefs and debugfs, which the tests' kprobes and fault injection
# use.
ksft_console() {
	local f
	for f in stdin:0 stdout:1 stderr:2; do
		[ "$(readlink "/dev/${f%:*}")" = "/proc/self/fd/${f#*:}" ] ||
			ln -sfn "/proc/self/fd/${f#*:}" "/dev/${f%:*}"
	done
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
	return 0
}
