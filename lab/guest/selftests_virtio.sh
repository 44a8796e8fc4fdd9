#!/bin/bash
# Guest side of tests/test_selftests_virtio.py: run drivers/net/hw tests of
# an installed kselftest tree with the guest's virtio-net port as NETIF,
# as netdev's CI runs them on its VMs, and the lan743x port (the other end
# of the emulated wire) moved into a network namespace as the remote end
# (REMOTE_TYPE=netns): the roles of lab/guest/selftests.sh, swapped.
# Runs inside the VM as root:
#
#   lab/vm/vm.sh lab/guest/selftests_virtio.sh --install DIR --out DIR \
#       KO TEST...
#
#   --install DIR  a kselftest install directory (make -C
#                  tools/testing/selftests TARGETS=drivers/net/hw install)
#   --out DIR      where ksft.ktap (run_kselftest.sh's output) and
#                  features.txt go
#   KO             the lan743x.ko that drives the peer's end
#   TEST           files of drivers/net/hw (coalesce.py ...), each run with
#                  run_kselftest.sh -t drivers/net/hw:TEST
#   env: LAN743X_PEER_MAC (the virtio-net port's MAC, set by vm.sh),
#        LAN743X_MODDIR, LAN743X_TEST_TIMEOUT (default 900 s a file)
#
# features.txt: NETIF's driver and the virtio feature bits the guest
# negotiated (/sys/bus/virtio/devices/*/features, bit 0 first).
# Exit status 0 when the tests ran (their results are the host's to judge).
set -u

INSTALL=
OUT=
while [ $# -gt 0 ]; do
	case "$1" in
	--install) INSTALL=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: selftests_virtio.sh --install DIR --out DIR KO TEST..." >&2; exit 2; }
KO=$1
shift
[ -x "$INSTALL/run_kselftest.sh" ] || { echo "selftests_virtio.sh: no $INSTALL/run_kselftest.sh" >&2; exit 2; }
[ -n "$OUT" ] && mkdir -p "$OUT" || { echo "selftests_virtio.sh: --out DIR needed" >&2; exit 2; }
NS=ksft-virtio-peer

. "$(dirname "$0")/lib.sh"

main() {
	local n virt="" lan i args=() t
	# /dev/stdout and the mounts the kselftests need (lib.sh)
	ksft_console
	export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

	for n in /sys/class/net/*; do
		[ "$(cat "$n/address" 2>/dev/null)" = "$PEER_MAC" ] && virt=$(basename "$n")
	done
	[ -n "$virt" ] || { log "no port with $PEER_MAC"; exit 1; }
	load "$KO" || { log "could not load $KO"; exit 1; }
	lan=""
	for i in $(seq 1 100); do lan=$(find_if lan743x) && break; sleep 0.1; done
	udevadm settle -t 10 2>/dev/null || sleep 2
	lan=$(find_if lan743x) || { log "no lan743x interface"; exit 1; }
	{
		echo "netif $virt driver $(basename "$(readlink -f "/sys/class/net/$virt/device/driver")")"
		echo "features $(cat "/sys/class/net/$virt/device/features")"
	} | tee "$OUT/features.txt"

	# the lan743x port is the remote end, in its namespace
	ip netns add "$NS"
	ip link set "$lan" netns "$NS"
	ip -n "$NS" link set lo up
	ip -n "$NS" addr add "$REMOTE_V4/24" dev "$lan"
	ip -n "$NS" link set "$lan" up
	ip addr flush dev "$virt"
	ip addr add "$LOCAL_V4/24" dev "$virt"
	ip link set "$virt" up
	for i in $(seq 1 100); do
		[ "$(ip netns exec "$NS" cat "/sys/class/net/$lan/carrier" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	for i in $(seq 1 30); do ping -c 1 -W 1 "$REMOTE_V4" >/dev/null 2>&1 && break; done
	ping -c 1 -W 2 "$REMOTE_V4" >/dev/null 2>&1 ||
		log "warning: $REMOTE_V4 ($lan in $NS) does not answer from $virt"
	log "NETIF=$virt (virtio-net), remote $lan in netns $NS"

	netconfig "$INSTALL/drivers/net/hw/net.config" "$virt" netns
	for t in "$@"; do args+=(-t "drivers/net/hw:$t"); done
	(cd "$INSTALL" && ./run_kselftest.sh -o "${LAN743X_TEST_TIMEOUT:-900}" "${args[@]}") 2>&1 |
		tee "$OUT/ksft.ktap"
	echo "# exit status ${PIPESTATUS[0]}" | tee -a "$OUT/ksft.ktap"
	rm -f "$INSTALL/drivers/net/hw/net.config"
}
main "$@"; exit 0
