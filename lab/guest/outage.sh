#!/bin/bash
# Guest side of lab/bench/outage.py: for each NAME=KO, load it, bring the DUT up
# at MTU 1500 and run lab/guest/outage.py (lost packets, gap and receive
# window per MTU change) REPS times, then lab/guest/order.py (order > 0
# page allocations during jumbo RX after 1500 -> 9000). One line per
# result: "OUTAGE NAME {json}" / "ORDER NAME {json}".
#
#   lab/vm/vm.sh lab/guest/outage.sh NAME=KO...
#   env: LAN743X_OUTAGE_CHANGES (per repetition, default 20),
#        LAN743X_OUTAGE_REPS (default 5), LAN743X_OUTAGE_RATE (pkt/s, 1000)
set -u
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
N=${LAN743X_OUTAGE_CHANGES:-20}
REPS=${LAN743X_OUTAGE_REPS:-5}
RATE=${LAN743X_OUTAGE_RATE:-1000}

main() {
	local m name ko dut r rc=0
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	rmmod lan743x 2>/dev/null
	python3 "$HERE/outage.py" --setup
	peer_setup || exit 1
	ip -n "$NS" link set dev "$PEER" mtu 9000
	for m in "$@"; do
		name=${m%%=*} ko=${m#*=}
		load "$ko" || { echo "outage.sh: $name: module did not load" >&2; rc=1; continue; }
		dut=$(dut_setup) || { echo "outage.sh: $name: no interface" >&2; rc=1; continue; }
		ip link set dev "$dut" mtu 1500
		for r in $(seq 1 "$REPS"); do
			echo "OUTAGE $name $(python3 "$HERE/outage.py" "$dut" "$NS" "$N" "$RATE")"
		done
		echo "ORDER $name $(python3 "$HERE/order.py" "$dut" "$NS")"
		if dmesg | grep -qE 'WARNING|BUG|DMA-API'; then
			echo "outage.sh: $name: kernel complained:" >&2
			dmesg | grep -A20 -m1 -E 'WARNING|BUG|DMA-API' >&2
			rc=1
		fi
		ip link set dev "$dut" down mtu 1500
	done
	exit $rc
}

main "$@"
